/**
 * The web console, driven in Debian's Chromium through playwright-core against a real kapi: sign-in (one-time
 * link and token), the overview, a CRD's schema, a live list, editing with the server's errors inline, and a
 * read-only user who is offered no writes and gets none through. KAPI_CONSOLE_SCREENSHOTS=<dir> keeps the
 * screenshots (the README's come from here).
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startTestServer, type TestServer } from './harness.js';

const CHROMIUM = process.env.KAPI_CHROMIUM ?? '/usr/bin/chromium';
const CRONTABS = '/apis/stable.example.com/v1/namespaces/default/crontabs';
const VIEWER_TOKEN = 'viewer-token-0123456789';

describe('the web console', () => {
  let s: TestServer;
  let browser: Browser;
  let shots: string;

  const newPage = async (): Promise<Page> => {
    const page = await browser.newPage({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 800 } });
    if (process.env.KAPI_CONSOLE_DEBUG) page.on('console', (m) => console.log('page:', m.text()));
    if (process.env.KAPI_CONSOLE_DEBUG) page.on('pageerror', (e) => console.log('pageerror:', e.message));
    if (process.env.KAPI_CONSOLE_DEBUG) page.on('requestfailed', (r) => console.log('failed:', r.url(), r.failure()?.errorText));
    if (process.env.KAPI_CONSOLE_DEBUG) page.on('response', (r) => console.log('response:', r.status(), r.url()));
    page.setDefaultTimeout(15_000);
    return page;
  };
  const shot = (page: Page, name: string) => page.screenshot({ path: join(shots, `${name}.png`) });

  before(async () => {
    const dir = join(process.cwd(), '.cache', 'console-test');
    mkdirSync(dir, { recursive: true });
    const tokens = join(dir, 'tokens.csv');
    writeFileSync(tokens, `${VIEWER_TOKEN},viewer,viewer-uid,\n`);
    shots = process.env.KAPI_CONSOLE_SCREENSHOTS ?? join(dir, 'screenshots');
    mkdirSync(shots, { recursive: true });
    s = await startTestServer({ console: true, tokenAuthFile: tokens });
    const crd = await s.kubectl(['apply', '-f', 'examples/crontab-crd.yaml']);
    assert.equal(crd.code, 0, crd.stderr);
    const established = await s.kubectl(['wait', '--for=condition=Established', 'crd/crontabs.stable.example.com', '--timeout=20s']);
    assert.equal(established.code, 0, established.stderr);
    // The view role takes in a CRD's resources as its authors grant them: through an aggregated ClusterRole.
    const role = await s.kubectl(['apply', '-f', 'examples/crontab-view.yaml']);
    assert.equal(role.code, 0, role.stderr);
    const bind = await s.kubectl(['create', 'clusterrolebinding', 'viewer-view', '--clusterrole=view', '--user=viewer']);
    assert.equal(bind.code, 0, bind.stderr);
    const created = await s.kubectl(['apply', '-f', 'examples/my-crontab.yaml']);
    assert.equal(created.code, 0, created.stderr);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  });
  after(async () => {
    await browser?.close();
    await s?.stop();
  });

  it('answers with security headers, and counts a session only with its CSRF header from its own origin', async () => {
    const page = await s.request('GET', '/console/');
    assert.equal(page.status, 200);
    const csp = String(page.headers['content-security-policy']);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.equal(page.headers['x-frame-options'], 'DENY');
    assert.equal(page.headers['x-content-type-options'], 'nosniff');
    assert.equal(page.headers['referrer-policy'], 'no-referrer');
    assert.equal(page.headers['cache-control'], 'no-store');

    const signIn = (body: unknown, headers: Record<string, string> = {}) =>
      fetchJson(s, 'POST', '/console/session', { 'content-type': 'application/json', ...headers }, JSON.stringify(body));
    const wrong = await signIn({ token: 'not-a-token' });
    assert.equal(wrong.status, 401);
    assert.equal((await signIn({ token: VIEWER_TOKEN }, { 'sec-fetch-site': 'cross-site' })).status, 403, 'no sign-in from another site');
    assert.equal((await fetchJson(s, 'POST', '/console/session', { 'content-type': 'text/plain' }, JSON.stringify({ token: VIEWER_TOKEN }))).status, 415);
    const ok = await signIn({ token: VIEWER_TOKEN });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.json.user, 'viewer');
    const cookie = String(ok.headers['set-cookie']).split(';')[0];
    assert.match(String(ok.headers['set-cookie']), /HttpOnly; SameSite=Strict/);
    assert.match(String(ok.headers['set-cookie']), /^__Host-kapi-console=[\w-]+; Path=\/; Secure/);
    const csrf = ok.json.csrf as string;

    const crontabs = (headers: Record<string, string>) => fetchJson(s, 'GET', CRONTABS, headers);
    assert.equal((await crontabs({ cookie })).status, 403, 'the cookie alone is no credential (anonymous)');
    assert.equal((await crontabs({ cookie, 'x-kapi-csrf': 'guess' })).status, 401, 'a console request without its session: sign in again');
    assert.equal((await crontabs({ cookie, 'x-kapi-csrf': csrf, 'sec-fetch-site': 'cross-site' })).status, 401);
    assert.equal((await crontabs({ cookie: `${cookie}; ${cookie}`, 'x-kapi-csrf': csrf })).status, 401, 'a cookie sent twice counts as none');
    const listed = await crontabs({ cookie, 'x-kapi-csrf': csrf });
    assert.equal(listed.status, 200, listed.text);
    assert.equal(listed.headers['cache-control'], 'no-store', 'what a session reads is not kept in the browser\'s cache');
    const write = await fetchJson(s, 'DELETE', `${CRONTABS}/my-new-cron-object`, { cookie, 'x-kapi-csrf': csrf });
    assert.equal(write.status, 403, 'the viewer\'s own rights, no more');

    // The one-time link: good once.
    const link = s.kapi.consoleLink();
    assert.ok(link);
    const code = /#code=([\w-]+)$/.exec(link)![1];
    assert.equal((await signIn({ code })).status, 200);
    const again = await signIn({ code });
    assert.equal(again.status, 401);
    assert.equal(again.json.message, 'this sign-in link was used already or has expired');

    const out = await fetchJson(s, 'DELETE', '/console/session', { cookie, 'x-kapi-csrf': csrf });
    assert.equal(out.status, 200);
    assert.equal((await crontabs({ cookie, 'x-kapi-csrf': csrf })).status, 401, 'signed out');
  });

  it('signs the admin in with the one-time link; shows the CRD, its schema, a live list, and edits with the server\'s errors inline', async () => {
    const page = await newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(s.kapi.consoleLink()!);
    await page.getByText('Signed in as').waitFor();
    assert.equal(new URL(page.url()).hash, '#/', 'the code left the address bar');
    const crdRow = page.getByRole('row', { name: /crontabs\.stable\.example\.com/ });
    await crdRow.waitFor();
    assert.match(await crdRow.innerText(), /Established=True/);
    assert.match(await crdRow.innerText(), /NamesAccepted=True/);
    await shot(page, 'overview');

    await page.goto(`${s.kapi.url}/console/#/schema/stable.example.com/v1/crontabs`);
    await page.getByText('cronSpec').waitFor();
    assert.ok(await page.getByText('The schedule, in cron syntax.').isVisible());
    assert.ok(await page.getByText('maximum 10').isVisible());
    await shot(page, 'schema');

    await page.goto(`${s.kapi.url}/console/#/r/stable.example.com/v1/crontabs?ns=default`);
    await page.getByRole('status').filter({ hasText: 'live' }).waitFor();
    const created = await s.kubectl(['create', '-f', '-'], { input: JSON.stringify({ apiVersion: 'stable.example.com/v1', kind: 'CronTab', metadata: { name: 'from-kubectl', namespace: 'default' }, spec: { cronSpec: '* * * * *', image: 'x' } }) });
    assert.equal(created.code, 0, created.stderr);
    const row = page.locator('tr[data-name="from-kubectl"]');
    await row.waitFor();
    assert.match((await row.getAttribute('class')) ?? '', /mark-added/, 'a new row is shown as added');
    await shot(page, 'list');
    // The system's dark scheme: the page follows it.
    await page.emulateMedia({ colorScheme: 'dark' });
    const background = await page.evaluate('getComputedStyle(document.body).backgroundColor');
    assert.equal(background, 'rgb(13, 17, 23)');
    await shot(page, 'list-dark');
    await page.emulateMedia({ colorScheme: 'light' });

    await page.goto(`${s.kapi.url}/console/#/edit/stable.example.com/v1/crontabs/default/from-kubectl`);
    const editor = page.locator('.cm-content');
    await editor.waitFor();
    await page.getByText('from-kubectl', { exact: false }).first().waitFor();
    await editor.click();
    await page.keyboard.press('Control+End');
    // Completion from the schema: spec's fields, with their types.
    await page.keyboard.type('\n  rep');
    await page.locator('.cm-tooltip-autocomplete').getByText('replicas').waitFor();
    await page.keyboard.press('Escape');
    await page.keyboard.type('licas: 50');
    // The server's dry run, on the line it concerns.
    const marked = page.locator('.cm-lintRange-error');
    await marked.first().waitFor();
    assert.match(await marked.first().innerText(), /replicas/);
    await page.getByRole('button', { name: 'Review changes' }).click();
    await page.getByText('spec.replicas in body should be less than or equal to 10').first().waitFor();
    await shot(page, 'edit-error');
    assert.equal((await s.request('GET', `${CRONTABS}/from-kubectl`)).json.spec.replicas, undefined, 'nothing written');

    await editor.click();
    await page.keyboard.press('Control+End');
    await page.keyboard.press('Backspace');
    await page.getByRole('button', { name: 'Review changes' }).click();
    await page.getByRole('region', { name: 'Changes' }).waitFor().catch(async (e: Error) => {
      await shot(page, 'failed-review');
      throw e;
    });
    assert.match(await page.getByRole('region', { name: 'Changes' }).innerText(), /\+ {2,}replicas: 5/);
    await shot(page, 'edit-review');
    await page.getByRole('button', { name: 'Apply', exact: true }).click();
    await page.getByRole('tab', { name: 'Summary' }).waitFor();
    const stored = (await s.request('GET', `${CRONTABS}/from-kubectl`)).json;
    assert.equal(stored.spec.replicas, 5);
    assert.ok(stored.metadata.managedFields.some((m: any) => m.manager === 'kapi-console' && m.operation === 'Apply'));

    // Dependents: a ConfigMap it owns, past the first page of ConfigMaps (the search reads every page).
    for (let i = 0; i < 600; i += 50) {
      await Promise.all(Array.from({ length: 50 }, (_, j) => s.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: `filler-${String(i + j).padStart(3, '0')}` } } })));
    }
    const owner = { apiVersion: 'stable.example.com/v1', kind: 'CronTab', name: 'from-kubectl', uid: stored.metadata.uid };
    assert.equal((await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'zz-dependent', ownerReferences: [owner] } } })).status, 201);
    await page.getByRole('button', { name: 'Find dependents' }).click();
    await page.getByRole('link', { name: 'zz-dependent' }).waitFor();
    assert.equal(await page.getByText('Not searched through').count(), 0);
    assert.deepEqual(errors, []);
    await page.close();
  });

  it('offers a read-only user no writes, and lets none through', async () => {
    const page = await newPage();
    await page.goto(`${s.kapi.url}/console/`);
    await page.getByLabel('Bearer token').waitFor().catch(async (e: Error) => {
      await shot(page, 'failed-signin');
      throw e;
    });
    await page.getByLabel('Bearer token').fill(VIEWER_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('Signed in as viewer').waitFor();
    // What the viewer may do, as the API server lists it (SelfSubjectRulesReview): reads of the view role, no writes.
    await page.getByRole('link', { name: 'Your rights' }).click();
    const resourceRules = page.getByRole('region', { name: 'Resources in default' });
    await resourceRules.getByRole('row').filter({ hasText: 'configmaps' }).first().waitFor();
    const rows = (await resourceRules.getByRole('row').allInnerTexts()).map((r) => r.split('\t'));
    const configMapRows = rows.filter((cells) => cells[2]?.split(', ').includes('configmaps'));
    assert.ok(configMapRows.some((cells) => cells[0] === 'get, list, watch'), JSON.stringify(configMapRows));
    assert.ok(configMapRows.every((cells) => !/create|update|patch|delete|\*/.test(cells[0])), JSON.stringify(configMapRows));
    const urlRules = await page.getByRole('region', { name: 'Other URLs' }).getByRole('row').allInnerTexts();
    assert.ok(urlRules.some((r) => r.includes('/healthz')), urlRules.join('\n'));
    await shot(page, 'rights');
    await page.goto(`${s.kapi.url}/console/#/r/stable.example.com/v1/crontabs?ns=default`);
    await page.getByRole('status').filter({ hasText: 'live' }).waitFor();
    assert.equal(await page.getByRole('link', { name: 'Create' }).count(), 0);
    await page.goto(`${s.kapi.url}/console/#/o/stable.example.com/v1/crontabs/default/my-new-cron-object`);
    await page.getByRole('tab', { name: 'Summary' }).waitFor();
    await page.getByText('Managed fields').waitFor();
    // The tabs by keyboard: the YAML view shows the object.
    await page.getByRole('tab', { name: 'Summary' }).focus();
    await page.keyboard.press('ArrowRight');
    await page.getByRole('tabpanel').getByText('cronSpec').waitFor();
    assert.equal(await page.getByRole('tab', { name: 'YAML' }).getAttribute('aria-selected'), 'true');
    await page.keyboard.press('ArrowLeft');
    assert.equal(await page.getByRole('link', { name: 'Edit' }).count(), 0);
    assert.equal(await page.getByRole('button', { name: 'Delete' }).count(), 0);
    await shot(page, 'read-only');
    await page.goto(`${s.kapi.url}/console/#/edit/stable.example.com/v1/crontabs/default/my-new-cron-object`);
    await page.getByText('You may not change').waitFor();
    // A write sent from the page with the session anyway: the API's 403, as the viewer.
    const status = await page.evaluate(async (path) => {
      const me = (await (await fetch('/console/session')).json()) as { csrf: string };
      const r = await fetch(path, { method: 'DELETE', headers: { 'x-kapi-csrf': me.csrf } });
      return [r.status, ((await r.json()) as { message: string }).message];
    }, `${CRONTABS}/my-new-cron-object`);
    assert.deepEqual(status, [403, 'crontabs.stable.example.com "my-new-cron-object" is forbidden: User "viewer" cannot delete resource "crontabs" in API group "stable.example.com" in the namespace "default"']);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Bearer token').waitFor();
    await page.close();
  });

  it('keeps up with other clients and reviews every write: a new CRD, a changed object, typed errors on their lines, a forced apply', async () => {
    const page = await newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    // A one-time link pasted into a tab already open at the sign-in page.
    await page.goto(`${s.kapi.url}/console/`);
    await page.getByLabel('Bearer token').waitFor();
    await page.goto(s.kapi.consoleLink()!);
    await page.getByText('Signed in as').waitFor();
    assert.equal(new URL(page.url()).hash, '#/');

    // A CRD another client makes: in the overview and the navigation, without a reload.
    await page.getByRole('row', { name: /crontabs\.stable\.example\.com/ }).waitFor();
    const widgets = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.shop.example.com' },
      spec: {
        group: 'shop.example.com',
        scope: 'Namespaced',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } } } }],
      },
    };
    const crd = await s.kubectl(['apply', '-f', '-'], { input: JSON.stringify(widgets) });
    assert.equal(crd.code, 0, crd.stderr);
    await page.getByRole('row', { name: /widgets\.shop\.example\.com/ }).waitFor();
    await page.getByRole('navigation', { name: 'Resources' }).getByRole('link', { name: 'Widget', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'live' }).waitFor();
    assert.match(await page.getByRole('status').filter({ hasText: 'live' }).innerText(), /^0 objects, live$/);

    // An object kubectl changes: its page shows the change as it happens.
    const patched = await s.kubectl(['patch', 'crontab', 'my-new-cron-object', '-n', 'default', '--type', 'merge', '-p', '{"spec":{"replicas":2}}']);
    assert.equal(patched.code, 0, patched.stderr);
    await page.goto(`${s.kapi.url}/console/#/o/stable.example.com/v1/crontabs/default/my-new-cron-object`);
    await page.getByRole('tab', { name: 'Summary' }).waitFor();
    const labelled = await s.kubectl(['label', 'crontab', 'my-new-cron-object', '-n', 'default', 'tier=gold']);
    assert.equal(labelled.code, 0, labelled.stderr);
    await page.getByText('tier=gold').waitFor();

    // Server-side apply's typed error, on the line of its field.
    await page.getByRole('link', { name: 'Edit' }).click();
    const editor = page.locator('.cm-content');
    await editor.waitFor();
    await page.getByText('replicas: 2').waitFor();
    await editor.click();
    // The text ends with a newline: past it, and past the 2.
    await page.keyboard.press('Control+End');
    await page.keyboard.press('Backspace');
    await page.keyboard.press('Backspace');
    await page.keyboard.type('many');
    await page.getByRole('button', { name: 'Review changes' }).click();
    await page.getByText('expected numeric').first().waitFor();
    assert.match(await page.locator('.cm-lintRange-error').first().innerText(), /replicas: many/);
    await shot(page, 'edit-typed-error');

    // kubectl's patch owns spec.replicas: the console's apply conflicts, and taking the field over is reviewed first.
    await editor.click();
    await page.keyboard.press('Control+End');
    for (let i = 0; i < 4; i++) await page.keyboard.press('Backspace');
    await page.keyboard.type('3');
    await page.getByRole('button', { name: 'Review changes' }).click();
    await page
      .getByRole('button', { name: 'Review taking the fields over (force)' })
      .click()
      .catch(async (e: Error) => {
        await shot(page, 'failed-conflict');
        throw e;
      });
    const changes = page.getByRole('region', { name: 'Changes' });
    await changes.waitFor();
    assert.match(await changes.innerText(), /\+ {2,}replicas: 3/);
    assert.equal((await s.request('GET', `${CRONTABS}/my-new-cron-object`)).json.spec.replicas, 2, 'a review writes nothing');
    await page.getByRole('button', { name: 'Apply, taking the fields over (force)' }).click();
    await page.getByRole('status').filter({ hasText: 'Applied.' }).waitFor();
    const stored = (await s.request('GET', `${CRONTABS}/my-new-cron-object`)).json;
    assert.equal(stored.spec.replicas, 3);
    assert.ok(stored.metadata.managedFields.some((m: any) => m.manager === 'kapi-console' && m.fieldsV1?.['f:spec']?.['f:replicas']));

    // Edits not applied: leaving asks first, and staying keeps them.
    await page.getByRole('link', { name: 'Edit' }).click();
    await editor.waitFor();
    await page.getByText('replicas: 3').waitFor();
    await editor.click();
    await page.keyboard.press('Control+End');
    await page.keyboard.press('Backspace');
    await page.keyboard.type('0');
    const asked = new Promise<string>((resolve) => page.once('dialog', (d) => void d.dismiss().then(() => resolve(d.message()))));
    await page.getByRole('link', { name: 'Back to the object' }).click();
    assert.equal(await asked, 'Leave the editor? Your edits are not applied.');
    await page.waitForURL(/#\/edit\//);
    await page.getByText('replicas: 30').waitFor();
    // Another client's CRD change has discovery read again: the editor keeps the edits.
    const removed = await s.kubectl(['delete', 'crd', 'widgets.shop.example.com']);
    assert.equal(removed.code, 0, removed.stderr);
    await page.getByRole('navigation', { name: 'Resources' }).getByRole('link', { name: 'Widget', exact: true }).waitFor({ state: 'detached' });
    assert.ok(await page.getByText('replicas: 30').isVisible(), 'the edit is still in the editor');
    assert.deepEqual(errors, []);
    await page.close();
  });
});

/** A request with the given headers only (no client certificate, no token): what a browser would send. */
async function fetchJson(s: TestServer, method: string, path: string, headers: Record<string, string>, body?: string) {
  const { request } = await import('node:https');
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string; json: any }>((resolve, reject) => {
    const req = request(`${s.kapi.url}${path}`, { method, headers, ca: s.kapi.caCertPem }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: any;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
    });
    req.setTimeout(10_000, () => req.destroy(new Error(`${method} ${path}: no answer in 10 s`)));
    req.on('error', reject);
    if (body) req.write(body);
    req.end();
  });
}

