/** `kapi serve` as a user runs it: a real process, its kubeconfig, a token file, SIGTERM. */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { it } from 'node:test';
import { execFile } from 'node:child_process';
import { KUBECTL } from './harness.js';
import { openStorage, openStorageAsync } from '../../src/storage/index.js';
import { findEtcd, startEtcdCluster } from '../storage/etcd-helper.js';

const bin = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'bin', 'kapi.js');

function get(url: string, ca: string, token: string): Promise<{ status: number; body: string }> {
  return new Promise((res, rej) => {
    const req = https.get(url, { ca, headers: { Authorization: `Bearer ${token}` }, timeout: 5000 }, (r) => {
      let body = '';
      r.on('data', (c) => (body += c));
      r.on('end', () => res({ status: r.statusCode ?? 0, body }));
    });
    req.on('error', rej);
  });
}

/** Spawns `kapi serve` from the bundle and resolves with its URL once it prints the kubeconfig line. */
async function startKapi(args: string[], nodeArgs: string[] = []): Promise<{ child: ChildProcess; url: string; out: () => string }> {
  const child = spawn(process.execPath, [...nodeArgs, bin, 'serve', '--secure-port', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  try {
    const url = await new Promise<string>((res, rej) => {
      const timer = setTimeout(() => rej(new Error(`kapi did not start: ${out}`)), 10_000);
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString();
        const m = /kapi serving on (https:\/\/\S+)[^]*export KUBECONFIG=/.exec(out);
        if (m && out.endsWith('\n')) {
          clearTimeout(timer);
          res(m[1]);
        }
      });
      child.once('exit', (code) => rej(new Error(`kapi exited with ${code}: ${out}`)));
    });
    return { child, url, out: () => out };
  } catch (e) {
    child.kill('SIGKILL');
    throw e;
  }
}

/** Stops kapi with SIGTERM and resolves with its exit code. */
async function stopKapi(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  const exited = new Promise<number | null>((res) => child.once('exit', res));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  try {
    return await exited;
  } finally {
    clearTimeout(timer);
  }
}

it('serves with TLS and a kubeconfig, honors a token file, and stops cleanly on SIGTERM', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kapi-cli-'));
  const dataDir = join(dir, 'data');
  const tokenFile = join(dir, 'tokens.csv');
  writeFileSync(tokenFile, 'alice-token,alice,1001,"dev,ops"\n');
  let child: ChildProcess | undefined;
  try {
    // Two objects kept decoded: the rest of what it serves is kept as text and decoded when read.
    const started = await startKapi(['--data-dir', dataDir, '--token-auth-file', tokenFile, '-v=2', '--max-watches', '5', '--request-timeout', '30s', '--watch-cache-decoded-objects', '2']);
    child = started.child;
    const { url } = started;
    const out = started.out;
    assert.match(out(), new RegExp(`export KUBECONFIG=${join(dataDir, 'admin.kubeconfig').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    const ca = readFileSync(join(dataDir, 'pki', 'ca.crt'), 'utf8');
    const version = await get(`${url}/version`, ca, '');
    assert.equal(version.status, 200);
    assert.equal(JSON.parse(version.body).major, '1');
    // The token authenticates alice; RBAC (the default mode) gives her nothing.
    const alice = await get(`${url}/api/v1/namespaces`, ca, 'alice-token');
    assert.equal(alice.status, 403);
    assert.equal(JSON.parse(alice.body).message, 'namespaces is forbidden: User "alice" cannot list resource "namespaces" in API group "" at the cluster scope');
    const stranger = await get(`${url}/api/v1/namespaces`, ca, 'nope');
    assert.equal(stranger.status, 401);
    // -v=2 (klog's spelling): one request line each, as kube-apiserver's httplog (written to stderr as each ends).
    for (let i = 0; i < 100 && !/resp=401\n/.test(out()); i++) await new Promise((r) => setTimeout(r, 20));
    assert.match(out(), /httplog\.go:\d+\] "HTTP" verb="LIST" URI="\/api\/v1\/namespaces" latency="[0-9.]+ms" userAgent="[^"]*" contentType="" audit-ID="[0-9a-f-]+" srcIP="127\.0\.0\.1:\d+" user="alice" resp=403\n/);
    assert.match(out(), /URI="\/api\/v1\/namespaces" [^\n]* user="" resp=401\n/);
    const kubectlOut = await new Promise<string>((res, rej) =>
      execFile(KUBECTL, ['--kubeconfig', join(dataDir, 'admin.kubeconfig'), '--cache-dir', join(dir, 'cache'), 'get', 'ns', '-o', 'name'], { timeout: 20_000 }, (err, stdout, stderr) =>
        err ? rej(new Error(stderr)) : res(stdout),
      ),
    );
    assert.match(kubectlOut, /namespace\/kube-system/);
    assert.equal(await stopKapi(child), 0);
    assert.match(out(), /SIGTERM, shutting down/);
    // The store was closed: it opens again, with the namespaces created at first start.
    const storage = openStorage({ kind: 'sqlite', path: join(dataDir, 'state.db') });
    try {
      assert.ok(await storage.get('/registry/namespaces/default'));
    } finally {
      await storage.close();
    }
  } finally {
    if (child) await stopKapi(child);
    rmSync(dir, { recursive: true, force: true });
  }
});

it('loads the etcd client only for --etcd-servers: the embedded start requires no gRPC', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kapi-cli-modules-'));
  // A preloaded module that writes, as the process exits, every CommonJS module it loaded.
  const hook = join(dir, 'modules.cjs');
  const list = join(dir, 'modules.json');
  writeFileSync(hook, `process.once('exit', () => require('node:fs').writeFileSync(${JSON.stringify(list)}, JSON.stringify(Object.keys(require('node:module')._cache))));\n`);
  let child: ChildProcess | undefined;
  try {
    child = (await startKapi(['--data-dir', join(dir, 'data')], ['--require', hook])).child;
    assert.equal(await stopKapi(child), 0);
    const modules = JSON.parse(readFileSync(list, 'utf8')) as string[];
    assert.ok(modules.some((m) => m.includes('better-sqlite3')), modules.join(' '));
    assert.deepEqual(modules.filter((m) => /grpc|protobuf/.test(m)), []);
  } finally {
    if (child) await stopKapi(child);
    rmSync(dir, { recursive: true, force: true });
  }
});

it('compiles its bundle with a code cache a serve of two seconds writes (importing users\' modules still), and ignores a damaged one', async () => {
  const dist = resolve(dirname(bin), '..', 'dist');
  const digest = /^\/\/kapi-bundle ([0-9a-f]{16})\n/.exec(readFileSync(join(dist, 'kapi.cjs'), 'latin1').slice(0, 40))?.[1];
  assert.ok(digest, 'the bundle names its digest on its first line');
  const cache = join(dist, `kapi-${digest}-${process.version}.v8cache`);
  const dir = mkdtempSync(join(tmpdir(), 'kapi-cli-cache-'));
  /** The cache file once `ready` says it is (in 15 s). */
  const cacheWhen = async (ready: (file: Buffer) => boolean) => {
    for (const until = Date.now() + 15_000; Date.now() < until; await new Promise((r) => setTimeout(r, 100))) {
      try {
        const file = readFileSync(cache);
        if (ready(file)) return file;
      } catch {
        // not yet
      }
    }
    throw new Error(`no code cache written: ${readdirSync(dist).join(' ')}`);
  };
  let child: ChildProcess | undefined;
  try {
    // Other tests' servers may have written one already: a start finding none writes it.
    rmSync(cache, { force: true });
    child = (await startKapi(['--data-dir', join(dir, 'one')])).child;
    const good = await cacheWhen((file) => file.length > 100_000);
    assert.equal(await stopKapi(child), 0);
    // Compiled from the cache, the bundle still imports a user's module (Node 20 drops a cached script's import()).
    const hooks = join(dir, 'hooks.mjs');
    writeFileSync(hooks, 'export default [];\n');
    child = (await startKapi(['--data-dir', join(dir, 'one'), '--admission-hooks', hooks])).child;
    assert.equal(await stopKapi(child), 0);
    // A cache others may write is not trusted: kapi starts without it and writes its own.
    chmodSync(cache, 0o666);
    child = (await startKapi(['--data-dir', join(dir, 'one')])).child;
    await cacheWhen(() => (statSync(cache).mode & 0o022) === 0);
    assert.equal(await stopKapi(child), 0);
    // Damage past the checksum: V8 crashes on such data (it checks only its header); kapi starts without it.
    const damaged = Buffer.from(good);
    for (let i = 50_000; i < damaged.length; i += 997) damaged[i] ^= 0x5a;
    writeFileSync(`${cache}.test`, damaged);
    renameSync(`${cache}.test`, cache);
    const started = await startKapi(['--data-dir', join(dir, 'two')]);
    child = started.child;
    const token = /token: (\S+)/.exec(readFileSync(join(dir, 'two', 'admin.kubeconfig'), 'utf8'))?.[1] ?? '';
    const ns = await get(`${started.url}/api/v1/namespaces/default`, readFileSync(join(dir, 'two', 'pki', 'ca.crt'), 'utf8'), token);
    assert.equal(ns.status, 200, ns.body);
    const again = await cacheWhen((file) => !file.equals(damaged));
    assert.equal(again.length > 100_000, true, `a cache of ${again.length} bytes`);
    assert.equal(await stopKapi(child), 0);
  } finally {
    if (child) await stopKapi(child);
    rmSync(dir, { recursive: true, force: true });
  }
});

it('serves from etcd with --etcd-servers, the etcd chunk loaded on demand', async (t) => {
  const etcd = findEtcd();
  if (!etcd.bin) return t.skip(etcd.reason);
  const cluster = await startEtcdCluster();
  const dir = mkdtempSync(join(tmpdir(), 'kapi-cli-etcd-'));
  let child: ChildProcess | undefined;
  try {
    const started = await startKapi(['--data-dir', join(dir, 'data'), '--etcd-servers', cluster.endpoints.join(','), '--etcd-prefix', '/cli-test']);
    child = started.child;
    const ca = readFileSync(join(dir, 'data', 'pki', 'ca.crt'), 'utf8');
    const token = readFileSync(join(dir, 'data', 'admin.kubeconfig'), 'utf8').match(/token: (\S+)/)?.[1] ?? '';
    const ns = await get(`${started.url}/api/v1/namespaces/default`, ca, token);
    assert.equal(ns.status, 200, ns.body);
    assert.equal(await stopKapi(child), 0);
    // The namespace is in etcd, under the prefix given.
    const storage = await openStorageAsync({ kind: 'etcd', endpoints: cluster.endpoints, prefix: '/cli-test' });
    try {
      assert.ok(await storage.get('/registry/namespaces/default'));
    } finally {
      await storage.close();
    }
  } finally {
    if (child) await stopKapi(child);
    rmSync(dir, { recursive: true, force: true });
    await cluster.cleanup();
  }
});

it('prints its version with --version, as kube-apiserver does', async () => {
  const out = await new Promise<string>((resolve, reject) =>
    execFile(process.execPath, [bin, '--version'], { timeout: 10_000 }, (err, stdout) => (err ? reject(err) : resolve(stdout))),
  );
  assert.match(out.trim(), /^Kubernetes v1\.\d+\.\d+-kapi\.\d+\.\d+\.\d+$/);
});

it('refuses flag values it cannot read, naming the flag', async () => {
  for (const [flag, value] of [['--max-watches', 'many'], ['--request-timeout', 'soon'], ['--v', '-1'], ['--watch-cache-decoded-objects', 'lots']]) {
    const child = spawn(process.execPath, [bin, 'serve', '--secure-port', '0', '--data-dir', join(tmpdir(), 'kapi-never-started'), `${flag}=${value}`], { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const code = await new Promise<number | null>((res) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      child.once('exit', (c) => {
        clearTimeout(timer);
        res(c);
      });
    });
    assert.equal(code, 1, err);
    assert.match(err, new RegExp(`kapi: invalid value "${value}" for ${flag}`));
  }
});

it('stops cleanly when the reader of its output goes away (`kapi serve 2>&1 | head -1`), as kube-apiserver ends on a broken pipe', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kapi-cli-pipe-'));
  try {
    const { child } = await startKapi(['--data-dir', join(dir, 'data')]);
    const exited = new Promise<number | null>((res) => child.once('exit', res));
    // The reader leaves; the next line kapi writes fails with EPIPE. (A signal makes it write one; without the
    // signal, the next line of its log on stderr ends it.)
    child.stdout!.destroy();
    child.stderr!.destroy();
    child.kill('SIGINT');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    try {
      const code = await exited;
      // Without the fix, the EPIPE error's own log line failed again, forever: the process spun and never ended (killed here).
      assert.notEqual(child.signalCode, 'SIGKILL', 'kapi had to be killed');
      assert.ok(code === 0 || code === 1, `exit code ${code}`);
    } finally {
      clearTimeout(timer);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
