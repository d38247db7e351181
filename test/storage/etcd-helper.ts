/**
 * Real etcd for the tests: finds the binary that scripts/test-tools.sh puts in
 * .cache/bin (running the script once when it is missing), and runs one or
 * several members on free loopback ports with temporary data dirs. Members run
 * in their own process groups and are stopped by process id, at the latest
 * when the test process exits.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, openSync, closeSync, readFileSync, rmSync, writeFileSync, accessSync, constants } from 'node:fs';
import { get as httpGet } from 'node:http';
import { get as httpsGet } from 'node:https';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const START_TIMEOUT_MS = 15_000;

/** Flags every test member runs with: fast elections, small limits, quiet logs. */
export const ETCD_TEST_FLAGS = [
  '--heartbeat-interval=50',
  '--election-timeout=500',
  '--quota-backend-bytes=268435456',
  // The conformance suite stores a 1.5 MiB value; etcd's default request limit is exactly 1.5 MiB.
  '--max-request-bytes=8388608',
  '--snapshot-count=5000',
  '--logger=zap',
  '--log-outputs=stderr',
  '--log-level=warn',
];

export interface TlsFiles {
  dir: string;
  caFile: string;
  serverCertFile: string;
  serverKeyFile: string;
  clientCertFile: string;
  clientKeyFile: string;
}

export interface EtcdMember {
  name: string;
  clientUrl: string;
  peerUrl: string;
  dataDir: string;
  proc?: ChildProcess;
}

export interface EtcdCluster {
  members: EtcdMember[];
  endpoints: string[];
  /** Start (or restart) member i on its old data dir and ports; resolves once it serves. */
  start(i: number): Promise<void>;
  /** Stop member i by its process group id; resolves once it has exited. */
  stop(i: number, signal?: NodeJS.Signals): Promise<void>;
  /** Wait until member i answers /health. */
  waitHealthy(i: number, timeoutMs?: number): Promise<void>;
  /** Stop every member and remove the data dirs. */
  cleanup(): Promise<void>;
}

const running = new Set<ChildProcess>();
const dataDirs = new Set<string>();
const killAll = () => {
  for (const p of running) killGroup(p, 'SIGKILL');
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
};
process.on('exit', killAll);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  // Stop the members, then die of the signal as if there were no handler.
  process.once(signal, () => {
    killAll();
    process.kill(process.pid, signal);
  });
}

function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'scripts', 'test-tools.sh')) && existsSync(join(dir, 'package.json'))) return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error('etcd helper: cannot find the repository root');
    dir = up;
  }
}

let located: { bin?: string; reason?: string } | undefined;

/** The etcd binary, installing it with scripts/test-tools.sh when needed; a reason when it cannot be had. */
export function findEtcd(): { bin?: string; reason?: string } {
  if (located) return located;
  const root = repoRoot();
  const bin = join(root, '.cache', 'bin', 'etcd');
  if (!isExecutable(bin)) {
    const r = spawnSync('bash', [join(root, 'scripts', 'test-tools.sh')], { cwd: root, encoding: 'utf8', timeout: 180_000 });
    if (!isExecutable(bin)) {
      located = { reason: `etcd is not installed and scripts/test-tools.sh could not install it: ${(r.stderr || r.error?.message || '').trim().slice(-400)}` };
      return located;
    }
  }
  located = { bin };
  return located;
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** A directory for etcd data: tmpfs when there is one (fsync is then nearly free). */
function dataRoot(): string {
  try {
    accessSync('/dev/shm', constants.W_OK);
    return '/dev/shm';
  } catch {
    return tmpdir();
  }
}

export async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from({ length: n }, () => {
      const s = createServer();
      return new Promise<ReturnType<typeof createServer>>((resolve, reject) => {
        s.once('error', reject);
        s.listen(0, '127.0.0.1', () => resolve(s));
      });
    }),
  );
  const ports = servers.map((s) => (s.address() as AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  return ports;
}

/** A CA, a server certificate for 127.0.0.1 and a client certificate, made with openssl; undefined without openssl. */
export function makeTlsFiles(): TlsFiles | undefined {
  if (spawnSync('openssl', ['version']).status !== 0) return undefined;
  const dir = mkdtempSync(join(tmpdir(), 'kapi-etcd-tls-'));
  const p = (name: string) => join(dir, name);
  const run = (args: string[]) => {
    const r = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`openssl ${args[0]} failed: ${r.stderr}`);
  };
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  run(['req', '-x509', ...ec, '-keyout', p('ca.key'), '-out', p('ca.crt'), '-days', '1', '-subj', '/CN=kapi-test-etcd-ca']);
  const issue = (name: string, cn: string, ext: string) => {
    writeFileSync(p(`${name}.ext`), ext);
    run(['req', ...ec, '-keyout', p(`${name}.key`), '-out', p(`${name}.csr`), '-subj', `/CN=${cn}`]);
    run(['x509', '-req', '-in', p(`${name}.csr`), '-CA', p('ca.crt'), '-CAkey', p('ca.key'), '-CAcreateserial', '-days', '1', '-out', p(`${name}.crt`), '-extfile', p(`${name}.ext`)]);
  };
  issue('server', 'etcd', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n');
  issue('client', 'kapi', 'extendedKeyUsage=clientAuth\n');
  return {
    dir,
    caFile: p('ca.crt'),
    serverCertFile: p('server.crt'),
    serverKeyFile: p('server.key'),
    clientCertFile: p('client.crt'),
    clientKeyFile: p('client.key'),
  };
}

/** Start a cluster of `size` members on loopback and wait until it serves. */
export async function startEtcdCluster(
  opts: { size?: number; tls?: TlsFiles; extraFlags?: string[]; /** data on the real disk rather than tmpfs */ onDisk?: boolean } = {},
): Promise<EtcdCluster> {
  const { bin, reason } = findEtcd();
  if (!bin) throw new Error(reason);
  const size = opts.size ?? 1;
  const ports = await freePorts(size * 2);
  const scheme = opts.tls ? 'https' : 'http';
  const root = mkdtempSync(join(opts.onDisk ? tmpdir() : dataRoot(), 'kapi-etcd-'));
  dataDirs.add(root);
  const members: EtcdMember[] = Array.from({ length: size }, (_, i) => ({
    name: `m${i}`,
    clientUrl: `${scheme}://127.0.0.1:${ports[2 * i]}`,
    peerUrl: `http://127.0.0.1:${ports[2 * i + 1]}`,
    dataDir: join(root, `m${i}`),
  }));
  const initialCluster = members.map((m) => `${m.name}=${m.peerUrl}`).join(',');
  const token = `kapi-test-${process.pid}-${ports[0]}`;

  const argsFor = (m: EtcdMember) => [
    `--name=${m.name}`,
    `--data-dir=${m.dataDir}`,
    `--listen-client-urls=${m.clientUrl}`,
    `--advertise-client-urls=${m.clientUrl}`,
    `--listen-peer-urls=${m.peerUrl}`,
    `--initial-advertise-peer-urls=${m.peerUrl}`,
    `--initial-cluster=${initialCluster}`,
    '--initial-cluster-state=new',
    `--initial-cluster-token=${token}`,
    ...ETCD_TEST_FLAGS,
    ...(opts.tls
      ? [`--cert-file=${opts.tls.serverCertFile}`, `--key-file=${opts.tls.serverKeyFile}`, `--trusted-ca-file=${opts.tls.caFile}`, '--client-cert-auth']
      : []),
    ...(opts.extraFlags ?? []),
  ];

  const launch = (i: number) => {
    const m = members[i];
    if (m.proc) throw new Error(`${m.name} is already running`);
    const log = openSync(join(root, `${m.name}.log`), 'a');
    const proc = spawn(bin, argsFor(m), { detached: true, stdio: ['ignore', log, log] });
    closeSync(log);
    m.proc = proc;
    running.add(proc);
    proc.once('exit', () => {
      running.delete(proc);
      if (m.proc === proc) m.proc = undefined;
    });
  };

  const waitHealthy = async (i: number, timeoutMs = START_TIMEOUT_MS) => {
    const m = members[i];
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (!m.proc) throw new Error(`${m.name} exited; log:\n${tail(join(root, `${m.name}.log`))}`);
      if (await healthy(m.clientUrl, opts.tls)) return;
      if (Date.now() > deadline) throw new Error(`${m.name} not healthy within ${timeoutMs} ms; log:\n${tail(join(root, `${m.name}.log`))}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  const stop = async (i: number, signal: NodeJS.Signals = 'SIGKILL') => {
    const proc = members[i].proc;
    if (!proc) return;
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    killGroup(proc, signal);
    const timer = setTimeout(() => killGroup(proc, 'SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  };

  const cluster: EtcdCluster = {
    members,
    endpoints: members.map((m) => m.clientUrl),
    waitHealthy,
    async start(i) {
      launch(i);
      await waitHealthy(i);
    },
    stop,
    async cleanup() {
      await Promise.all(members.map((_, i) => stop(i)));
      rmSync(root, { recursive: true, force: true });
      dataDirs.delete(root);
    },
  };
  try {
    for (let i = 0; i < size; i++) launch(i);
    await Promise.all(members.map((_, i) => waitHealthy(i)));
  } catch (e) {
    await cluster.cleanup();
    throw e;
  }
  return cluster;
}

function killGroup(proc: ChildProcess, signal: NodeJS.Signals): void {
  if (proc.pid === undefined || proc.exitCode !== null || proc.signalCode !== null) return;
  try {
    process.kill(-proc.pid, signal);
  } catch {
    // already gone
  }
}

function healthy(clientUrl: string, tls?: TlsFiles): Promise<boolean> {
  return new Promise((resolve) => {
    const url = `${clientUrl}/health`;
    const onResponse = (res: import('node:http').IncomingMessage) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve(res.statusCode === 200 && body.includes('"health":"true"')));
      res.on('error', () => resolve(false));
    };
    const req = tls
      ? httpsGet(url, { ca: readFileSync(tls.caFile), cert: readFileSync(tls.clientCertFile), key: readFileSync(tls.clientKeyFile) }, onResponse)
      : httpGet(url, onResponse);
    req.setTimeout(1000, () => req.destroy());
    req.on('error', () => resolve(false));
  });
}

function tail(path: string): string {
  try {
    return readFileSync(path, 'utf8').split('\n').slice(-15).join('\n');
  } catch {
    return '(no log)';
  }
}
