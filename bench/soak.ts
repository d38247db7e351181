/**
 * The server under attack: a plain GET's latency while kapi holds 10,000 idle
 * TLS connections, 20,000 watches and a stream of slow uploads (and stalled
 * ones), all from an unprivileged user; the server's RSS at each stage. Then
 * the single-request attacks of issue #39 (bench/lib/shapes.ts, those marked
 * `attack`), each sent over and over by a namespace editor while the GETs run.
 *
 *   node dist/bench/soak.js [--quick] [--only <text>]
 *     --quick: 1,000 connections, 2,000 watches
 *     --only: just the single-request attacks whose names hold <text> (no connections, watches or uploads)
 *     --crowd: just the connections, watches, YAML bodies and uploads (no single-request attacks)
 *
 * The client needs a file descriptor per idle connection: `ulimit -n` must
 * exceed the count (it is 20,000 on the CI machine).
 */
import http2 from 'node:http2';
import https from 'node:https';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import tls from 'node:tls';
import { BenchClient, line, pct } from './lib/client.js';
import { startServer, type ServerProcess } from './lib/server-process.js';
import { NAMESPACE as SHAPES_NAMESPACE, prepare, SHAPES, type Shape, type ShapeClient } from './lib/shapes.js';
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';

const quick = process.argv.includes('--quick');
const IDLE_CONNECTIONS = Number(process.env.KAPI_SOAK_IDLE ?? (quick ? 1000 : 10_000));
const WATCHES = Number(process.env.KAPI_SOAK_WATCHES ?? (quick ? 2000 : 20_000));
const STREAMS_PER_SESSION = 1000;
const SLOW_UPLOADS = quick ? 20 : 100;
const STALLED_UPLOADS = quick ? 10 : 50;
const UPLOAD_BYTES = 1024 * 1024;
const UPLOAD_SECONDS = 5;
const MEASURE_MS = quick ? 4000 : 15_000;
const USER_TOKEN = 'soak-token';
const YAML_AT_ONCE = quick ? 2 : 6;
const onlyAt = process.argv.indexOf('--only');
const ONLY = onlyAt > 0 ? process.argv[onlyAt + 1] : undefined;
const CROWD_ONLY = process.argv.includes('--crowd');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** GETs of one object, one after another, on a connection of their own: p50 / p99 / max in ms. */
async function measureGets(server: ServerProcess, ms: number): Promise<string> {
  const c = new BenchClient(server.url, server.token, server.ca, 1);
  const latencies: number[] = [];
  const until = performance.now() + ms;
  let failures = 0;
  while (performance.now() < until) {
    const t = performance.now();
    const r = await c.request('GET', '/api/v1/namespaces/soak/configmaps/target');
    latencies.push(performance.now() - t);
    if (r.status !== 200) failures++;
    await sleep(20);
  }
  c.close();
  latencies.sort((a, b) => a - b);
  return `${latencies.length} GETs  p50 ${pct(latencies, 0.5).toFixed(1)} ms  p99 ${pct(latencies, 0.99).toFixed(1)} ms  max ${latencies[latencies.length - 1].toFixed(1)} ms${failures ? `  ${failures} failed` : ''}  RSS ${server.rssMb().toFixed(0)} MB`;
}

/** Idle TLS connections (HTTP/1.1), opened a few hundred at a time; none sends a request. */
async function openIdle(t: Target, n: number): Promise<number> {
  let open = 0;
  for (let i = 0; i < n; i += 200) {
    const batch = Array.from({ length: Math.min(200, n - i) }, () =>
      new Promise<void>((resolve) => {
        const socket = tls.connect({ host: t.host, port: t.port, ca: t.ca, ALPNProtocols: ['http/1.1'] }, () => {
          open++;
          resolve();
        });
        socket.on('error', () => resolve());
        cleanups.push(() => socket.destroy());
      }),
    );
    await Promise.all(batch);
  }
  return open;
}

/** Watches of the user's namespace, multiplexed STREAMS_PER_SESSION to a connection as informers do. */
async function openWatches(t: Target, n: number): Promise<{ ok: number; refused: number }> {
  let ok = 0;
  let refused = 0;
  for (let i = 0; i < n; i += STREAMS_PER_SESSION) {
    const session = http2.connect(t.url, { ca: t.ca, peerMaxConcurrentStreams: STREAMS_PER_SESSION });
    session.on('error', () => {});
    cleanups.push(() => session.destroy());
    const batch = Array.from({ length: Math.min(STREAMS_PER_SESSION, n - i) }, () =>
      new Promise<void>((resolve) => {
        const stream = session.request({ ':path': '/api/v1/namespaces/soak/configmaps?watch=1&allowWatchBookmarks=true', authorization: `Bearer ${USER_TOKEN}` });
        stream.on('response', (h) => {
          if (h[':status'] === 200) ok++;
          else refused++;
          resolve();
        });
        stream.on('data', () => {});
        stream.on('error', () => resolve());
      }),
    );
    await Promise.all(batch);
  }
  return { ok, refused };
}

/** A dry-run ConfigMap create as the attacking user, on a connection of its own; the caller sends the body. */
function postConfigMap(t: Target, contentType: string, length: number) {
  return https.request(new URL('/api/v1/namespaces/soak/configmaps?dryRun=All', t.url), {
    method: 'POST',
    ca: t.ca,
    agent: false,
    headers: { authorization: `Bearer ${USER_TOKEN}`, 'content-type': contentType, 'content-length': length },
  });
}

/** Large YAML bodies (a ConfigMap of 60,000 keys, 3 MB: a second or more of parsing each), `n` at once, `rounds` times. */
async function largeYaml(t: Target, n: number, rounds: number): Promise<string> {
  const lines = Array.from({ length: 60_000 }, (_, i) => `  k${i}: ${'v'.repeat(40)}`).join('\n');
  const body = Buffer.from(`apiVersion: v1\nkind: ConfigMap\nmetadata:\n  generateName: yaml-\ndata:\n${lines}\n`);
  const statuses: number[] = [];
  const one = () =>
    new Promise<void>((resolve) => {
      const req = postConfigMap(t, 'application/yaml', body.length);
      req.on('response', (res) => {
        statuses.push(res.statusCode ?? 0);
        res.resume().on('end', () => resolve());
      });
      req.on('error', () => resolve());
      req.end(body);
    });
  for (let r = 0; r < rounds; r++) await Promise.all(Array.from({ length: n }, one));
  return `${statuses.length} YAML bodies of ${(body.length / 1e6).toFixed(1)} MB answered: ${[...new Set(statuses)].join(', ')}`;
}

/** Uploads that send UPLOAD_BYTES over UPLOAD_SECONDS each, one after another on each of `n` lanes, until stopped. */
function slowUploads(t: Target, n: number, stalled: number): { stop(): void; done: () => number; refused: () => number } {
  let stopped = false;
  let done = 0;
  let refused = 0;
  const chunk = Math.ceil(UPLOAD_BYTES / (UPLOAD_SECONDS * 10));
  const one = (stall: boolean) =>
    new Promise<void>((resolve) => {
      const cm = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'up-' }, data: { pad: 'x'.repeat(UPLOAD_BYTES) } });
      const body = Buffer.from(cm);
      const req = postConfigMap(t, 'application/json', body.length);
      req.on('response', (res) => {
        if (res.statusCode === 201) done++;
        else refused++;
        res.resume().on('end', () => resolve());
      });
      req.on('error', () => resolve());
      cleanups.push(() => req.destroy());
      let sent = 0;
      const tick = setInterval(() => {
        if (stopped) {
          clearInterval(tick);
          req.destroy();
          return resolve();
        }
        if (stall && sent > 0) return;
        const part = body.subarray(sent, sent + chunk);
        sent += part.length;
        if (sent >= body.length) {
          clearInterval(tick);
          req.end(part);
        } else req.write(part);
      }, 100);
    });
  const lane = async (stall: boolean) => {
    while (!stopped) await one(stall);
  };
  for (let i = 0; i < n; i++) void lane(false);
  for (let i = 0; i < stalled; i++) void lane(true);
  return { stop: () => void (stopped = true), done: () => done, refused: () => refused };
}

/** The attacks among the shapes, at the size the issue reproduced them (or 8 times the suite's n). */
const ATTACKS = SHAPES.filter((shape) => shape.attack);
const attackSize = (shape: Shape) => shape.attackN ?? 8 * shape.n;

/** One shape's request sent again and again as the attacking user, one at a time, for `ms`: how many, and their statuses. */
async function repeat(t: Target, shape: Shape, n: number, ms: number): Promise<string> {
  const c = new BenchClient(t.url, USER_TOKEN, t.ca, 1);
  const statuses = new Map<number, number>();
  const latencies: number[] = [];
  const until = performance.now() + ms;
  try {
    while (performance.now() < until) {
      const req = shape.request(n);
      const started = performance.now();
      const r = await c.requestBytes(req.method, req.path, req.body, req.headers).catch(() => ({ status: 0 }));
      latencies.push(performance.now() - started);
      statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
    }
  } finally {
    c.close();
  }
  latencies.sort((a, b) => a - b);
  return `${latencies.length} sent, answered ${[...statuses].map(([k, v]) => `${k} ×${v}`).join(', ')}, each in ${pct(latencies, 0.5).toFixed(0)} ms (p50)`;
}

interface Target {
  url: string;
  host: string;
  port: number;
  ca: string;
}

const cleanups: Array<() => void> = [];

/** The attacker: a process of its own (so that its 30,000 sockets and streams do not slow the measuring client), driven by messages. */
async function attacker(): Promise<void> {
  const t = JSON.parse(process.env.KAPI_SOAK_TARGET!) as Target;
  let uploads: ReturnType<typeof slowUploads> | undefined;
  process.on('message', async (m: { stage: string }) => {
    const started = performance.now();
    const seconds = () => ((performance.now() - started) / 1000).toFixed(1);
    switch (m.stage) {
      case 'idle':
        process.send!({ text: `${await openIdle(t, IDLE_CONNECTIONS)} idle TLS connections opened in ${seconds()} s` });
        break;
      case 'watches': {
        const w = await openWatches(t, WATCHES);
        const extra = await openWatches(t, 1);
        process.send!({ text: `${w.ok} watches opened (${w.refused} refused) in ${seconds()} s; one more: ${extra.refused ? 'refused (429, --max-watches)' : 'accepted'}` });
        break;
      }
      case 'yaml':
        process.send!({ text: await largeYaml(t, YAML_AT_ONCE, 1) });
        break;
      case 'shape': {
        const { index, n, ms } = m as unknown as { index: number; n: number; ms: number };
        process.send!({ text: await repeat(t, ATTACKS[index], n, ms) });
        break;
      }
      case 'uploads':
        uploads = slowUploads(t, SLOW_UPLOADS, STALLED_UPLOADS);
        process.send!({ text: 'started' });
        break;
      case 'stop':
        uploads?.stop();
        process.send!({ text: `${uploads?.done() ?? 0} slow uploads completed, ${uploads?.refused() ?? 0} refused` });
        for (const c of cleanups) c();
        break;
      default:
        setTimeout(() => process.exit(0), 100);
    }
  });
}

/** Issue #39's single-request attacks by a namespace editor, each while plain GETs are measured on another connection. */
async function attacks(server: ServerProcess, admin: BenchClient, send: (index: number, n: number) => Promise<string>, rss: () => string): Promise<void> {
  const shapes: ShapeClient = { request: (method, path, body, headers) => admin.requestBytes(method, path, body, headers) };
  await prepare(shapes);
  // mallory edits everything in the shapes' namespace, and nothing else.
  const rbac = `/apis/rbac.authorization.k8s.io/v1/namespaces/${SHAPES_NAMESPACE}`;
  await admin.expect('POST', `${rbac}/roles`, 201, { metadata: { name: 'editor' }, rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }] });
  await admin.expect('POST', `${rbac}/rolebindings`, 201, { metadata: { name: 'mallory' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'editor' }, subjects: [{ kind: 'User', name: 'mallory', apiGroup: 'rbac.authorization.k8s.io' }] });
  for (const [index, shape] of ATTACKS.entries()) {
    if (ONLY !== undefined && !shape.name.includes(ONLY)) continue;
    const n = attackSize(shape);
    await shape.setup?.(shapes, n);
    const sent = send(index, n);
    line(`GET, while: ${shape.name}, n=${n}`, await measureGets(server, MEASURE_MS));
    line('attacker', `${await sent}, ${rss()}`);
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'kapi-soak-'));
  const tokens = join(dir, 'tokens.csv');
  writeFileSync(tokens, `${USER_TOKEN},mallory,2001,"attackers"\n`);
  const server = await startServer(undefined, ['--token-auth-file', tokens]);
  const { hostname, port } = new URL(server.url);
  const admin = new BenchClient(server.url, server.token, server.ca, 1);
  const child = fork(fileURLToPath(import.meta.url), ['attacker', ...process.argv.slice(2)], {
    env: { ...process.env, KAPI_SOAK_TARGET: JSON.stringify({ url: server.url, host: hostname, port: Number(port), ca: server.ca } satisfies Target) },
  });
  /** One stage of the attacker's: its report once done. */
  const stageWith = (message: Record<string, unknown>) =>
    new Promise<string>((resolve, reject) => {
      const exited = () => reject(new Error('the attacker process exited'));
      child.once('exit', exited);
      child.once('message', (m: { text: string }) => {
        child.off('exit', exited);
        resolve(m.text);
      });
      child.send(message);
    });
  const stage = (name: string) => stageWith({ stage: name });
  const rss = () => `RSS ${server.rssMb().toFixed(0)} MB`;
  try {
    await admin.expect('POST', '/api/v1/namespaces', 201, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'soak' } });
    // mallory may edit the namespace (RBAC is on): the watches and uploads are an editor's.
    await admin.expect('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/soak/rolebindings', 201, { metadata: { name: 'mallory-edit' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit' }, subjects: [{ kind: 'User', name: 'mallory', apiGroup: 'rbac.authorization.k8s.io' }] });
    await admin.expect('POST', '/api/v1/namespaces/soak/configmaps', 201, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'target' }, data: { a: 'b' } });
    await measureGets(server, 1000); // warm-up
    line('GET, idle server', await measureGets(server, MEASURE_MS));
    if (ONLY === undefined) await crowd();
    if (!CROWD_ONLY) await attacks(server, admin, (index, n) => stageWith({ stage: 'shape', index, n, ms: MEASURE_MS }), rss);
    await sleep(1000);
    line('GET, after the attack', await measureGets(server, quick ? 1000 : 3000));
  } finally {
    child.kill();
    admin.close();
    await server.stop();
    server.cleanup();
    rmSync(dir, { recursive: true, force: true });
  }

  /** The server's heap in use, as its /metrics says. */
  async function heapUsed(): Promise<number> {
    const m = /^nodejs_heap_size_used_bytes (\d+)/m.exec((await admin.request('GET', '/metrics')).body);
    return Number(m?.[1] ?? NaN);
  }

  /** Many connections and watches, large YAML bodies, slow uploads. */
  async function crowd(): Promise<void> {
    line('attacker', `${await stage('idle')}, ${rss()}`);
    const heapBefore = await heapUsed();
    line('attacker', `${await stage('watches')}, ${rss()}`);
    line('heap per watch', `${(((await heapUsed()) - heapBefore) / WATCHES / 1024).toFixed(1)} KiB (nodejs_heap_size_used_bytes, garbage included)`);
    line('GET, with the connections and watches open', await measureGets(server, MEASURE_MS));
    const yaml = stage('yaml');
    const during = measureGets(server, MEASURE_MS);
    line(`GET, while ${YAML_AT_ONCE} YAML bodies of 3 MB are parsed`, await during);
    line('attacker', `${await yaml}, ${rss()}`);
    await stage('uploads');
    await sleep(2000);
    line(`GET, also ${SLOW_UPLOADS} slow uploads (1 MiB over ${UPLOAD_SECONDS} s) and ${STALLED_UPLOADS} stalled`, await measureGets(server, MEASURE_MS));
    line('attacker', `${await stage('stop')}, ${rss()}`);
  }
}

if (process.argv[2] === 'attacker') await attacker();
else await main();
