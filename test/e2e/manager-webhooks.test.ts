/**
 * CRD mode's webhooks: a resource defined in TypeScript served as a plain CRD by an API server that knows nothing
 * of its code, its strategy hooks run as the Manager's admission webhooks and its conversion as the CRD's
 * conversion webhook, over HTTPS with a certificate the API server verifies (caBundle).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { defineResource, fieldError, Manager, StatusError, t, version, type TypeOf, type WebhookServerOptions } from 'kapi/sdk';
import { startTestServer, type TestServer } from 'kapi/testing';
import { freePort } from '../../bench/lib/reference-server.js';

const GROUP = 'hooks.example.com';

/** What the manager answers to a review, as far as the tests read it. */
interface Review {
  response: { allowed: boolean; patch: string; result: { status: string; message?: string }; convertedObjects: Array<{ spec: unknown }> };
}


interface ShipInternal {
  apiVersion?: string;
  kind?: string;
  metadata: { name?: string; namespace?: string; labels?: Record<string, string> };
  crew: number;
  motto?: string;
}
const v1 = version('v1', {
  spec: t.object({ crew: t.integer(), motto: t.optional(t.string()) }),
  toInternal: (o): ShipInternal => ({ metadata: o.metadata, crew: o.spec.crew, motto: o.spec.motto }),
  fromInternal: (i: ShipInternal) => ({ metadata: i.metadata, spec: { crew: i.crew, ...(i.motto === undefined ? {} : { motto: i.motto }) } }),
});
const v2 = version('v2', {
  spec: t.object({ sailors: t.integer(), motto: t.optional(t.string()) }),
  storage: true,
  toInternal: (o): ShipInternal => ({ metadata: o.metadata, crew: o.spec.sailors, motto: o.spec.motto }),
  fromInternal: (i: ShipInternal) => ({ metadata: i.metadata, spec: { sailors: i.crew, ...(i.motto === undefined ? {} : { motto: i.motto }) } }),
});
type ShipV1 = TypeOf<typeof v1>;
const Ship = defineResource<ShipInternal>({
  group: GROUP,
  kind: 'Ship',
  versions: [v1, v2],
  strategy: {
    defaulting: (obj) => {
      const spec = obj.spec as { motto?: string };
      spec.motto ??= 'fair winds';
    },
    prepareForCreate: (o) => {
      o.metadata.labels = { ...o.metadata.labels, launched: 'yes' };
    },
    validate: (o) => (o.crew > 100 ? [fieldError.invalid(o.apiVersion === `${GROUP}/v2` ? 'spec.sailors' : 'spec.crew', o.crew, 'must be no more than 100')] : []),
    validateUpdate: (o, old) => (o.motto !== old.motto ? [fieldError.invalid('spec.motto', o.motto, 'field is immutable')] : []),
  },
});

describe('kapi/sdk: CRD mode\'s admission and conversion webhooks', () => {
  let s: TestServer;
  let m: Manager;
  let dir: string;
  let webhookServer: WebhookServerOptions;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kapi-webhooks-'));
    s = await startTestServer();
    const port = await freePort();
    const base = `https://127.0.0.1:${port}`;
    // The CRD and the webhook configurations as the cluster gets them (kapi generate manifests), without a
    // caBundle: the manager makes its certificate and writes its CA into them.
    const crd = structuredClone(Ship.crd) as Record<string, unknown> & { spec: Record<string, unknown> };
    crd.spec.conversion = { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: `${base}/convert` } } };
    const admin = s.client();
    await admin.resource({ group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions' }).create(undefined, crd as never);
    const rules = [{ apiGroups: [GROUP], apiVersions: ['*'], resources: ['ships'], operations: ['CREATE', 'UPDATE'] }];
    const hook = (name: string, path: string) => ({ name, rules, clientConfig: { url: `${base}${path}` }, sideEffects: 'None', admissionReviewVersions: ['v1'], failurePolicy: 'Fail' });
    await admin.resource({ group: 'admissionregistration.k8s.io', version: 'v1', resource: 'mutatingwebhookconfigurations' }).create(undefined, { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', metadata: { name: 'ships' }, webhooks: [hook('mutate.ships.hooks.example.com', '/mutate-hooks-example-com-ship')] } as never);
    await admin.resource({ group: 'admissionregistration.k8s.io', version: 'v1', resource: 'validatingwebhookconfigurations' }).create(undefined, { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'ships' }, webhooks: [hook('validate.ships.hooks.example.com', '/validate-hooks-example-com-ship')] } as never);
    webhookServer = {
      resources: [Ship],
      port,
      host: '127.0.0.1',
      selfSigned: {
        service: { namespace: 'default', name: 'ship-webhooks' },
        hosts: ['127.0.0.1'],
        mutatingWebhookConfigurations: ['ships'],
        validatingWebhookConfigurations: ['ships'],
        conversionCrds: ['ships.hooks.example.com'],
      },
    };
    m = new Manager(s.client('ship-manager'), { webhookServer });
    await m.start();
  });
  after(async () => {
    await m?.stop();
    await s?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs the hooks on writes and converts between versions, the server knowing only the CRD', async () => {
    const ships = s.client().resource<ShipV1>({ group: GROUP, version: 'v1', resource: 'ships' });
    // The CRD is served once a create goes through (establishing, then the webhooks' configurations).
    let made: ShipV1 | undefined;
    for (let i = 0; i < 100 && !made; i++) {
      made = await ships.create('default', { apiVersion: `${GROUP}/v1`, kind: 'Ship', metadata: { name: 'argo' }, spec: { crew: 50 } }).catch(() => undefined);
      if (!made) await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(made, 'created');
    assert.equal(made.spec.motto, 'fair winds', 'defaulting, by the mutating webhook');
    assert.equal(made.metadata.labels?.launched, 'yes', 'prepareForCreate, by the mutating webhook');
    // Stored as v2 (the webhook converted it), read back as either.
    const asV2 = await s.client().resource({ group: GROUP, version: 'v2', resource: 'ships' }).get('default', 'argo');
    assert.deepEqual(asV2.spec, { sailors: 50, motto: 'fair winds' });
    assert.deepEqual((await ships.get('default', 'argo')).spec, { crew: 50, motto: 'fair winds' });

    await assert.rejects(ships.create('default', { apiVersion: `${GROUP}/v1`, kind: 'Ship', metadata: { name: 'ark' }, spec: { crew: 200 } }), (err: unknown) => {
      assert.ok(err instanceof StatusError);
      assert.equal(err.code, 422);
      assert.equal(err.message, 'admission webhook "validate.ships.hooks.example.com" denied the request: Ship.hooks.example.com "ark" is invalid: spec.crew: Invalid value: 200: must be no more than 100');
      return true;
    });
    const current = await ships.get('default', 'argo');
    await assert.rejects(ships.update('default', 'argo', { ...current, spec: { ...current.spec, motto: 'full speed' } }), /denied the request: Ship\.hooks\.example\.com "argo" is invalid: spec\.motto: Invalid value: "full speed": field is immutable/);
    const updated = await ships.update('default', 'argo', { ...current, spec: { ...current.spec, crew: 60 } });
    assert.equal(updated.spec.crew, 60);
  });

  it('refuses versions it does not know, keeps int64 exact, and answers its reviews over its own CA', async () => {
    const secret = await s.client().resource({ group: '', version: 'v1', resource: 'secrets' }).get('default', 'ship-webhooks-cert');
    const ca = Buffer.from((secret.data as Record<string, string>)['ca.crt'], 'base64').toString();
    const post = (path: string, body: string) =>
      new Promise<{ status: number; json: Review }>((resolve, reject) => {
        const req = httpsRequest(`https://127.0.0.1:${webhookServer.port}${path}`, { method: 'POST', ca, headers: { 'content-type': 'application/json' } }, (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, json: (text.startsWith('{') ? JSON.parse(text) : undefined) as Review }));
        });
        req.on('error', reject);
        req.end(body);
      });
    const ship = { apiVersion: `${GROUP}/v1`, kind: 'Ship', metadata: { name: 'x', namespace: 'default' }, spec: { crew: 1 } };
    const conversion = (desiredAPIVersion: string, objects: unknown[]) => JSON.stringify({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request: { uid: 'u1', desiredAPIVersion, objects } });
    const toV3 = await post('/convert', conversion(`${GROUP}/v3`, [ship]));
    assert.deepEqual(toV3.json.response.result, { metadata: {}, status: 'Failure', message: 'no kind "Ship" is registered for version "hooks.example.com/v3"' });
    const fromV3 = await post('/convert', conversion(`${GROUP}/v1`, [{ ...ship, apiVersion: `${GROUP}/v3` }]));
    assert.equal(fromV3.json.response.result.status, 'Failure');
    const toV2 = await post('/convert', conversion(`${GROUP}/v2`, [ship]));
    assert.deepEqual(toV2.json.response.convertedObjects[0].spec, { sailors: 1 });
    // The patch says what the hooks changed, member by member, as controller-runtime's webhooks answer; the rest
    // (2^53 + 1 here, and a list) is left as sent.
    const review = `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u2","operation":"CREATE","object":{"apiVersion":"${GROUP}/v1","kind":"Ship","metadata":{"name":"big","finalizers":["a/b"]},"spec":{"crew":9007199254740993}}}}`;
    const mutated = await post('/mutate-hooks-example-com-ship', review);
    assert.equal(mutated.json.response.allowed, true);
    assert.deepEqual(JSON.parse(Buffer.from(mutated.json.response.patch, 'base64').toString()), [
      { op: 'add', path: '/metadata/labels', value: { launched: 'yes' } },
      { op: 'add', path: '/spec/motto', value: 'fair winds' },
    ]);
    const labelled = await post('/mutate-hooks-example-com-ship', review.replace('"finalizers"', '"labels":{"a/b~c":"1"},"finalizers"'));
    assert.deepEqual(JSON.parse(Buffer.from(labelled.json.response.patch, 'base64').toString()), [
      { op: 'add', path: '/metadata/labels/launched', value: 'yes' },
      { op: 'add', path: '/spec/motto', value: 'fair winds' },
    ]);
    const unknown = await post('/validate-hooks-example-com-ship', review.replace(`${GROUP}/v1`, `${GROUP}/v9`));
    assert.deepEqual([unknown.json.response.allowed, (unknown.json.response as unknown as { status: { message: string } }).status.message], [false, 'no kind "Ship" is registered for version "hooks.example.com/v9"']);
    assert.equal((await post('/nope', '{}')).status, 404);
  });

  it('keeps its certificate in a Secret that another replica reuses', async () => {
    const secrets = s.client().resource({ group: '', version: 'v1', resource: 'secrets' });
    const secret = await secrets.get('default', 'ship-webhooks-cert');
    assert.equal(secret.type, 'kubernetes.io/tls');
    assert.deepEqual(Object.keys(secret.data as object).sort(), ['ca.crt', 'ca.key', 'tls.crt', 'tls.key']);
    const caBundle = (secret.data as Record<string, string>)['ca.crt'];
    const hooks = await s.client().resource({ group: 'admissionregistration.k8s.io', version: 'v1', resource: 'validatingwebhookconfigurations' }).get(undefined, 'ships');
    assert.equal((hooks.webhooks as Array<{ clientConfig: { caBundle: string } }>)[0].clientConfig.caBundle, caBundle);
    const replica = new Manager(s.client('ship-manager-2'), { webhookServer: { ...webhookServer, port: await freePort() } });
    await replica.start();
    try {
      assert.equal((await secrets.get('default', 'ship-webhooks-cert')).metadata.resourceVersion, secret.metadata.resourceVersion, 'the Secret is reused');
    } finally {
      await replica.stop();
    }
  });
});
