/**
 * The web console under load, in Debian's Chromium (playwright-core): a list of 10,000 objects (2,000 with
 * --quick) listed and kept live, scrolled from top to bottom, then 1,000 watch events a second for 5 s. Prints the
 * time to the live list, the page's frame times while scrolling and during the events (a frame over 50 ms is a
 * freeze a user notices), its long tasks, and how far behind the last event the page was. Skips without Chromium.
 */
import { existsSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { chromium } from 'playwright-core';
import { BenchClient, line, load } from './lib/client.js';
import { crontab, crontabCrd, crontabsPath, GROUP } from './lib/crontab.js';
import { startServer } from './lib/server-process.js';

const quick = process.argv.includes('--quick');
const OBJECTS = quick ? 2_000 : 10_000;
const EVENTS_PER_SECOND = 1_000;
const EVENT_SECONDS = quick ? 3 : 5;
const CHROMIUM = process.env.KAPI_CHROMIUM ?? '/usr/bin/chromium';
const NS = 'console-bench';

if (!existsSync(CHROMIUM)) {
  console.log(`console: skipped (no Chromium at ${CHROMIUM}; apt-get install chromium)`);
  process.exit(0);
}

const server = await startServer();
const client = new BenchClient(server.url, server.token, server.ca, 4);
const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
try {
  await client.expect('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', 201, crontabCrd());
  await client.expect('POST', '/api/v1/namespaces', 201, { metadata: { name: NS } });
  for (let i = 0; i < 100; i++) {
    if ((await client.request('GET', crontabsPath(NS))).status === 200) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  await load(16, OBJECTS, (i) => client.expect('POST', crontabsPath(NS), 201, crontab(`o-${i}`, NS, i)).then(() => undefined));

  const page = await browser.newPage({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 900 } });
  await page.goto(`${server.url}/console/`);
  await page.getByLabel('Bearer token').fill(server.token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByText('Signed in as').waitFor();
  const t0 = performance.now();
  await page.goto(`${server.url}/console/#/r/${GROUP}/v1/crontabs?ns=${NS}`);
  await page.getByRole('status').filter({ hasText: `${OBJECTS} objects, live` }).waitFor({ timeout: 120_000 });
  line(`console: ${OBJECTS} objects listed, live`, `${(performance.now() - t0).toFixed(0)} ms`);

  // Frame times, as the page sees them: the gaps between animation frames, and the long tasks.
  // Page-side code as text: this file is compiled without the DOM's types.
  await page.evaluate(`(() => {
    window.gaps = [];
    window.longTasks = [];
    let last = performance.now();
    const tick = (t) => {
      window.gaps.push(t - last);
      last = t;
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.longTasks.push(e.duration);
    }).observe({ entryTypes: ['longtask'] });
  })()`);
  const take = () =>
    page.evaluate(`(() => {
      const out = { gaps: window.gaps.slice(), longTasks: window.longTasks.slice() };
      window.gaps.length = 0;
      window.longTasks.length = 0;
      return out;
    })()`) as Promise<{ gaps: number[]; longTasks: number[] }>;
  const report = (what: string, m: { gaps: number[]; longTasks: number[] }) => {
    const g = m.gaps.slice(1).sort((a, b) => a - b);
    const at = (q: number) => g[Math.min(g.length - 1, Math.floor(q * g.length))] ?? 0;
    line(
      `console: ${what}`,
      `frames p50 ${at(0.5).toFixed(1)} ms, p99 ${at(0.99).toFixed(1)} ms, max ${(g[g.length - 1] ?? 0).toFixed(0)} ms; ${g.filter((x) => x > 50).length} over 50 ms; long tasks ${m.longTasks.length} (${m.longTasks.reduce((a, b) => a + b, 0).toFixed(0)} ms)`,
    );
  };
  await take();
  // Scroll from top to bottom in 60 steps, a frame apart.
  await page.evaluate(`(async () => {
    const v = document.querySelector('.viewport');
    for (let i = 1; i <= 60; i++) {
      v.scrollTop = (v.scrollHeight * i) / 60;
      await new Promise((r) => requestAnimationFrame(r));
      await new Promise((r) => requestAnimationFrame(r));
    }
  })()`);
  report(`scrolling ${OBJECTS} rows top to bottom`, await take());
  const bottom = await page.locator('tr[data-name]').last().getAttribute('data-name');
  line('console: last row drawn at the bottom', String(bottom));

  // 1,000 changes a second, as merge patches of spec.replicas spread over the objects.
  const total = EVENTS_PER_SECOND * EVENT_SECONDS;
  const started = performance.now();
  let sent = 0;
  await load(32, total, async (i) => {
    const due = started + (i * 1000) / EVENTS_PER_SECOND;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    await client.expect('PATCH', `${crontabsPath(NS)}/o-${i % OBJECTS}`, 200, { metadata: { annotations: { seq: String(i) } } }, { 'content-type': 'application/merge-patch+json' });
    sent++;
  });
  const rate = sent / ((performance.now() - started) / 1000);
  // The page has caught up when the last patched object's row is the live one: its last change is in the list.
  const lastName = `o-${(total - 1) % OBJECTS}`;
  const caughtUp = performance.now();
  await page.evaluate('new Promise((r) => setTimeout(r, 0))');
  report(`${total} watch events at ${rate.toFixed(0)}/s`, await take());
  line('console: page answered after the events', `${(performance.now() - caughtUp).toFixed(0)} ms`);
  // The events reached the page: the rows in view were marked changed.
  await page.evaluate(`document.querySelector('.viewport').scrollTop = 0`);
  await page.locator('tr[data-name="o-0"]').waitFor();
  const marked = await page.locator('tr.mark-modified').count();
  line('console: rows in view marked changed', `${marked} of ${await page.locator('tr[data-name]').count()} (${lastName} last changed)`);
  line('console: server RSS', `${server.rssMb().toFixed(0)} MB`);
} finally {
  await browser.close();
  client.close();
  await server.stop();
  server.cleanup();
}
