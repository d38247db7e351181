/**
 * End-to-end test harness: a real kapi on a loopback port with a temporary data
 * dir, an HTTPS client that trusts its CA and sends the admin token, and kubectl
 * (Debian's, from .cache/bin) pointed at its kubeconfig.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startKapi, type Kapi, type KapiOptions } from '../../src/kapi/index.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const KUBECTL = process.env.KAPI_TEST_KUBECTL ?? join(repoRoot, '.cache', 'bin', 'kubectl');

export interface HttpResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body's bytes (a protobuf answer). */
  body: Buffer;
  text: string;
  json: any;
}

export interface RequestOptions {
  body?: unknown;
  contentType?: string;
  accept?: string;
  token?: string | null;
  timeoutMs?: number;
  /** More request headers (If-None-Match, say). */
  headers?: Record<string, string>;
}

export interface TestServer {
  kapi: Kapi;
  dir: string;
  request(method: string, path: string, opts?: RequestOptions): Promise<HttpResult>;
  kubectl(args: string[], opts?: { input?: string; timeoutMs?: number }): Promise<{ code: number; stdout: string; stderr: string }>;
  stop(): Promise<void>;
}

export async function startTestServer(options: KapiOptions = {}): Promise<TestServer> {
  const dir = mkdtempSync(join(tmpdir(), 'kapi-e2e-'));
  const kapi = await startKapi({ dataDir: join(dir, 'data'), port: 0, ...options });
  const agent = new https.Agent({ ca: kapi.caCertPem, keepAlive: true });
  return {
    kapi,
    dir,
    request: (method, path, opts = {}) => request(kapi, agent, method, path, opts),
    kubectl: (args, opts = {}) => kubectl(kapi, dir, args, opts),
    async stop() {
      agent.destroy();
      await kapi.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function request(kapi: Kapi, agent: https.Agent, method: string, path: string, opts: RequestOptions): Promise<HttpResult> {
  const url = new URL(path, kapi.url);
  let payload: Buffer | undefined;
  if (opts.body !== undefined) payload = Buffer.isBuffer(opts.body) ? opts.body : Buffer.from(typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body));
  const headers: Record<string, string> = {};
  if (opts.token !== null) headers.Authorization = `Bearer ${opts.token ?? kapi.adminToken}`;
  if (payload) {
    headers['Content-Type'] = opts.contentType ?? 'application/json';
    headers['Content-Length'] = String(payload.length);
  }
  if (opts.accept) headers.Accept = opts.accept;
  Object.assign(headers, opts.headers);
  return new Promise((resolvePromise, reject) => {
    const req = https.request(url, { method, agent, headers, timeout: opts.timeoutMs ?? 10_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        const text = body.toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolvePromise({ status: res.statusCode ?? 0, headers: res.headers, body, text, json });
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: timed out`)));
    req.on('error', reject);
    req.end(payload);
  });
}

/** Open a watch and collect its events until `count` arrived or the timeout passed. */
export function watchEvents(
  kapi: Kapi,
  path: string,
  count: number,
  timeoutMs = 5000,
  accept?: string,
): { events: Promise<any[]>; status: Promise<number>; close(): void } {
  const url = new URL(path, kapi.url);
  const events: any[] = [];
  let close = () => {};
  let setStatus: (n: number) => void = () => {};
  const status = new Promise<number>((r) => (setStatus = r));
  const done = new Promise<any[]>((resolvePromise, reject) => {
    const headers: Record<string, string> = { Authorization: `Bearer ${kapi.adminToken}` };
    if (accept) headers.Accept = accept;
    const req = https.get(url, { ca: kapi.caCertPem, headers }, (res) => {
      setStatus(res.statusCode ?? 0);
      let buf = '';
      res.on('data', (c: Buffer) => {
        buf += c.toString();
        let nl;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          if (line.trim()) events.push(JSON.parse(line));
          if (events.length >= count) {
            clearTimeout(timer);
            req.destroy();
            resolvePromise(events);
          }
        }
      });
      res.on('end', () => {
        clearTimeout(timer);
        resolvePromise(events);
      });
    });
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`watch ${path}: ${events.length} of ${count} events within ${timeoutMs} ms: ${JSON.stringify(events)}`));
    }, timeoutMs);
    req.on('error', (e) => {
      if (events.length >= count) return;
      clearTimeout(timer);
      reject(e);
    });
    close = () => {
      clearTimeout(timer);
      req.destroy();
      resolvePromise(events);
    };
  });
  return { events: done, status, close: () => close() };
}

function kubectl(kapi: Kapi, dir: string, args: string[], opts: { input?: string; timeoutMs?: number }) {
  if (!existsSync(KUBECTL)) throw new Error(`kubectl not found at ${KUBECTL}: run scripts/test-tools.sh`);
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolvePromise) => {
    const child = execFile(
      KUBECTL,
      ['--kubeconfig', kapi.kubeconfigPath, '--cache-dir', join(dir, 'kube-cache'), ...args],
      { timeout: opts.timeoutMs ?? 20_000, env: { ...process.env, HOME: dir } },
      (err, stdout, stderr) => {
        const code = err ? ((err as { code?: number }).code ?? 1) : 0;
        resolvePromise({ code: typeof code === 'number' ? code : 1, stdout, stderr });
      },
    );
    if (opts.input !== undefined) child.stdin!.end(opts.input);
  });
}

export const CRONTAB_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'crontabs.stable.example.com' },
  spec: {
    group: 'stable.example.com',
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: { type: 'object', properties: { cronSpec: { type: 'string' }, image: { type: 'string' }, replicas: { type: 'integer' } } },
            },
          },
        },
      },
    ],
    scope: 'Namespaced',
    names: { plural: 'crontabs', singular: 'crontab', kind: 'CronTab', shortNames: ['ct'] },
  },
};

export function cronTab(name: string, namespace = 'default', spec: Record<string, unknown> = { cronSpec: '* * * * */5', image: 'my-awesome-cron-image' }) {
  return { apiVersion: 'stable.example.com/v1', kind: 'CronTab', metadata: { name, namespace }, spec };
}

/** Wait until `check` holds, polling; fails naming `what` after `timeoutMs`. */
export async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Runs a client program that prints one JSON line per step ({"step": name, ...}), asynchronously (the
 * server answers from this process), killed after `timeoutMs`: its exit code, steps by name, stderr.
 */
export function runClientSteps(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
  timeoutMs = 60_000,
): Promise<{ code: number | null; steps: Map<string, any>; stderr: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      const steps = new Map<string, any>();
      for (const line of stdout.split('\n').filter(Boolean)) {
        const step = JSON.parse(line);
        steps.set(step.step, step);
      }
      resolvePromise({ code, steps, stderr: `${stderr}${code === 0 ? '' : `\n${stdout}`}` });
    });
  });
}
