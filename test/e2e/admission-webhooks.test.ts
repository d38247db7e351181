/**
 * Admission webhooks against real HTTPS webhook servers on loopback: a validating webhook's denial as
 * kubectl shows it, a mutating webhook reached through a Service and its Endpoints (JSONPatch and a
 * warning), namespace and object selectors, the AdmissionReview as upstream builds it, timeouts with
 * both failure policies, and the configurations' validation.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ensureServingCertificates } from '../../src/server/certs.js';
import { startTestServer, type TestServer } from './harness.js';

const ADMISSION = '/apis/admissionregistration.k8s.io/v1';

describe('admission webhooks', () => {
  let s: TestServer;
  let server: https.Server;
  let dir: string;
  let port = 0;
  let caBundle = '';
  const seen: any[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kapi-webhooks-'));
    const tls = await ensureServingCertificates(dir, { hosts: ['127.0.0.1', 'hooks.default.svc'] });
    caBundle = Buffer.from(tls.caCertPem).toString('base64');
    server = https.createServer({ cert: tls.certPem, key: tls.keyPem }, (req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const review = JSON.parse(body);
        const url = new URL(req.url ?? '/', 'https://x');
        seen.push({ path: url.pathname, timeout: url.searchParams.get('timeout'), review });
        const respond = (response: Record<string, unknown>) => {
          res.writeHead(200, { 'Content-Type': 'application/json' });
          res.end(JSON.stringify({ apiVersion: review.apiVersion, kind: 'AdmissionReview', response: { uid: review.request.uid, ...response } }));
        };
        if (url.pathname === '/deny') return respond({ allowed: false, status: { code: 403, reason: 'Forbidden', message: 'no labels like that' } });
        if (url.pathname === '/mutate') {
          const labels = review.request.object.metadata.labels;
          const patch = labels ? [{ op: 'add', path: '/metadata/labels/mutated', value: 'yes' }] : [{ op: 'add', path: '/metadata/labels', value: { mutated: 'yes' } }];
          return respond({ allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(patch)).toString('base64'), warnings: ['mutated by the test webhook'] });
        }
        if (url.pathname === '/slow') return setTimeout(() => respond({ allowed: true }), 1500);
        if (url.pathname === '/v1beta1') {
          // An old webhook: no uid and no patchType in its answer, which v1beta1 allows.
          const patch = Buffer.from(JSON.stringify([{ op: 'add', path: '/metadata/annotations', value: { old: 'webhook' } }])).toString('base64');
          res.writeHead(200, { 'Content-Type': 'application/json' });
          return res.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1beta1', kind: 'AdmissionReview', response: { allowed: true, patch } }));
        }
        respond({ allowed: true });
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
    s = await startTestServer();
    const ok = (res: { status: number; text: string }) => assert.ok(res.status < 300, res.text);
    ok(await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'team-a', labels: { team: 'a' } } } }));
    ok(await s.request('POST', '/api/v1/namespaces/default/services', { body: { metadata: { name: 'hooks' }, spec: { ports: [{ port: 443, targetPort: port }] } } }));
    ok(await s.request('POST', '/api/v1/namespaces/default/endpoints', { body: { metadata: { name: 'hooks' }, subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ port }] }] } }));
    const rule = (resources: string[]) => [{ operations: ['CREATE', 'UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources }];
    const hook = (name: string, path: string, resources: string[], extra: Record<string, unknown> = {}) => ({
      name,
      rules: rule(resources),
      clientConfig: { url: `https://127.0.0.1:${port}${path}`, caBundle },
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
      ...extra,
    });
    ok(
      await s.request('POST', `${ADMISSION}/validatingwebhookconfigurations`, {
        body: {
          metadata: { name: 'checks' },
          webhooks: [
            hook('deny.example.com', '/deny', ['configmaps'], { objectSelector: { matchLabels: { deny: 'yes' } } }),
            hook('slow-ignored.example.com', '/slow', ['secrets'], { timeoutSeconds: 1, failurePolicy: 'Ignore' }),
            hook('slow-failing.example.com', '/slow', ['serviceaccounts'], { timeoutSeconds: 1 }),
          ],
        },
      }),
    );
    ok(
      await s.request('POST', `${ADMISSION}/mutatingwebhookconfigurations`, {
        body: {
          metadata: { name: 'mutators' },
          webhooks: [
            {
              ...hook('mutate.example.com', '/mutate', ['configmaps'], { namespaceSelector: { matchLabels: { team: 'a' } } }),
              clientConfig: { service: { namespace: 'default', name: 'hooks', path: '/mutate' }, caBundle },
            },
          ],
        },
      }),
    );
    // The configurations are matched from the watch cache: wait until they are there.
    const cache = s.kapi.registry.lookup('admissionregistration.k8s.io', 'v1', 'mutatingwebhookconfigurations')!.store.cache;
    for (let i = 0; i < 200 && cache.size === 0; i++) await new Promise((r) => setTimeout(r, 10));
  });
  after(async () => {
    await s.stop();
    server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers a validating webhook\'s denial as kube-apiserver does, to kubectl too', async () => {
    const res = await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'denied', labels: { deny: 'yes' } } } });
    assert.equal(res.status, 403);
    assert.deepEqual([res.json.reason, res.json.message], ['Forbidden', 'admission webhook "deny.example.com" denied the request: no labels like that']);
    const kubectl = await s.kubectl(['create', '-f', '-'], { input: 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: denied2, namespace: default, labels: {deny: "yes"}}\n' });
    assert.notEqual(kubectl.code, 0);
    assert.match(kubectl.stderr, /Error from server \(Forbidden\): error when creating "STDIN": admission webhook "deny\.example\.com" denied the request: no labels like that/);
    assert.equal((await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'allowed' } } })).status, 201, 'the object selector leaves this one out');
  });

  it('applies a mutating webhook\'s patch, reached through its Service, in the namespaces it selects', async () => {
    seen.length = 0;
    const res = await s.request('POST', '/api/v1/namespaces/team-a/configmaps', { body: { metadata: { name: 'mutated' }, data: { a: '1' } } });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.json.metadata.labels.mutated, 'yes');
    assert.match(String(res.headers.warning), /mutated by the test webhook/);
    const review = seen.find((e) => e.path === '/mutate')?.review;
    assert.equal(seen.find((e) => e.path === '/mutate')?.timeout, '10s');
    assert.equal(review.apiVersion, 'admission.k8s.io/v1');
    const { uid, object, ...request } = review.request;
    assert.match(uid, /^[0-9a-f-]{36}$/);
    assert.equal(object.metadata.name, 'mutated');
    assert.deepEqual(request, {
      kind: { group: '', version: 'v1', kind: 'ConfigMap' },
      resource: { group: '', version: 'v1', resource: 'configmaps' },
      requestKind: { group: '', version: 'v1', kind: 'ConfigMap' },
      requestResource: { group: '', version: 'v1', resource: 'configmaps' },
      name: 'mutated',
      namespace: 'team-a',
      operation: 'CREATE',
      userInfo: { username: 'kapi-admin', uid: 'kapi-admin', groups: ['system:masters', 'system:authenticated'] },
      oldObject: null,
      dryRun: false,
      options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1' },
    });
    const elsewhere = await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'plain' } } });
    assert.equal(elsewhere.json.metadata.labels, undefined, 'the namespace selector leaves default out');
    // An update is sent with the object it replaces.
    seen.length = 0;
    const updated = await s.request('PUT', '/api/v1/namespaces/team-a/configmaps/mutated', { body: { ...res.json, data: { a: '2' } } });
    assert.equal(updated.status, 200, updated.text);
    const update = seen.find((e) => e.path === '/mutate')?.review.request;
    assert.deepEqual([update.operation, update.oldObject.data, update.object.data, update.options.kind], ['UPDATE', { a: '1' }, { a: '2' }, 'UpdateOptions']);
  });

  it('sends a write to another version of a resource in the version the rules name (matchPolicy Equivalent), and not with Exact', async () => {
    const GROUP = 'equiv.example.com';
    const schema = { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } } };
    const crd = await s.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
      body: {
        metadata: { name: `things.${GROUP}` },
        spec: {
          group: GROUP,
          scope: 'Namespaced',
          names: { plural: 'things', kind: 'Thing' },
          versions: [
            { name: 'v1', served: true, storage: true, schema },
            { name: 'v2', served: true, storage: false, schema },
          ],
        },
      },
    });
    assert.equal(crd.status, 201, crd.text);
    const rules = [{ operations: ['CREATE'], apiGroups: [GROUP], apiVersions: ['v1'], resources: ['things'] }];
    const config = (name: string, path: string, matchPolicy: string) => ({
      metadata: { name },
      webhooks: [{ name: `${name}.example.com`, matchPolicy, rules, clientConfig: { url: `https://127.0.0.1:${port}${path}`, caBundle }, sideEffects: 'None', admissionReviewVersions: ['v1'] }],
    });
    assert.equal((await s.request('POST', `${ADMISSION}/mutatingwebhookconfigurations`, { body: config('equivalent', '/mutate', 'Equivalent') })).status, 201);
    assert.equal((await s.request('POST', `${ADMISSION}/validatingwebhookconfigurations`, { body: config('exact', '/deny', 'Exact') })).status, 201);
    const thing = (version: string, name: string) => ({ apiVersion: `${GROUP}/${version}`, kind: 'Thing', metadata: { name }, spec: { size: 1 } });
    let made: Awaited<ReturnType<TestServer['request']>> | undefined;
    for (let i = 0; i < 200; i++) {
      seen.length = 0;
      made = await s.request('POST', `/apis/${GROUP}/v2/namespaces/default/things`, { body: thing('v2', `t${i}`) });
      if (made.status === 201 && made.json.metadata.labels?.mutated) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.equal(made!.status, 201, made!.text);
    assert.equal(made!.json.apiVersion, `${GROUP}/v2`);
    assert.deepEqual(made!.json.metadata.labels, { mutated: 'yes' }, 'the patch to the v1 object reaches the v2 write');
    const review = seen.find((e) => e.path === '/mutate')!.review.request;
    assert.deepEqual(
      [review.kind, review.resource, review.requestKind, review.requestResource, review.object.apiVersion],
      [
        { group: GROUP, version: 'v1', kind: 'Thing' },
        { group: GROUP, version: 'v1', resource: 'things' },
        { group: GROUP, version: 'v2', kind: 'Thing' },
        { group: GROUP, version: 'v2', resource: 'things' },
        `${GROUP}/v1`,
      ],
    );
    assert.equal(seen.some((e) => e.path === '/deny'), false, 'Exact leaves other versions out');
    const exact = await s.request('POST', `/apis/${GROUP}/v1/namespaces/default/things`, { body: thing('v1', 'exact') });
    assert.equal(exact.status, 403, 'Exact still matches its own version');
  });

  it('skips an unreachable webhook that may be ignored, and fails on one that may not', async () => {
    const ignored = await s.request('POST', '/api/v1/namespaces/default/secrets', { body: { metadata: { name: 's' } } });
    assert.equal(ignored.status, 201, ignored.text);
    const failed = await s.request('POST', '/api/v1/namespaces/default/serviceaccounts', { body: { metadata: { name: 'sa' } } });
    assert.equal(failed.status, 500);
    assert.equal(failed.json.message, `Internal error occurred: failed calling webhook "slow-failing.example.com": failed to call webhook: Post "https://127.0.0.1:${port}/slow?timeout=1s": context deadline exceeded`);
  });

  it('calls a webhook only when its matchConditions hold, and refuses conditions that do not compile', async () => {
    const conditioned = await s.request('POST', `${ADMISSION}/validatingwebhookconfigurations`, {
      body: {
        metadata: { name: 'conditioned' },
        webhooks: [
          {
            name: 'cond.example.com',
            rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['limitranges'] }],
            clientConfig: { url: `https://127.0.0.1:${port}/deny`, caBundle },
            sideEffects: 'None',
            admissionReviewVersions: ['v1'],
            matchConditions: [
              // The admin may do anything, so may `bypass` (asked of RBAC through the authorizer variable).
              { name: 'not-a-bypasser', expression: "!authorizer.requestResource.check('bypass').allowed() || object.metadata.name.startsWith('check-')" },
              { name: 'labelled', expression: "has(object.metadata.labels) && object.metadata.labels['check'] == 'yes'" },
            ],
          },
        ],
      },
    });
    assert.equal(conditioned.status, 201, conditioned.text);
    const cache = s.kapi.registry.lookup('admissionregistration.k8s.io', 'v1', 'validatingwebhookconfigurations')!.store.cache;
    for (let i = 0; i < 200 && !cache.get('/registry/admissionregistration.k8s.io/validatingwebhookconfigurations/conditioned'); i++) await new Promise((r) => setTimeout(r, 10));
    const create = (name: string, labels?: Record<string, string>) => s.request('POST', '/api/v1/namespaces/default/limitranges', { body: { metadata: { name, labels }, spec: { limits: [] } } });
    assert.equal((await create('check-unlabelled')).status, 201, 'the second condition does not hold');
    assert.equal((await create('other', { check: 'yes' })).status, 201, 'the first condition does not hold for the admin');
    const denied = await create('check-labelled', { check: 'yes' });
    assert.deepEqual([denied.status, denied.json.message], [403, 'admission webhook "cond.example.com" denied the request: no labels like that']);
    const bad = await s.request('POST', `${ADMISSION}/validatingwebhookconfigurations`, {
      body: {
        metadata: { name: 'bad-conditions' },
        webhooks: [{ ...conditioned.json.webhooks[0], matchConditions: [{ name: 'x', expression: "'a' + 'b'" }, { name: 'x', expression: 'nope(' }] }],
      },
    });
    assert.equal(bad.status, 422);
    const messages = bad.json.details.causes.map((c: any) => `${c.field}: ${c.message}`);
    assert.equal(messages[0], `webhooks[0].matchConditions[0].expression: Invalid value: "'a' + 'b'": must evaluate to bool`);
    assert.equal(messages[1], 'webhooks[0].matchConditions[1].name: Duplicate value: "x"');
    assert.match(messages[2], /^webhooks\[0\]\.matchConditions\[1\]\.expression: Invalid value: "nope\(": compilation failed: ERROR: <input>:1:/);
  });

  it('speaks v1beta1 to a webhook that only speaks it, as leniently as upstream', async () => {
    const made = await s.request('POST', `${ADMISSION}/mutatingwebhookconfigurations`, {
      body: {
        metadata: { name: 'old' },
        webhooks: [
          {
            name: 'old.example.com',
            rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['resourcequotas'] }],
            clientConfig: { url: `https://127.0.0.1:${port}/v1beta1`, caBundle },
            sideEffects: 'None',
            admissionReviewVersions: ['v1beta1'],
          },
        ],
      },
    });
    assert.equal(made.status, 201, made.text);
    const cache = s.kapi.registry.lookup('admissionregistration.k8s.io', 'v1', 'mutatingwebhookconfigurations')!.store.cache;
    for (let i = 0; i < 200 && cache.size < 2; i++) await new Promise((r) => setTimeout(r, 10));
    seen.length = 0;
    const quota = await s.request('POST', '/api/v1/namespaces/default/resourcequotas', { body: { metadata: { name: 'q' } } });
    assert.equal(quota.status, 201, quota.text);
    assert.deepEqual(quota.json.metadata.annotations, { old: 'webhook' });
    assert.equal(seen.find((e) => e.path === '/v1beta1')?.review.apiVersion, 'admission.k8s.io/v1beta1');
  });

  it('counts webhook calls and rejections under upstream\'s metric names', async () => {
    const metrics = (await s.request('GET', '/metrics')).text;
    assert.match(metrics, /apiserver_admission_webhook_rejection_count\{error_type="no_error",name="deny\.example\.com",operation="CREATE",rejection_code="403",type="validating"\} 2/);
    assert.match(metrics, /apiserver_admission_webhook_rejection_count\{error_type="calling_webhook_error",name="slow-failing\.example\.com",operation="CREATE",rejection_code="0",type="validating"\} 1/);
    assert.match(metrics, /apiserver_admission_webhook_admission_duration_seconds_count\{name="mutate\.example\.com",operation="CREATE",rejected="false",type="admit"\} \d+/);
    assert.match(metrics, /apiserver_admission_webhook_request_total\{code="200",name="mutate\.example\.com",operation="UPDATE",rejected="false",type="admit"\} 1/);
  });

  it('validates webhook configurations with upstream\'s messages', async () => {
    const bad = await s.request('POST', `${ADMISSION}/validatingwebhookconfigurations`, {
      body: { metadata: { name: 'bad' }, webhooks: [{ name: 'short.name', rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }], clientConfig: { url: 'http://127.0.0.1/x' }, admissionReviewVersions: ['v1'], timeoutSeconds: 31 }] },
    });
    assert.equal(bad.status, 422);
    assert.deepEqual(bad.json.details.causes.map((c: any) => `${c.field}: ${c.message}`), [
      'webhooks[0].name: Invalid value: "short.name": should be a domain with at least three segments separated by dots',
      'webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun',
      'webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds',
      `webhooks[0].clientConfig.url: Invalid value: "http://127.0.0.1/x": 'https' is the only allowed URL scheme`,
    ]);
    const stored = (await s.request('GET', `${ADMISSION}/validatingwebhookconfigurations/checks`)).json.webhooks[0];
    assert.deepEqual([stored.failurePolicy, stored.matchPolicy, stored.timeoutSeconds, stored.namespaceSelector, stored.rules[0].scope], ['Fail', 'Equivalent', 10, {}, '*']);
  });
});

describe('admission hooks in the process', () => {
  it('sees a built-in object as decoded: undeclared fields dropped, defaults set; Strict refuses before any hook is asked', async () => {
    const seen: any[] = [];
    const s = await startTestServer({
      admissionHooks: [
        {
          name: 'decoded.example.com',
          type: 'Mutating',
          rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['services'] }],
          review(request) {
            seen.push(request.object);
            return { allowed: true };
          },
        },
      ],
    });
    try {
      const body = { metadata: { name: 'web' }, spec: { ports: [{ port: 80 }], color: 'blue' }, extra: 'x' };
      const made = await s.request('POST', '/api/v1/namespaces/default/services', { body });
      assert.equal(made.status, 201, made.text);
      assert.equal(seen.length, 1);
      assert.deepEqual([seen[0].extra, seen[0].spec.color], [undefined, undefined], 'undeclared fields were dropped as the body was decoded');
      assert.deepEqual([seen[0].spec.type, seen[0].spec.sessionAffinity, seen[0].spec.ports[0].protocol], ['ClusterIP', 'None', 'TCP'], 'defaults were set');
      const strict = await s.request('POST', '/api/v1/namespaces/default/services?fieldValidation=Strict', { body: { ...body, metadata: { name: 'strict' } } });
      assert.equal(strict.status, 400, strict.text);
      assert.match(strict.json.message, /^strict decoding error: unknown field "spec.color", unknown field "extra"$/);
      assert.equal(seen.length, 1, 'no hook is asked about a body that does not decode');
    } finally {
      await s.stop();
    }
  });

  it('asks TypeScript hooks as webhooks are asked, with their answers applied the same way', async () => {
    const requests: any[] = [];
    const s = await startTestServer({
      admissionHooks: [
        {
          name: 'owner.example.com',
          type: 'Mutating',
          rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
          review(request) {
            requests.push(request);
            return { allowed: true, patch: [{ op: 'add', path: '/metadata/annotations', value: { owner: String((request.userInfo as any).username) } }], warnings: ['annotated in process'] };
          },
        },
        {
          name: 'names.example.com',
          type: 'Validating',
          rules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
          review: (request) => ((request.object as any).metadata.name === 'forbidden' ? { allowed: false, status: { code: 422, reason: 'Invalid', message: 'that name is taken' } } : { allowed: true }),
        },
      ],
    });
    try {
      const made = await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'fine' } } });
      assert.equal(made.status, 201, made.text);
      assert.deepEqual(made.json.metadata.annotations, { owner: 'kapi-admin' });
      assert.match(String(made.headers.warning), /annotated in process/);
      assert.deepEqual([requests[0].operation, requests[0].kind, requests[0].namespace], ['CREATE', { group: '', version: 'v1', kind: 'ConfigMap' }, 'default']);
      const refused = await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'forbidden' } } });
      assert.deepEqual([refused.status, refused.json.reason, refused.json.message], [422, 'Invalid', 'admission webhook "names.example.com" denied the request: that name is taken']);
      assert.equal((await s.request('POST', '/api/v1/namespaces/default/secrets', { body: { metadata: { name: 'forbidden' } } })).status, 201, 'the rules decide what a hook sees');
    } finally {
      await s.stop();
    }
    // Reinvocation: the first hook asks to be called again when a later one changes the object.
    let calls = 0;
    const r = await startTestServer({
      admissionHooks: [
        {
          name: 'first.example.com',
          type: 'Mutating',
          reinvocationPolicy: 'IfNeeded',
          rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
          review: (request) => {
            if ((request.object as any).metadata.name === 'twice') calls++;
            const labels = (request.object as any).metadata.labels ?? {};
            return { allowed: true, patch: [{ op: 'add', path: '/metadata/labels', value: { ...labels, seen: labels.second ? 'second' : 'none' } }] };
          },
        },
        {
          name: 'second.example.com',
          type: 'Mutating',
          rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
          review: () => ({ allowed: true, patch: [{ op: 'add', path: '/metadata/labels/second', value: 'yes' }] }),
        },
      ],
    });
    try {
      const made = await r.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'twice' } } });
      assert.equal(made.status, 201, made.text);
      assert.deepEqual([calls, made.json.metadata.labels], [2, { seen: 'second', second: 'yes' }]);
    } finally {
      await r.stop();
    }
    await assert.rejects(startTestServer({ admissionHooks: [{ name: 'x', type: 'Sometimes', rules: [], review: () => ({ allowed: true }) } as never] }), /admission hook 0 \(x\): type must be Mutating or Validating/);
  });
});

describe('admission of a built-in served in two versions', () => {
  it('gives a hook a HorizontalPodAutoscaler in the version its rules name, whichever version was written', async () => {
    const requests: any[] = [];
    const s = await startTestServer({
      admissionHooks: [
        {
          name: 'hpa-v1.example.com',
          type: 'Mutating',
          rules: [{ operations: ['CREATE'], apiGroups: ['autoscaling'], apiVersions: ['v1'], resources: ['horizontalpodautoscalers'] }],
          review(request) {
            requests.push(request);
            return { allowed: true, patch: [{ op: 'replace', path: '/spec/maxReplicas', value: 9 }] };
          },
        },
      ],
    });
    try {
      const target = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' };
      const v1 = await s.request('POST', '/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers', {
        body: { apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { name: 'a' }, spec: { scaleTargetRef: target, maxReplicas: 3, targetCPUUtilizationPercentage: 50 } },
      });
      assert.equal(v1.status, 201, v1.text);
      assert.equal(v1.json.spec.maxReplicas, 9);
      assert.equal(v1.json.spec.targetCPUUtilizationPercentage, 50);
      assert.equal(requests[0].object.apiVersion, 'autoscaling/v1');
      assert.equal(requests[0].object.spec.targetCPUUtilizationPercentage, 50, 'a v1 object, not the stored v2 one');
      const v2 = await s.request('POST', '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers', {
        body: {
          apiVersion: 'autoscaling/v2',
          kind: 'HorizontalPodAutoscaler',
          metadata: { name: 'b' },
          spec: { scaleTargetRef: target, maxReplicas: 3, metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } }] },
        },
      });
      assert.equal(v2.status, 201, v2.text);
      assert.equal(v2.json.spec.maxReplicas, 9);
      assert.deepEqual(v2.json.spec.metrics, [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } }]);
      assert.deepEqual([requests[1].kind.version, requests[1].requestKind.version, requests[1].object.spec.targetCPUUtilizationPercentage], ['v1', 'v2', 70]);
    } finally {
      await s.stop();
    }
  });
});

describe('admission: what a webhook may and may not do', () => {
  it('refuses a patch that changes the kind, asks mutating webhooks on DELETE, and matches selectors on the object as mutated so far', async () => {
    const seenByInjected: string[] = [];
    const rule = (operations: string[], resources: string[]) => [{ operations, apiGroups: [''], apiVersions: ['v1'], resources }];
    const s = await startTestServer({
      admissionHooks: [
        {
          name: 'kind-changer.example.com',
          type: 'Mutating',
          rules: rule(['CREATE'], ['secrets']),
          review: () => ({ allowed: true, patch: [{ op: 'replace', path: '/kind', value: 'ConfigMap' }] }),
        },
        {
          name: 'guard.example.com',
          type: 'Mutating',
          rules: rule(['DELETE'], ['configmaps']),
          objectSelector: { matchExpressions: [{ key: 'skip', operator: 'DoesNotExist' }] },
          review: () => ({ allowed: false, status: { code: 403, reason: 'Forbidden', message: 'kept' } }),
        },
        {
          name: 'injector.example.com',
          type: 'Mutating',
          rules: rule(['CREATE'], ['serviceaccounts']),
          review: () => ({ allowed: true, patch: [{ op: 'add', path: '/metadata/labels', value: { inject: 'true' } }] }),
        },
        {
          name: 'injected.example.com',
          type: 'Mutating',
          rules: rule(['CREATE'], ['serviceaccounts']),
          objectSelector: { matchLabels: { inject: 'true' } },
          review: (request) => {
            seenByInjected.push(String((request.object as any).metadata.name));
            return { allowed: true };
          },
        },
      ],
    });
    try {
      const secret = await s.request('POST', '/api/v1/namespaces/default/secrets', { body: { metadata: { name: 'odd' } } });
      assert.equal(secret.status, 500);
      assert.match(secret.json.message, /failed calling webhook "kind-changer\.example\.com": the webhook's patch changed the object's kind/);
      assert.equal((await s.request('GET', '/api/v1/namespaces/default/secrets/odd')).status, 404);
      for (const [name, labels] of [['guarded', undefined], ['skipped', { skip: 'yes' }]] as const) {
        assert.equal((await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name, labels } } })).status, 201);
      }
      const guarded = await s.request('DELETE', '/api/v1/namespaces/default/configmaps/guarded');
      assert.deepEqual([guarded.status, guarded.json.message], [403, 'admission webhook "guard.example.com" denied the request: kept']);
      assert.equal((await s.request('DELETE', '/api/v1/namespaces/default/configmaps/skipped')).status, 200, 'the object selector leaves the labelled one out');
      assert.equal((await s.request('POST', '/api/v1/namespaces/default/serviceaccounts', { body: { metadata: { name: 'robot' } } })).status, 201);
      assert.ok(seenByInjected.includes('robot'), 'the second webhook sees the label the first one added');
    } finally {
      await s.stop();
    }
  });
});

describe('admission of pod bindings and evictions', () => {
  it('admits a Binding and an Eviction as CREATEs of the pod\'s subresource with those kinds', async () => {
    const seen: any[] = [];
    const s = await startTestServer({
      admissionHooks: [
        {
          name: 'evictions.example.com',
          type: 'Validating',
          rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods/eviction', 'pods/binding'] }],
          review: (request) => {
            seen.push({ kind: request.kind, subResource: request.subResource, objectKind: (request.object as any).kind, name: request.name });
            return request.subResource === 'eviction' ? { allowed: false, status: { code: 429, reason: 'TooManyRequests', message: 'not now' } } : { allowed: true };
          },
        },
      ],
    });
    try {
      const pods = '/api/v1/namespaces/default/pods';
      assert.equal((await s.request('POST', pods, { body: { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'x' }] } } })).status, 201);
      const bound = await s.request('POST', `${pods}/p/binding`, { body: { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'p' }, target: { kind: 'Node', name: 'n1' } } });
      assert.equal(bound.status, 201, bound.text);
      const evicted = await s.request('POST', `${pods}/p/eviction`, { body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'p' } } });
      assert.deepEqual([evicted.status, evicted.json.message], [429, 'admission webhook "evictions.example.com" denied the request: not now']);
      assert.equal((await s.request('GET', `${pods}/p`)).status, 200, 'the pod stays');
      assert.deepEqual(seen, [
        { kind: { group: '', version: 'v1', kind: 'Binding' }, subResource: 'binding', objectKind: 'Binding', name: 'p' },
        { kind: { group: 'policy', version: 'v1', kind: 'Eviction' }, subResource: 'eviction', objectKind: 'Eviction', name: 'p' },
      ]);
    } finally {
      await s.stop();
    }
  });
});
