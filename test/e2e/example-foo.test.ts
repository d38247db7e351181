/**
 * The example in examples/foo-controller (the seed's flow): its controller against kapi in this process (the
 * test server) and against a separately started `kapi serve` reached through a kubeconfig, with kubectl as
 * the user: a Foo keeps one ConfigMap per replica, reports Ready, and its finalizer cleans up the external
 * resource before it goes.
 */
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { connect, type Manager } from 'kapi/sdk';
import { startTestServer, type TestServer } from 'kapi/testing';
import { Foo } from '../../examples/foo-controller/foo.js';
import { runFooController } from '../../examples/foo-controller/main.js';

const bin = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'bin', 'kapi.js');
const run = promisify(execFile);

/** What the example does, asked through kubectl (a real client) of whichever server `kubeconfig` names. */
async function exercise(kubeconfig: string, external: Set<string>): Promise<void> {
  const env = { ...process.env, KUBECONFIG: kubeconfig };
  const kubectl = async (args: string[], input?: string) => {
    // A discovery cache of this server's own (a server of another test may have had this port).
    const child = run('kubectl', ['--cache-dir', join(dirname(kubeconfig), 'kube-cache'), ...args], { env, encoding: 'utf8', timeout: 30_000 });
    if (input !== undefined) child.child.stdin!.end(input);
    return (await child).stdout;
  };
  const until = async (what: string, check: () => Promise<boolean>) => {
    for (let i = 0; i < 300; i++) {
      if (await check()) return;
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.fail(`timed out waiting for ${what}`);
  };
  const configMaps = async () => (await kubectl(['get', 'configmaps', '-l', 'foo.example.com/name=demo', '-o', 'jsonpath={.items[*].metadata.name}'])).split(' ').filter(Boolean).sort();
  await kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'foo.example.com/v1', kind: 'Foo', metadata: { name: 'demo', namespace: 'default' }, spec: { replicas: 3, message: 'hi' } }));
  await until('three ConfigMaps and Ready', async () => {
    const ready = await kubectl(['get', 'foo', 'demo', '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}']);
    return (await configMaps()).join() === 'demo-0,demo-1,demo-2' && ready === 'True';
  });
  assert.ok(external.has('default/demo'));
  assert.match(await kubectl(['get', 'fo']), /demo\s+3\s+3\s+/);
  await kubectl(['patch', 'foo', 'demo', '--type=merge', '-p', '{"spec":{"replicas":1}}']);
  await until('one ConfigMap', async () => (await configMaps()).join() === 'demo-0');
  await kubectl(['delete', 'foo', 'demo', '--wait=true', '--timeout=20s']);
  assert.equal(external.has('default/demo'), false, 'the finalizer cleaned up');
  await until('its ConfigMaps collected', async () => (await configMaps()).length === 0);
  const refused = await kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'foo.example.com/v1', kind: 'Foo', metadata: { name: 'huge', namespace: 'default' }, spec: { replicas: 101 } })).catch((err: { stderr: string }) => err.stderr);
  assert.match(refused, /spec\.replicas: Invalid value: 101: must be no more than 100/);
}

const externalResources = (set: Set<string>) => ({ ensure: (k: string) => void set.add(k), remove: (k: string) => void set.delete(k) });

describe('example: the Foo controller', () => {
  it('runs against the test server in this process', async () => {
    const external = new Set<string>();
    const s: TestServer = await startTestServer({ resources: [Foo] });
    let manager: Manager | undefined;
    try {
      manager = await runFooController(s.client('foo-controller'), externalResources(external));
      await exercise(s.kubeconfigPath, external);
    } finally {
      await manager?.stop();
      await s.stop();
    }
  });

  describe('against a separately started kapi serve', () => {
    let child: ChildProcess;
    let dir: string;
    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'kapi-example-'));
      // The server serves Foo with its strategy (--resources), as an apiserver-builder server built with it.
      const resources = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'examples', 'foo-controller', 'resources.js');
      child = spawn(process.execPath, [bin, 'serve', '--secure-port', '0', '--data-dir', join(dir, 'data'), '--resources', resources], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
      await new Promise<void>((res, rej) => {
        const timer = setTimeout(() => rej(new Error(`kapi did not start: ${out}`)), 15_000);
        child.stdout!.on('data', (c: Buffer) => {
          out += c.toString();
          if (/export KUBECONFIG=/.test(out)) {
            clearTimeout(timer);
            res();
          }
        });
        child.on('exit', (code) => rej(new Error(`kapi exited (${code}): ${out}`)));
      });
    });
    after(() => {
      if (child.pid) process.kill(child.pid, 'SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    });

    it('reconciles through a kubeconfig, with leader election on a Lease', async () => {
      const kubeconfig = join(dir, 'data', 'admin.kubeconfig');
      const client = connect({ kubeconfig, userAgent: 'foo-controller' });
      const external = new Set<string>();
      const manager = await runFooController(client, externalResources(external), { leaderElect: true });
      try {
        await exercise(kubeconfig, external);
        const lease = await client.resource({ group: 'coordination.k8s.io', version: 'v1', resource: 'leases' }).get('default', 'foo-controller');
        assert.ok(lease.spec.holderIdentity);
      } finally {
        await manager.stop();
        client.close();
      }
    });
  });
});
