// kubectl 1.20 against the published /openapi/v2 (protobuf): explain and client-side validation.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { OpenApiPublisher } from '../../src/openapi/index.js';
import { ensureServingCertificates } from '../../src/server/certs.js';
import { writeAdminKubeconfig } from '../../src/server/kubeconfig.js';
import { BUILTINS, crontabCrd } from './fixtures.js';

// The repository root: the nearest directory above this file holding package.json (from dist/ or any outDir).
function findRepoRoot(): string {
  let d = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(d, 'package.json')) && dirname(d) !== d) d = dirname(d);
  return d;
}
const repoRoot = findRepoRoot();
const KUBECTL = process.env.KAPI_TEST_KUBECTL ?? join(repoRoot, '.cache', 'bin', 'kubectl');

const resource = (name: string, kind: string, namespaced: boolean, singular: string, shortNames?: string[]) => ({
  name,
  singularName: singular,
  namespaced,
  kind,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  ...(shortNames ? { shortNames } : {}),
});

// Just enough discovery for kubectl to map kinds and resources.
const DISCOVERY: Record<string, unknown> = {
  '/api': { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '127.0.0.1:6443' }] },
  '/apis': {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: [
      { name: 'apps', versions: [{ groupVersion: 'apps/v1', version: 'v1' }], preferredVersion: { groupVersion: 'apps/v1', version: 'v1' } },
      {
        name: 'stable.example.com',
        versions: [{ groupVersion: 'stable.example.com/v1', version: 'v1' }],
        preferredVersion: { groupVersion: 'stable.example.com/v1', version: 'v1' },
      },
    ],
  },
  '/api/v1': {
    kind: 'APIResourceList',
    groupVersion: 'v1',
    resources: [resource('namespaces', 'Namespace', false, 'namespace', ['ns']), resource('configmaps', 'ConfigMap', true, 'configmap', ['cm'])],
  },
  '/apis/apps/v1': { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: 'apps/v1', resources: [resource('deployments', 'Deployment', true, 'deployment', ['deploy'])] },
  '/apis/stable.example.com/v1': {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: 'stable.example.com/v1',
    resources: [resource('crontabs', 'CronTab', true, 'crontab', ['ct'])],
  },
};

describe('kubectl 1.20 with the published OpenAPI', { skip: !existsSync(KUBECTL) && 'kubectl not installed' }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'kapi-openapi-'));
  const publisher = new OpenApiPublisher({ version: 'v1.20.2' });
  let server: ReturnType<typeof createServer> | undefined;
  let kubeconfig = '';
  const openapiRequests: string[] = [];

  before(async () => {
    publisher.setBuiltins(BUILTINS);
    publisher.setCrd(crontabCrd());
    const tls = await ensureServingCertificates(dir, { hosts: [] });
    server = createServer({ cert: tls.certPem, key: tls.keyPem }, (req: IncomingMessage, res: ServerResponse) => {
      const url = req.url ?? '/';
      const path = url.split('?')[0];
      const r = publisher.handle(url, req.headers);
      if (r) {
        openapiRequests.push(`${path} ${req.headers.accept ?? ''}`);
        res.writeHead(r.status, r.headers);
        res.end(r.body);
        return;
      }
      const doc = DISCOVERY[path];
      if (doc) {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(doc));
        return;
      }
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end('404 page not found\n');
    });
    await new Promise<void>((ok, fail) => {
      server!.once('error', fail);
      server!.listen(0, '127.0.0.1', () => ok());
    });
    const port = (server.address() as AddressInfo).port;
    kubeconfig = await writeAdminKubeconfig(dir, { server: `https://127.0.0.1:${port}`, caCertPem: tls.caCertPem, token: 'test-token' });
  });

  after(async () => {
    if (server) {
      server.closeAllConnections();
      await new Promise<void>((ok) => server!.close(() => ok()));
    }
    rmSync(dir, { recursive: true, force: true });
  });

  function kubectl(args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((done) => {
      const child = execFile(
        KUBECTL,
        ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache'), ...args],
        { timeout: 20_000, env: { ...process.env, HOME: dir } },
        (err, stdout, stderr) => done({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
      );
      if (input !== undefined) child.stdin!.end(input);
    });
  }

  it('explains a custom resource from the protobuf document', async () => {
    const r = await kubectl(['explain', 'crontab.spec']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /KIND:\s+CronTab/);
    assert.match(r.stdout, /VERSION:\s+stable\.example\.com\/v1/);
    assert.match(r.stdout, /cronSpec\s+<string>/);
    assert.match(r.stdout, /replicas\s+<integer>/);
    assert.match(r.stdout, /The cron spec defining the interval/);
    assert.ok(openapiRequests.some((x) => x.startsWith('/openapi/v2 application/com.github.proto-openapi.spec.v2@v1.0+protobuf')), openapiRequests.join('\n'));
    const rec = await kubectl(['explain', 'crontab', '--recursive']);
    assert.equal(rec.code, 0, rec.stderr);
    assert.match(rec.stdout, /metadata\s+<Object>/);
    assert.match(rec.stdout, /cronSpec\s+<string>/);
    const missing = await kubectl(['explain', 'crontab.spec.bars2']);
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /field "bars2" does not exist/);
  });

  it('explains built-in kinds', async () => {
    const ns = await kubectl(['explain', 'namespace']);
    assert.equal(ns.code, 0, ns.stderr);
    assert.match(ns.stdout, /Namespace provides a scope for Names/);
    assert.match(ns.stdout, /spec\s+<Object>/);
    const meta = await kubectl(['explain', 'configmap.metadata.labels']);
    assert.equal(meta.code, 0, meta.stderr);
    assert.match(meta.stdout, /Map of string keys and values/);
  });

  it('validates objects client-side against the schema', async () => {
    const good = 'apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: c\nspec:\n  cronSpec: "* * * * */5"\n  replicas: 2\n';
    const ok = await kubectl(['create', '--dry-run=client', '-o', 'name', '-f', '-'], good);
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(ok.stdout.trim(), 'crontab.stable.example.com/c');
    const bad = await kubectl(['create', '--dry-run=client', '-o', 'name', '-f', '-'], good.replace('replicas: 2', 'replicas: 2\n  foo: bar'));
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /unknown field "foo"/);
    const cm = await kubectl(['create', '--dry-run=client', '-o', 'name', '-f', '-'], 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: b\n');
    assert.equal(cm.code, 0, cm.stderr);
    const badCm = await kubectl(['create', '--dry-run=client', '-o', 'name', '-f', '-'], 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndatta:\n  a: b\n');
    assert.match(badCm.stderr, /unknown field "datta"/);
  });
});
