/**
 * A test API server (package `kapi/testing`), as envtest is for Go operators but in milliseconds: a fresh
 * kapi in this process on the memory store, with CRDs (objects or files), resources defined in TypeScript,
 * and controllers running against it; a client and an admin kubeconfig for the test; `stop()` ends it and
 * removes what it wrote. Usable from node:test, vitest or jest.
 */
import { copyFileSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { extname, join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { start, type Server, type ServerOptions } from '../index.js';
import type { Client } from '../sdk/client.js';
import { Manager, type ControllerOptions, type ManagerOptions } from '../sdk/controller.js';

/**
 * What `startTestServer` takes: `start`'s options (but the data directory, port and store, which it
 * chooses), and CRDs and controllers to set up before it resolves.
 */
export interface TestServerOptions extends Omit<ServerOptions, 'dataDir' | 'port' | 'storage'> {
  /** CustomResourceDefinitions to create (served when startTestServer resolves). */
  crds?: Array<Record<string, unknown>>;
  /** Files or directories of CRD manifests (YAML, several documents each, or JSON). */
  crdDirectoryPaths?: string[];
  /** Controllers to run against the server (a Manager with the admin client). */
  controllers?: ControllerOptions[];
  /** Options of that Manager. */
  manager?: Omit<ManagerOptions, 'leaderElection'>;
}

/** A running test server: a Server whose `stop()` also stops the Manager and removes the data directory. */
export interface TestServer extends Server {
  /** An admin client in the process. */
  client(userAgent?: string): Client;
  /** The Manager running `controllers` (started; absent without controllers). */
  manager?: Manager;
}

/** The CRDs in files and directories of manifests. */
export function readCrds(paths: readonly string[]): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  const readFile = (file: string) => {
    const text = readFileSync(file, 'utf8');
    const docs = extname(file) === '.json' ? [JSON.parse(text)] : parseAllDocuments(text).map((d) => d.toJSON());
    for (const doc of docs) if (doc?.kind === 'CustomResourceDefinition') out.push(doc);
  };
  for (const p of paths) {
    if (statSync(p).isDirectory()) {
      for (const f of readdirSync(p).sort()) if (['.yaml', '.yml', '.json'].includes(extname(f))) readFile(join(p, f));
    } else readFile(p);
  }
  return out;
}

/**
 * The certificates and keys (data dir's pki/) of the process's first test server, kept in a directory of their own
 * and hard-linked into the later ones' pki/: a start then reads them (checked as any data dir's are: a certificate
 * for other hosts, or expired, is made anew, written over its own link only) instead of making a CA, serving and
 * client certificates and their keys (about 4 ms a start), or copying them. Removed when the process exits.
 */
let processPki: { dir: string; names: string[] } | undefined;

/**
 * Starts a test server, as envtest's Environment.Start: a kapi in this process on the memory store, a free
 * port and a fresh temporary data directory, with the CRDs created and the controllers' Manager started.
 * On failure it cleans up what it started and rejects (e.g. with the StatusError of a CRD refused).
 */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const { crds = [], crdDirectoryPaths = [], controllers = [], manager: managerOptions, ...serverOptions } = options;
  const dir = mkdtempSync(join(tmpdir(), 'kapi-test-'));
  let server: Server | undefined;
  let manager: Manager | undefined;
  const cleanup = async () => {
    await manager?.stop();
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const pki = join(dir, 'pki');
    if (processPki) {
      mkdirSync(pki, { mode: 0o700 });
      for (const name of processPki.names) linkSync(join(processPki.dir, name), join(pki, name));
    }
    // The admin token, written here without the fsync a data dir that outlives the process needs.
    writeFileSync(join(dir, 'admin.token'), `${randomBytes(32).toString('base64url')}\n`, { mode: 0o600 });
    server = await start({ ...serverOptions, dataDir: dir, port: 0, storage: { kind: 'memory' } });
    if (!processPki) {
      const shared = mkdtempSync(join(tmpdir(), 'kapi-test-pki-'));
      const names = readdirSync(pki);
      for (const name of names) copyFileSync(join(pki, name), join(shared, name));
      processPki = { dir: shared, names };
      process.once('exit', () => rmSync(shared, { recursive: true, force: true }));
    }
    const client = server.client('kapi-testing');
    const definitions = client.resource({ group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions' });
    for (const crd of [...crds, ...readCrds(crdDirectoryPaths)]) await definitions.create(undefined, crd as never);
    if (controllers.length > 0) {
      manager = new Manager(server.client('kapi-testing-controllers'), managerOptions);
      for (const c of controllers) manager.add(c);
      await manager.start();
    }
  } catch (err) {
    await cleanup().catch(() => {});
    throw err;
  }
  const s = server;
  return { ...s, manager, stop: cleanup };
}
