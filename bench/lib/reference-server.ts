/**
 * The reference: kube-apiserver on etcd, as `scripts/conformance-build.sh` builds it from Debian's kubernetes
 * source (into .cache/bin, beside Debian's etcd), started with a token in system:masters, RBAC on and its default
 * admission plugins. Shared by `npm run bench:reference` (bench/reference.ts) and `npm run conformance`.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { createServer, type AddressInfo } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** .cache/bin of the checkout. */
export const cacheBin = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '.cache', 'bin');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const freePort = () =>
  new Promise<number>((resolvePort) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolvePort(port));
    });
  });

export interface SetupProcess {
  pid: number;
  output(): string;
  /** CPU time the process has used (user and system), in ms. */
  cpuMs(): number;
  /** Stops it by its pid (SIGTERM, SIGKILL after 10 s); its output goes to <dir>/<name>.log. */
  stop(): Promise<void>;
}

/** A process of a setup, its output kept (the last 2–4 MB) and written to a log file when it is stopped. */
export function startProcess(dir: string, name: string, command: string, args: string[]): SetupProcess {
  const p = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  const keep = (c: Buffer) => {
    text += c.toString();
    if (text.length > 4_000_000) text = text.slice(-2_000_000);
  };
  p.stdout!.on('data', keep);
  p.stderr!.on('data', keep);
  p.on('error', (err) => keep(Buffer.from(String(err))));
  return {
    pid: p.pid ?? -1,
    output: () => text,
    cpuMs() {
      // Fields 14 and 15 of /proc/<pid>/stat (utime, stime), in clock ticks of 10 ms.
      const fields = readFileSync(`/proc/${p.pid}/stat`, 'utf8').split(') ')[1].split(' ');
      return (Number(fields[11]) + Number(fields[12])) * 10;
    },
    async stop() {
      writeFileSync(join(dir, `${name}.log`), text);
      if (p.exitCode !== null || p.signalCode !== null) return;
      p.kill('SIGTERM');
      await Promise.race([new Promise((r) => p.once('exit', r)), sleep(10_000)]);
      if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
    },
  };
}

/** Polls `check` every 250 ms until it holds; throws after `timeoutMs`. */
export async function until(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(250);
  }
}

export interface ReferenceServer {
  url: string;
  token: string;
  /** kube-apiserver's --cert-dir (its self-signed serving certificate: apiserver.crt). */
  certs: string;
  /** The service-account signing key (PEM, RSA). */
  saKey: string;
  kubeApiserver: SetupProcess;
  etcd: SetupProcess;
}

/** Whether the reference binaries are in .cache/bin. */
export function referenceBuilt(): boolean {
  return existsSync(join(cacheBin, 'kube-apiserver')) && existsSync(join(cacheBin, 'etcd'));
}

/** etcd and kube-apiserver on free loopback ports, their data and logs in `dir`; resolves once /readyz answers 200. */
export async function startReference(dir: string): Promise<ReferenceServer> {
  const [port, etcdPort, peerPort] = [await freePort(), await freePort(), await freePort()];
  const etcd = startProcess(dir, 'etcd', join(cacheBin, 'etcd'), [
    `--data-dir=${join(dir, 'etcd')}`,
    `--listen-client-urls=http://127.0.0.1:${etcdPort}`,
    `--advertise-client-urls=http://127.0.0.1:${etcdPort}`,
    `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
  ]);
  const saKey = join(dir, 'sa.key');
  const saPub = join(dir, 'sa.pub');
  execFileSync('openssl', ['genrsa', '-out', saKey, '2048'], { stdio: 'ignore' });
  execFileSync('openssl', ['rsa', '-in', saKey, '-pubout', '-out', saPub], { stdio: 'ignore' });
  const token = execFileSync('openssl', ['rand', '-hex', '16']).toString().trim();
  writeFileSync(join(dir, 'tokens.csv'), `${token},admin,admin,system:masters\n`);
  const certs = join(dir, 'certs');
  const issuer = 'https://kubernetes.default.svc.cluster.local';
  const kubeApiserver = startProcess(dir, 'kube-apiserver', join(cacheBin, 'kube-apiserver'), [
    `--etcd-servers=http://127.0.0.1:${etcdPort}`,
    `--secure-port=${port}`,
    '--insecure-port=0',
    '--bind-address=127.0.0.1',
    `--cert-dir=${certs}`,
    `--token-auth-file=${join(dir, 'tokens.csv')}`,
    '--authorization-mode=Node,RBAC',
    `--service-account-key-file=${saPub}`,
    `--service-account-signing-key-file=${saKey}`,
    `--service-account-issuer=${issuer}`,
    `--api-audiences=${issuer}`,
    '--service-cluster-ip-range=10.0.0.0/24',
  ]);
  const url = `https://127.0.0.1:${port}`;
  const ready = () =>
    new Promise<boolean>((answer) => {
      const req = https.get(new URL('/readyz', url), { rejectUnauthorized: false, headers: { authorization: `Bearer ${token}` } }, (res) => {
        res.resume();
        answer(res.statusCode === 200);
      });
      req.on('error', () => answer(false));
    });
  try {
    await until('kube-apiserver to be ready', ready, 120_000);
  } catch (err) {
    await kubeApiserver.stop();
    await etcd.stop();
    throw new Error(`${(err as Error).message} (logs in ${dir})`);
  }
  return { url, token, certs, saKey, kubeApiserver, etcd };
}
