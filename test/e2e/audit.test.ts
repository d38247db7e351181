/**
 * Auditing as kube-apiserver's: a policy file chooses the level per request,
 * events (audit.k8s.io/v1) go to a log file as JSON lines, with the
 * authenticated and impersonated users, the object referred to, the response
 * status, the request and response bodies at RequestResponse, and the
 * request's Audit-ID (the client's own when it sends one).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http2 from 'node:http2';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { startKapi } from '../../src/kapi/index.js';
import { startTestServer, type TestServer } from './harness.js';

const POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  nonResourceURLs: ["/healthz*", "/version"]
- level: None
  resources: [{group: coordination.k8s.io, resources: [leases]}]
- level: None
  userGroups: [system:serviceaccounts]
- level: RequestResponse
  resources: [{group: "", resources: [configmaps]}]
  omitManagedFields: true
- level: Metadata
`;

describe('audit', () => {
  let s: TestServer;
  let dir: string;
  let log: string;
  const events = () =>
    readFileSync(log, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
  const eventFor = (auditID: string, stage = 'ResponseComplete') => events().find((e) => e.auditID === auditID && e.stage === stage);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kapi-audit-'));
    writeFileSync(join(dir, 'policy.yaml'), POLICY);
    log = join(dir, 'audit.log');
    s = await startTestServer({ auditPolicyFile: join(dir, 'policy.yaml'), auditLogPath: log });
  });
  after(async () => {
    await s.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('records a create at RequestResponse: who, what, the bodies and the outcome', async () => {
    const res = await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'audited' }, data: { k: 'v' } } });
    assert.equal(res.status, 201);
    const id = res.headers['audit-id'] as string;
    const e = eventFor(id);
    assert.ok(e, `an event for ${id}`);
    assert.equal(e.kind, 'Event');
    assert.equal(e.apiVersion, 'audit.k8s.io/v1');
    assert.equal(e.level, 'RequestResponse');
    assert.equal(e.verb, 'create');
    assert.equal(e.requestURI, '/api/v1/namespaces/default/configmaps');
    assert.deepEqual(e.objectRef, { resource: 'configmaps', namespace: 'default', apiVersion: 'v1' });
    assert.deepEqual(e.user, { username: 'kapi-admin', uid: 'kapi-admin', groups: ['system:masters', 'system:authenticated'] });
    assert.deepEqual(e.sourceIPs, ['127.0.0.1']);
    assert.deepEqual(e.responseStatus, { metadata: {}, code: 201 });
    assert.deepEqual(e.requestObject, { metadata: { name: 'audited' }, data: { k: 'v' } });
    assert.equal(e.responseObject.metadata.uid, res.json.metadata.uid);
    assert.equal(e.responseObject.metadata.managedFields, undefined, 'omitManagedFields');
    assert.deepEqual(e.annotations, { 'authorization.k8s.io/decision': 'allow', 'authorization.k8s.io/reason': '' });
    assert.match(e.requestReceivedTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    assert.ok(e.stageTimestamp >= e.requestReceivedTimestamp);
    assert.equal(statSync(log).mode & 0o777, 0o600);
  });

  it('records failures at Metadata with their Status, and who was impersonated', async () => {
    const missing = await s.request('GET', '/api/v1/namespaces/default/secrets/nope');
    assert.equal(missing.status, 404);
    const e = eventFor(missing.headers['audit-id'] as string);
    assert.equal(e.level, 'Metadata');
    assert.equal(e.requestObject, undefined);
    assert.deepEqual(e.responseStatus, { metadata: {}, status: 'Failure', message: 'secrets "nope" not found', reason: 'NotFound', details: missing.json.details, code: 404 });
    const session = http2.connect(s.kapi.url, { ca: s.kapi.caCertPem });
    try {
      const headers = await new Promise<http2.IncomingHttpHeaders>((resolve, reject) => {
        const req = session.request({ ':path': '/api/v1/namespaces', authorization: `Bearer ${s.kapi.adminToken}`, 'impersonate-user': 'bob', 'audit-id': 'client-chosen-id-1' });
        req.on('response', resolve);
        req.on('error', reject);
        req.resume();
      });
      assert.equal(headers['audit-id'], 'client-chosen-id-1', "the client's Audit-ID is the request's");
    } finally {
      session.close();
    }
    const list = eventFor('client-chosen-id-1');
    assert.equal(list.verb, 'list');
    assert.equal(list.user.username, 'kapi-admin');
    assert.deepEqual(list.impersonatedUser, { username: 'bob', groups: ['system:authenticated'] });
  });

  it('records a watch when it starts and when it ends; leaves out what the policy says', async () => {
    const session = http2.connect(s.kapi.url, { ca: s.kapi.caCertPem });
    try {
      await new Promise<void>((resolve, reject) => {
        const req = session.request({ ':path': '/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1', authorization: `Bearer ${s.kapi.adminToken}`, 'audit-id': 'watch-id-1' });
        req.on('error', reject);
        req.on('end', resolve);
        req.resume();
      });
    } finally {
      session.close();
    }
    const deadline = Date.now() + 5000;
    while (!eventFor('watch-id-1') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(eventFor('watch-id-1', 'ResponseStarted')?.responseStatus, { metadata: {}, code: 200 });
    assert.equal(eventFor('watch-id-1')?.verb, 'watch');
    const all = events();
    assert.ok(!all.some((e) => e.stage === 'RequestReceived'), 'omitStages');
    assert.ok(!all.some((e) => e.objectRef?.resource === 'leases'), 'leases are not audited');
    assert.ok(!all.some((e) => e.user?.username?.startsWith('system:serviceaccount:')), 'the controllers are not audited');
    assert.ok(!all.some((e) => e.requestURI?.startsWith('/healthz')));
  });

  it('drops events it cannot write, and reports it, without failing requests or the process', async () => {
    const reports: string[] = [];
    const full = await startKapi({ dataDir: join(dir, 'full-data'), port: 0, auditPolicyFile: join(dir, 'policy.yaml'), auditLogPath: '/dev/full', warn: (m) => reports.push(m) });
    try {
      const https = await import('node:https');
      const status = await new Promise<number>((resolve, reject) => {
        https.get(new URL('/api/v1/namespaces/default/configmaps', full.url), { ca: full.caCertPem, headers: { Authorization: `Bearer ${full.adminToken}` } }, (r) => {
          r.resume();
          resolve(r.statusCode ?? 0);
        }).on('error', reject);
      });
      assert.equal(status, 200);
      assert.ok(reports.some((r) => r.startsWith('kapi: audit log /dev/full:')), reports.join('\n'));
    } finally {
      await full.stop();
    }
  });

  it('refuses to start with a policy that is not valid, naming the problem', async () => {
    writeFileSync(join(dir, 'bad.yaml'), 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Everything\n');
    await assert.rejects(
      startKapi({ dataDir: join(dir, 'bad-data'), port: 0, auditPolicyFile: join(dir, 'bad.yaml'), auditLogPath: join(dir, 'bad.log') }),
      /rules\[0\]\.level: Unsupported value: "Everything": supported values: "None", "Metadata", "Request", "RequestResponse"/,
    );
  });
});

describe('the example audit policy', () => {
  it('keeps Secrets at Metadata and writes with their bodies, and leaves health checks out', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kapi-audit-example-'));
    const log = join(dir, 'audit.log');
    const policy = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'examples', 'audit-policy.yaml');
    const s = await startTestServer({ auditPolicyFile: policy, auditLogPath: log });
    try {
      const secret = await s.request('POST', '/api/v1/namespaces/default/secrets', { body: { metadata: { name: 'pw' }, stringData: { password: 'hunter2-never-logged' } } });
      const deploy = await s.request('POST', '/apis/apps/v1/namespaces/default/deployments', {
        body: { metadata: { name: 'web' }, spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } } },
      });
      await s.request('GET', '/healthz');
      await s.kapi.stop();
      const text = readFileSync(log, 'utf8');
      assert.ok(!text.includes('hunter2'), 'no Secret content in the log');
      const events = text.split('\n').filter(Boolean).map((l) => JSON.parse(l));
      const of = (res: { headers: Record<string, unknown> }) => events.find((e) => e.auditID === res.headers['audit-id'] && e.stage === 'ResponseComplete');
      assert.equal(of(secret).level, 'Metadata');
      assert.equal(of(deploy).level, 'Request');
      assert.equal(of(deploy).requestObject.metadata.name, 'web');
      assert.ok(!events.some((e) => e.requestURI === '/healthz'));
    } finally {
      await s.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
