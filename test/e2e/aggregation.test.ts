/**
 * kapi behind an aggregator: request-header authentication. A client certificate of the front proxy's CA
 * (--requestheader-client-ca-file), with an allowed name, makes the user the one X-Remote-User, X-Remote-Group
 * and X-Remote-Extra-* name; RBAC then judges that user. Any other certificate of that CA, or the proxy's
 * certificate without a username header, is refused; the proxy's certificate is never a user of its own.
 */
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import https from 'node:https';
import tls from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { startKapi } from '../../src/kapi/index.js';
import { startTestServer, until, type TestServer } from './harness.js';

const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
const openssl = (dir: string, args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });

/** In `dir`: a CA of its own, `<name>.crt` and `<name>.key`. */
function makeCA(dir: string, name: string): void {
  openssl(dir, ['req', '-x509', '-new', ...EC_KEY, '-keyout', `${name}.key`, '-out', `${name}.crt`, '-subj', `/CN=${name}`, '-days', '2']);
}

/** In `dir`: a client certificate of the CA `ca` for the name `cn`, `<file>.crt` and `<file>.key`; returned as PEM. */
function makeClient(dir: string, ca: string, cn: string, file = cn): { cert: string; key: string } {
  openssl(dir, ['req', '-new', ...EC_KEY, '-keyout', `${file}.key`, '-out', `${file}.csr`, '-subj', `/CN=${cn}`]);
  writeFileSync(join(dir, 'client.ext'), 'extendedKeyUsage=clientAuth\n');
  openssl(dir, ['x509', '-req', '-in', `${file}.csr`, '-CA', `${ca}.crt`, '-CAkey', `${ca}.key`, '-CAcreateserial', '-days', '2', '-extfile', 'client.ext', '-out', `${file}.crt`]);
  return { cert: readFileSync(join(dir, `${file}.crt`), 'utf8'), key: readFileSync(join(dir, `${file}.key`), 'utf8') };
}

/** In `dir`: an intermediate CA `<name>` signed by the CA `ca` (basicConstraints CA:TRUE). */
function makeIntermediate(dir: string, ca: string, name: string): void {
  openssl(dir, ['req', '-new', ...EC_KEY, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`]);
  writeFileSync(join(dir, 'ca.ext'), 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign,digitalSignature\n');
  openssl(dir, ['x509', '-req', '-in', `${name}.csr`, '-CA', `${ca}.crt`, '-CAkey', `${ca}.key`, '-CAcreateserial', '-days', '2', '-extfile', 'ca.ext', '-out', `${name}.crt`]);
}

/** A request with a client certificate, over a connection of its own (as a front proxy sends them). */
function requestWithCertificate(server: TestServer, client: { cert: string | Buffer; key: string | Buffer }, method: string, path: string, headers: Record<string, string | string[]> = {}, body?: unknown) {
  return new Promise<{ status: number; body: any }>((resolve, reject) => {
    const req = https.request(`${server.kapi.url}${path}`, { method, ca: server.kapi.caCertPem, cert: client.cert, key: client.key, headers: { 'Content-Type': 'application/json', ...headers }, agent: false }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined }));
    });
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/** Who the server takes the holder of a client certificate (and the headers) for: a SelfSubjectReview. */
const reviewWithCertificate = (server: TestServer, client: { cert: string | Buffer; key: string | Buffer }, headers: Record<string, string | string[]> = {}) =>
  requestWithCertificate(server, client, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', headers, { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });

describe('request-header authentication (kapi as an extension API server)', () => {
  let dir: string;
  let s: TestServer;
  let proxy: { cert: string; key: string };
  let stranger: { cert: string; key: string };
  /** A request as the front proxy would send it: its certificate, and the headers it sets. */
  const proxied = (client: { cert: string; key: string }, method: string, path: string, headers: Record<string, string | string[]>) => requestWithCertificate(s, client, method, path, headers);
  const whoami = (client: { cert: string; key: string }, headers: Record<string, string | string[]>) => reviewWithCertificate(s, client, headers);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kapi-requestheader-'));
    makeCA(dir, 'front-proxy-ca');
    proxy = makeClient(dir, 'front-proxy-ca', 'front-proxy-client');
    stranger = makeClient(dir, 'front-proxy-ca', 'someone-else');
    s = await startTestServer({ requestHeader: { clientCAFile: join(dir, 'front-proxy-ca.crt'), allowedNames: ['front-proxy-client'] } });
  });
  after(async () => {
    await s.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('takes the user, groups and extra values from the headers the front proxy sets', async () => {
    const res = await whoami(proxy, { 'X-Remote-User': 'alice', 'X-Remote-Group': ['devs', 'ops'], 'X-Remote-Extra-Acme.com%2fProject': 'p1', 'X-Remote-Extra-Scopes': ['a', 'b'] });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.deepEqual(res.body.status.userInfo, { username: 'alice', groups: ['devs', 'ops', 'system:authenticated'], extra: { 'acme.com/project': ['p1'], scopes: ['a', 'b'] } });
    // RBAC judges that user: alice may do nothing yet.
    const listed = await proxied(proxy, 'GET', '/api/v1/namespaces', { 'X-Remote-User': 'alice' });
    assert.equal(listed.status, 403);
    assert.equal(listed.body.message, 'namespaces is forbidden: User "alice" cannot list resource "namespaces" in API group "" at the cluster scope');
  });

  it('refuses a certificate of the front proxy CA with another name, and the proxy without a user header', async () => {
    const other = await whoami(stranger, { 'X-Remote-User': 'alice' });
    assert.equal(other.status, 401);
    assert.equal(other.body.reason, 'Unauthorized');
    // Not the proxy's user, but a bearer token it carries still counts (upstream's union of authenticators).
    const withToken = await whoami(stranger, { 'X-Remote-User': 'alice', Authorization: `Bearer ${s.kapi.adminToken}` });
    assert.equal(withToken.status, 201, JSON.stringify(withToken.body));
    assert.notEqual(withToken.body.status.userInfo.username, 'alice');
    const nobody = await whoami(proxy, {});
    assert.equal(nobody.status, 401, 'the front proxy is no user of its own');
  });

  it('takes a certificate through an intermediate of the front proxy CA only as the front proxy\'s, never as a user', async () => {
    makeIntermediate(dir, 'front-proxy-ca', 'fp-intermediate');
    const chain = (c: { cert: string; key: string }) => ({ cert: c.cert + readFileSync(join(dir, 'fp-intermediate.crt'), 'utf8'), key: c.key });
    // An admin's name and group on a certificate chained through the front proxy's CA: not kapi's client CA.
    const forged = makeClient(dir, 'fp-intermediate', 'kapi-admin', 'forged');
    execFileSync('openssl', ['req', '-new', ...EC_KEY, '-keyout', 'masters.key', '-out', 'masters.csr', '-subj', '/O=system:masters/CN=kapi-admin'], { cwd: dir, stdio: 'pipe' });
    execFileSync('openssl', ['x509', '-req', '-in', 'masters.csr', '-CA', 'fp-intermediate.crt', '-CAkey', 'fp-intermediate.key', '-CAcreateserial', '-days', '2', '-extfile', 'client.ext', '-out', 'masters.crt'], { cwd: dir, stdio: 'pipe' });
    const masters = { cert: readFileSync(join(dir, 'masters.crt'), 'utf8'), key: readFileSync(join(dir, 'masters.key'), 'utf8') };
    for (const [what, client] of [['CN=kapi-admin', forged], ['CN=kapi-admin, O=system:masters', masters]] as const) {
      const alone = await whoami(chain(client), {});
      assert.equal(alone.status, 401, `${what} with its intermediate: ${JSON.stringify(alone.body)}`);
      const asked = await proxied(chain(client), 'GET', '/api/v1/namespaces/kube-system/secrets', {});
      assert.equal(asked.status, 401, `${what} reading secrets`);
      const named = await whoami(chain(client), { 'X-Remote-User': 'alice' });
      assert.equal(named.status, 401, `${what} is not an allowed front-proxy name`);
    }
    // Several Common Names: Go's subject reading keeps the last, for the allowed names as for users.
    const twoNames = (subject: string, file: string, ca = 'front-proxy-ca') => {
      execFileSync('openssl', ['req', '-new', ...EC_KEY, '-keyout', `${file}.key`, '-out', `${file}.csr`, '-subj', subject], { cwd: dir, stdio: 'pipe' });
      execFileSync('openssl', ['x509', '-req', '-in', `${file}.csr`, '-CA', `${ca}.crt`, '-CAkey', `${ca}.key`, '-CAcreateserial', '-days', '2', '-extfile', 'client.ext', '-out', `${file}.crt`], { cwd: dir, stdio: 'pipe' });
      return { cert: readFileSync(join(dir, `${file}.crt`), 'utf8'), key: readFileSync(join(dir, `${file}.key`), 'utf8') };
    };
    const allowedFirst = await whoami(twoNames('/CN=front-proxy-client/CN=someone-else', 'cn-allowed-first'), { 'X-Remote-User': 'eve' });
    assert.equal(allowedFirst.status, 401, 'the last Common Name is not an allowed name');
    const allowedLast = await whoami(twoNames('/CN=someone-else/CN=front-proxy-client', 'cn-allowed-last'), { 'X-Remote-User': 'eve' });
    assert.equal(allowedLast.status, 201, JSON.stringify(allowedLast.body));
    assert.equal(allowedLast.body.status.userInfo.username, 'eve');
    writeFileSync(join(dir, 'kapi-ca.crt'), readFileSync(join(s.dir, 'data', 'pki', 'ca.crt')));
    writeFileSync(join(dir, 'kapi-ca.key'), readFileSync(join(s.dir, 'data', 'pki', 'ca.key')));
    const user = await whoami(twoNames('/O=system:nodes/CN=victim-admin/CN=system:node:n1', 'cn-user', 'kapi-ca'), {});
    assert.equal(user.status, 201, JSON.stringify(user.body));
    assert.equal(user.body.status.userInfo.username, 'system:node:n1');

    // The front proxy's own certificate through the intermediate is the front proxy's (upstream verifies with the
    // intermediates presented).
    const viaIntermediate = makeClient(dir, 'fp-intermediate', 'front-proxy-client', 'proxy-via-intermediate');
    const res = await whoami(chain(viaIntermediate), { 'X-Remote-User': 'bob', 'X-Remote-Group': ['', 'devs'] });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.deepEqual(res.body.status.userInfo, { username: 'bob', groups: ['devs', 'system:authenticated'] }, 'empty group values are no groups');
  });
});

describe('APIServices (apiregistration.k8s.io/v1)', () => {
  it('registers the group-versions kapi serves as local APIServices, CRDs\' too, and validates others', async () => {
    const s = await startTestServer();
    try {
      const APISERVICES = '/apis/apiregistration.k8s.io/v1/apiservices';
      const crd = {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: 'gizmos.local.example.com' },
        spec: { group: 'local.example.com', scope: 'Namespaced', names: { plural: 'gizmos', kind: 'Gizmo' }, versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }] },
      };
      assert.equal((await s.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: crd })).status, 201);
      let items: any[] = [];
      for (let i = 0; i < 200; i++) {
        items = (await s.request('GET', APISERVICES)).json.items;
        if (items.some((a) => a.metadata.name === 'v1.local.example.com' && a.status?.conditions?.[0]?.reason === 'Local')) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      const byName = new Map(items.map((a) => [a.metadata.name, a]));
      // The core group's name is empty: left out, as encoding/json leaves out an empty omitempty string.
      assert.deepEqual(byName.get('v1.')?.spec, { version: 'v1', groupPriorityMinimum: 18000, versionPriority: 1 });
      assert.deepEqual(byName.get('v1.apps')?.spec, { group: 'apps', version: 'v1', groupPriorityMinimum: 17800, versionPriority: 15 });
      const custom = byName.get('v1.local.example.com');
      assert.deepEqual(custom?.spec, { group: 'local.example.com', version: 'v1', groupPriorityMinimum: 1000, versionPriority: 100 });
      assert.equal(custom.metadata.labels['kube-aggregator.kubernetes.io/automanaged'], 'true');
      assert.deepEqual(
        (({ type, status, reason, message }) => ({ type, status, reason, message }))(custom.status.conditions[0]),
        { type: 'Available', status: 'True', reason: 'Local', message: 'Local APIServices are always available' },
      );
      const table = await s.kubectl(['get', 'apiservices', 'v1.apps']);
      assert.equal(table.code, 0, table.stderr);
      assert.match(table.stdout, /^NAME\s+SERVICE\s+AVAILABLE\s+AGE\nv1\.apps\s+Local\s+True\s+/);
      // Validation as kube-aggregator's.
      const bad = await s.request('POST', APISERVICES, {
        body: { metadata: { name: 'v1.wrong.example.com' }, spec: { group: 'remote.example.com', version: 'v1', groupPriorityMinimum: 0, versionPriority: 1001, service: { namespace: 'default', name: 'x' }, insecureSkipTLSVerify: true, caBundle: 'Zm9v' } },
      });
      assert.equal(bad.status, 422);
      assert.deepEqual(
        bad.json.details.causes.map((c: { field: string }) => c.field),
        ['metadata.name', 'spec.groupPriorityMinimum', 'spec.versionPriority', 'spec.insecureSkipTLSVerify'],
      );
    } finally {
      await s.stop();
    }
  });
});

describe('kapi as the aggregator in front of a kapi extension server', () => {
  let dir: string;
  let agg: TestServer;
  let ext: TestServer;
  let extPort = 0;
  const ALICE = 'alice-aggregated-token-0123456789';
  const GROUP = 'ext.example.com';
  const APISERVICE = `/apis/apiregistration.k8s.io/v1/apiservices/v1.${GROUP}`;
  const widgetCrd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `widgets.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { plural: 'widgets', kind: 'Widget', shortNames: ['wd'] },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } } } }],
    },
  };
  const startExtension = async (port = 0) => {
    const s = await startTestServer({
      dataDir: join(dir, 'extension'),
      port,
      tlsSans: ['ext.default.svc'],
      requestHeader: { clientCAFile: join(dir, 'front-proxy-ca.crt'), allowedNames: ['front-proxy-client'] },
    });
    return s;
  };
  const condition = async () => (await agg.request('GET', APISERVICE)).json.status?.conditions?.find((c: { type: string }) => c.type === 'Available');
  const until = async (what: string, check: () => Promise<boolean>) => {
    for (let i = 0; i < 300; i++) {
      if (await check()) return;
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.fail(`timed out waiting for ${what}`);
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kapi-aggregator-'));
    makeCA(dir, 'front-proxy-ca');
    makeClient(dir, 'front-proxy-ca', 'front-proxy-client', 'proxy');
    writeFileSync(join(dir, 'tokens.csv'), `${ALICE},alice,uid-alice,"devs"\n`);
    ext = await startExtension();
    extPort = ext.kapi.port;
    assert.equal((await ext.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: widgetCrd })).status, 201);
    agg = await startTestServer({
      tokenAuthFile: join(dir, 'tokens.csv'),
      proxyClientCertFile: join(dir, 'proxy.crt'),
      proxyClientKeyFile: join(dir, 'proxy.key'),
      apiServiceCheckIntervalMs: 200,
    });
    const ok = (r: { status: number; text: string }) => assert.ok(r.status < 300, r.text);
    ok(await agg.request('POST', '/api/v1/namespaces/default/services', { body: { metadata: { name: 'ext' }, spec: { ports: [{ port: 443, targetPort: extPort }] } } }));
    ok(await agg.request('POST', '/api/v1/namespaces/default/endpoints', { body: { metadata: { name: 'ext' }, subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ port: extPort }] }] } }));
    ok(
      await agg.request('POST', '/apis/apiregistration.k8s.io/v1/apiservices', {
        body: {
          metadata: { name: `v1.${GROUP}` },
          spec: { group: GROUP, version: 'v1', groupPriorityMinimum: 2000, versionPriority: 15, service: { namespace: 'default', name: 'ext', port: 443 }, caBundle: Buffer.from(ext.kapi.caCertPem).toString('base64') },
        },
      }),
    );
    // alice may use widgets on the aggregator; the extension decides for itself.
    ok(await agg.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', { body: { metadata: { name: 'widgets' }, rules: [{ apiGroups: [GROUP], resources: ['widgets'], verbs: ['*'] }] } }));
    ok(
      await agg.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
        body: { metadata: { name: 'alice-widgets' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'widgets' }, subjects: [{ kind: 'User', name: 'alice' }] },
      }),
    );
    await until("the APIService Available", async () => (await condition())?.status === "True").catch(async (err) => {
      throw new Error(`${err.message}: ${JSON.stringify(await condition())}`);
    });
  });
  after(async () => {
    await agg?.stop();
    await ext?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('shows the extension\'s group in discovery and passes requests through, kubectl and watches included', async () => {
    assert.deepEqual(
      (({ status, reason, message }) => ({ status, reason, message }))(await condition()),
      { status: 'True', reason: 'Passed', message: 'all checks passed' },
    );
    // A CRD's group (priority 1000) comes after the aggregated one (2000), whatever their names.
    const local = { ...widgetCrd, metadata: { name: 'widgets.aaa.example.com' }, spec: { ...widgetCrd.spec, group: 'aaa.example.com' } };
    assert.equal((await agg.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: local })).status, 201);
    const groups = (await agg.request('GET', '/apis')).json.groups.map((g: { name: string }) => g.name);
    assert.ok(groups.indexOf(GROUP) >= 0 && groups.indexOf(GROUP) < groups.indexOf('aaa.example.com'), groups.join());
    const resources = (await agg.request('GET', `/apis/${GROUP}/v1`)).json.resources.map((r: { name: string }) => r.name);
    assert.deepEqual(resources, ['widgets']);
    const applied = await agg.kubectl(['apply', '-f', '-'], { input: JSON.stringify({ apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: 'w1', namespace: 'default' }, spec: { size: 3 } }) });
    assert.equal(applied.code, 0, applied.stderr);
    const got = await agg.kubectl(['get', 'wd', 'w1', '-o', 'jsonpath={.spec.size}']);
    assert.equal(got.stdout, '3');
    // It is stored on the extension.
    assert.equal((await ext.request('GET', `/apis/${GROUP}/v1/namespaces/default/widgets/w1`)).json.spec.size, 3);
    const watched = await agg.request('GET', `/apis/${GROUP}/v1/namespaces/default/widgets?watch=true&timeoutSeconds=1`);
    assert.equal(watched.status, 200);
    assert.match(watched.text, /"type":"ADDED".*"name":"w1"/);
    const deleted = await agg.kubectl(['delete', 'wd', 'w1']);
    assert.equal(deleted.code, 0, deleted.stderr);
  });

  it('publishes the extension\'s OpenAPI: its paths and definitions in /openapi/v2, its v3 document through the aggregator', async () => {
    let v2: any;
    await until('the extension in /openapi/v2', async () => {
      v2 = (await agg.request('GET', '/openapi/v2')).json;
      return Boolean(v2.paths[`/apis/${GROUP}/v1/namespaces/{namespace}/widgets`]);
    });
    assert.equal(v2.definitions['com.example.ext.v1.Widget'].properties.spec.properties.size.type, 'integer');
    assert.ok(v2.paths['/api/v1/namespaces/{namespace}/configmaps'], 'the aggregator\'s own paths stay');
    // kubectl reads it (as protobuf) to explain the extension's kinds.
    const explained = await agg.kubectl(['explain', 'widgets.spec']);
    assert.equal(explained.code, 0, explained.stderr);
    assert.match(explained.stdout, /size\s+<integer>/);
    const v3 = (await agg.request('GET', '/openapi/v3')).json;
    const url = v3.paths[`apis/${GROUP}/v1`]?.serverRelativeURL;
    assert.match(url, new RegExp(`^/openapi/v3/apis/${GROUP.replace(/\./g, '\\.')}/v1\\?hash=`));
    const doc = await agg.request('GET', url);
    assert.equal(doc.status, 200, doc.text);
    assert.equal(doc.json.components.schemas['com.example.ext.v1.Widget'].properties.spec.properties.size.type, 'integer');
    assert.ok(v3.paths['api/v1'], 'the aggregator\'s own group-versions stay');
  });

  it('serves the Python client (HTTP/1.1, typed APIService models) through the aggregator', async () => {
    const script = [
      'import json',
      'from kubernetes import client, config',
      'config.load_kube_config()',
      'custom = client.CustomObjectsApi()',
      `custom.create_namespaced_custom_object("${GROUP}", "v1", "default", "widgets", {"apiVersion": "${GROUP}/v1", "kind": "Widget", "metadata": {"name": "py"}, "spec": {"size": 7}})`,
      `got = custom.get_namespaced_custom_object("${GROUP}", "v1", "default", "widgets", "py")`,
      `svc = client.ApiregistrationV1Api().read_api_service("v1.${GROUP}")`,
      `custom.delete_namespaced_custom_object("${GROUP}", "v1", "default", "widgets", "py")`,
      'print(json.dumps({"size": got["spec"]["size"], "available": [c.reason for c in svc.status.conditions if c.type == "Available"], "service": svc.spec.service.name, "priority": svc.spec.group_priority_minimum}))',
    ].join('\n');
    const python = process.env.KAPI_TEST_PYTHON ?? '/usr/bin/python3';
    // Asynchronously: the servers answer from this very process.
    const { stdout: out } = await promisify(execFile)(python, ['-c', script], { env: { ...process.env, KUBECONFIG: agg.kapi.kubeconfigPath }, timeout: 30_000 });
    assert.deepEqual(JSON.parse(out), { size: 7, available: ['Passed'], service: 'ext', priority: 2000 });
    assert.equal((await ext.request('GET', `/apis/${GROUP}/v1/namespaces/default/widgets/py`)).status, 404, 'deleted on the extension');
  });

  it('orders an aggregated group\'s versions by their APIServices\' versionPriority', async () => {
    const v1beta1 = { name: 'v1beta1', served: true, storage: false, schema: widgetCrd.spec.versions[0].schema };
    const crd = (await ext.request('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.${GROUP}`)).json;
    crd.spec.versions.push(v1beta1);
    assert.equal((await ext.request('PUT', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.${GROUP}`, { body: crd })).status, 200);
    const spec = { group: GROUP, version: 'v1beta1', groupPriorityMinimum: 2000, versionPriority: 20, service: { namespace: 'default', name: 'ext', port: 443 }, caBundle: Buffer.from(ext.kapi.caCertPem).toString('base64') };
    assert.equal((await agg.request('POST', '/apis/apiregistration.k8s.io/v1/apiservices', { body: { metadata: { name: `v1beta1.${GROUP}` }, spec } })).status, 201);
    try {
      // v1beta1 (20) before v1 (15), though the version strings alone would put v1 first.
      const aggregatedVersions = async () => {
        const aggregated = await agg.request('GET', '/apis', { accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' });
        return aggregated.json.items.find((g: { metadata: { name: string } }) => g.metadata.name === GROUP).versions.map((v: { version: string }) => v.version).join();
      };
      await until('v1beta1 reached', async () => (await aggregatedVersions()) === 'v1beta1,v1');
      assert.equal((await agg.request('GET', `/apis/${GROUP}`)).json.preferredVersion.version, 'v1beta1');
      assert.deepEqual((await agg.request('GET', `/apis/${GROUP}`)).json.versions.map((v: { version: string }) => v.version), ['v1beta1', 'v1']);
    } finally {
      assert.equal((await agg.request('DELETE', `/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.${GROUP}`)).status, 200);
    }
    await until('v1 preferred again', async () => (await agg.request('GET', `/apis/${GROUP}`)).json?.preferredVersion?.version === 'v1');
  });

  it('joins a request to switch protocols (exec, websockets) to its backend, and answers others on that connection as usual', async () => {
    // An extension server of its own making, as apiserver-builder's would serve an exec-like subresource.
    openssl(dir, ['req', '-x509', '-new', ...EC_KEY, '-keyout', 'up.key', '-out', 'up.crt', '-subj', '/CN=up', '-addext', 'subjectAltName=DNS:up.default.svc', '-days', '2']);
    const seen: string[] = [];
    const backend = https.createServer({ cert: readFileSync(join(dir, 'up.crt')), key: readFileSync(join(dir, 'up.key')), ca: readFileSync(join(dir, 'front-proxy-ca.crt')), requestCert: true, rejectUnauthorized: true });
    backend.on('request', (req, res) => {
      if (req.url === '/apis/up.example.com/v1/namespaces/default/shells/odd') {
        // A 101 without the headers of a switch.
        res.writeHead(101);
        res.end();
      } else if (req.url === '/openapi/v2') {
        // An older server: OpenAPI v2 only (its /openapi/v3 is 404).
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            swagger: '2.0',
            info: { title: 'up', version: 'v9' },
            paths: {
              '/apis/up.example.com/v1/namespaces/{namespace}/shells/{name}': {
                parameters: [{ name: 'name', in: 'path', type: 'string', required: true }],
                get: { produces: ['application/json', 'application/yaml'], responses: { '200': { description: 'OK', schema: { $ref: '#/definitions/up.Shell' } } } },
              },
            },
            definitions: { 'up.Shell': { type: 'object', properties: { spec: { type: 'object', properties: { shell: { type: 'string' } } } } } },
          }),
        );
      } else if (req.url === '/apis/up.example.com/v1') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ kind: 'APIResourceList', apiVersion: 'v1', groupVersion: 'up.example.com/v1', resources: [{ name: 'shells', singularName: 'shell', namespaced: true, kind: 'Shell', verbs: ['get'] }, { name: 'shells/exec', singularName: '', namespaced: true, kind: 'Shell', verbs: ['create', 'get'] }] }));
      } else {
        res.writeHead(404);
        res.end();
      }
    });
    backend.on('upgrade', (req, socket: import('node:net').Socket) => {
      seen.push(`${req.method} ${req.url} ${req.headers['x-remote-user']} ${req.headers.upgrade} ${req.headers.authorization ?? 'no-credentials'} ${req.headers['sec-websocket-protocol'] ?? ''}`);
      // A large refusal instead of a switch, and a plain answer, which is no answer to a switch.
      if (req.url?.includes('/s3/')) return socket.end(`HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: ${1 << 20}\r\n\r\n${'x'.repeat(1 << 20)}`);
      if (req.url?.includes('/s4/')) return socket.end('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
      // A backend that switches to another protocol than the one asked for.
      const protocol = req.url?.includes('/s2/') ? 'h2c' : 'websocket';
      socket.write(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: ${protocol}\r\nX-Stream: echo\r\n\r\n`);
      socket.on('data', (c: Buffer) => socket.write(c.toString().toUpperCase()));
      socket.on('error', () => {});
    });
    await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
    const port = (backend.address() as import('node:net').AddressInfo).port;
    const ok = (r: { status: number; text: string }) => assert.ok(r.status < 300, r.text);
    try {
      ok(await agg.request('POST', '/api/v1/namespaces/default/services', { body: { metadata: { name: 'up' }, spec: { ports: [{ port: 443, targetPort: port }] } } }));
      ok(await agg.request('POST', '/api/v1/namespaces/default/endpoints', { body: { metadata: { name: 'up' }, subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ port }] }] } }));
      const caBundle = Buffer.from(readFileSync(join(dir, 'up.crt'))).toString('base64');
      ok(await agg.request('POST', '/apis/apiregistration.k8s.io/v1/apiservices', { body: { metadata: { name: 'v1.up.example.com' }, spec: { group: 'up.example.com', version: 'v1', groupPriorityMinimum: 1000, versionPriority: 15, service: { namespace: 'default', name: 'up', port: 443 }, caBundle } } }));
      await until('up.example.com available', async () => (await agg.request('GET', '/apis/up.example.com/v1')).status === 200);
      // Its v2 document made v3 here, as upstream converts it.
      let v3url: string | undefined;
      await until('the converted v3 document listed', async () => (v3url = (await agg.request('GET', '/openapi/v3')).json.paths['apis/up.example.com/v1']?.serverRelativeURL) !== undefined);
      const converted = await agg.request('GET', v3url!);
      assert.equal(converted.status, 200, converted.text);
      assert.deepEqual(converted.json.info, { title: 'up', version: 'v9' });
      const item = converted.json.paths['/apis/up.example.com/v1/namespaces/{namespace}/shells/{name}'];
      assert.deepEqual(item.parameters, [{ name: 'name', in: 'path', required: true, schema: { type: 'string' } }]);
      assert.deepEqual(Object.keys(item.get.responses['200'].content), ['application/json', 'application/yaml']);
      assert.equal(item.get.responses['200'].content['application/json'].schema.$ref, '#/components/schemas/up.Shell');
      assert.equal(converted.json.components.schemas['up.Shell'].properties.spec.properties.shell.type, 'string');
      const who = (await agg.request('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } })).json.status.userInfo.username;
      /** A raw HTTP/1.1 exchange on one TLS connection: what came back before `until` matched, and the socket. */
      const raw = async (request: string, expect: RegExp) => {
        const socket = tls.connect({ host: '127.0.0.1', port: agg.kapi.port, ca: agg.kapi.caCertPem, servername: 'localhost', ALPNProtocols: ['http/1.1'] });
        let text = '';
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`no answer matching ${expect}: ${JSON.stringify(text)}`)), 5000);
          socket.on('data', (c: Buffer) => {
            text += c.toString();
            if (expect.test(text)) {
              clearTimeout(timer);
              resolve();
            }
          });
          socket.on('error', reject);
          socket.write(request);
        });
        return { socket, text: () => text };
      };
      const exec = await raw(
        `GET /apis/up.example.com/v1/namespaces/default/shells/s1/exec?command=sh HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${agg.kapi.adminToken}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n`,
        /\r\n\r\n/,
      );
      assert.match(exec.text(), /^HTTP\/1\.1 101 Switching Protocols\r\n/);
      assert.match(exec.text(), /\r\nX-Stream: echo\r\n/);
      exec.socket.write('ping');
      await until('the backend\'s echo', async () => exec.text().endsWith('PING'));
      exec.socket.write(' and pong');
      await until('the second echo', async () => exec.text().endsWith(' AND PONG'));
      exec.socket.destroy();
      // The user the aggregator authenticated, and never the client's credentials.
      assert.deepEqual(seen, [`GET /apis/up.example.com/v1/namespaces/default/shells/s1/exec?command=sh ${who} websocket no-credentials `]);
      // A browser's websocket carries its token as a subprotocol: it authenticates, and stays here.
      const subprotocol = `base64url.bearer.authorization.k8s.io.${Buffer.from(agg.kapi.adminToken).toString('base64url')}`;
      const browser = await raw(
        `GET /apis/up.example.com/v1/namespaces/default/shells/s1/exec HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Protocol: ${subprotocol}, v5.channel.k8s.io\r\n\r\n`,
        /\r\n\r\n/,
      );
      assert.match(browser.text(), /^HTTP\/1\.1 101 /);
      browser.socket.destroy();
      assert.equal(seen[1], `GET /apis/up.example.com/v1/namespaces/default/shells/s1/exec ${who} websocket no-credentials v5.channel.k8s.io`);
      // A backend switching to a protocol nobody asked for is refused.
      const mismatched = await raw(`GET /apis/up.example.com/v1/namespaces/default/shells/s2/exec HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${agg.kapi.adminToken}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n`, /\r\n0\r\n\r\n$/);
      assert.match(mismatched.text(), /^HTTP\/1\.1 502 Bad Gateway\r\n[^]*backend tried to switch protocol "h2c" when "websocket" was requested\n/);
      mismatched.socket.destroy();
      const upgradeTo = (shell: string) =>
        `GET /apis/up.example.com/v1/namespaces/default/shells/${shell}/exec HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${agg.kapi.adminToken}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n`;
      // A refusal comes back whole, however large (the connection's pace followed after the switch's hand-over).
      const refused = await raw(upgradeTo('s3'), /\r\n\r\n/);
      assert.match(refused.text(), /^HTTP\/1\.1 403 Forbidden\r\n/);
      await until('the whole refusal', async () => refused.text().endsWith('x'.repeat(64)) && refused.text().split('\r\n\r\n')[1].length === 1 << 20);
      refused.socket.destroy();
      // Any other answer that is no switch: kube-aggregator's 503.
      const plainAnswer = await raw(upgradeTo('s4'), /\r\n0\r\n\r\n$/);
      assert.match(plainAnswer.text(), /^HTTP\/1\.1 503 Service Unavailable\r\n[^]*invalid upgrade response: status code 200\n/);
      plainAnswer.socket.destroy();
      // A 101 on a plain request: no answer to pass on.
      const odd = await agg.request('GET', '/apis/up.example.com/v1/namespaces/default/shells/odd');
      assert.deepEqual([odd.status, odd.text], [502, 'backend switched protocols unasked\n']);
      // Websocket tokens given twice, or with no other subprotocol to answer with: 401, as upstream.
      for (const protocols of [`${subprotocol}, ${subprotocol}, v5.channel.k8s.io`, subprotocol]) {
        const bad = await raw(
          `GET /apis/up.example.com/v1/namespaces/default/shells/s1/exec HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Protocol: ${protocols}\r\n\r\n`,
          /\r\n\r\n[^]*\}/,
        );
        assert.match(bad.text(), /^HTTP\/1\.1 401 Unauthorized\r\n/);
        bad.socket.destroy();
      }
      // kapi's own routes answer such a request as any other, then close the connection, whatever else the client sends.
      const plain = await raw(`GET /api/v1/namespaces/default HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${agg.kapi.adminToken}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n`, /"kind":"Namespace".*\}/s);
      assert.match(plain.text(), /^HTTP\/1\.1 200 OK\r\n/);
      plain.socket.write('more bytes nobody reads');
      await new Promise<void>((resolve) => (plain.socket.readableEnded ? resolve() : plain.socket.once('end', () => resolve())));
      plain.socket.destroy();
      // A body would come unframed: refused. A switch pipelined behind another request: taken up after its answer.
      const withBody = await raw(`POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nContent-Length: 2\r\n\r\n{}`, /400 Bad Request$/);
      assert.match(withBody.text(), /^HTTP\/1\.1 400 Bad Request\r\n/);
      withBody.socket.destroy();
      const pipelined = tls.connect({ host: '127.0.0.1', port: agg.kapi.port, ca: agg.kapi.caCertPem, servername: 'localhost', ALPNProtocols: ['http/1.1'] });
      pipelined.on('error', () => {});
      let both = '';
      pipelined.on('data', (c: Buffer) => (both += c.toString()));
      pipelined.write('GET /version HTTP/1.1\r\nHost: localhost\r\n\r\nGET /version HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n');
      await new Promise<void>((resolve) => pipelined.once('close', () => resolve()));
      assert.equal(both.match(/HTTP\/1\.1 200 OK\r\n/g)?.length, 2, both);
      assert.equal((await agg.request('GET', '/version')).status, 200, 'the server is still up');
      // Without credentials it goes nowhere.
      const anonymous = await raw('GET /apis/up.example.com/v1/namespaces/default/shells/s1/exec HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n', /\r\n\r\n.*\}/s);
      assert.match(anonymous.text(), /^HTTP\/1\.1 403 Forbidden\r\n/);
      anonymous.socket.destroy();
      assert.equal(seen.length, 5, 'the refused requests never reached it');
      // A session on another subresource (a console, as KubeVirt's) outlives the request timeout: the switch ended
      // the request, and what follows is the connection's (upstream leaves a hijacked connection alone).
      const consoleSession = await raw(
        `GET /apis/up.example.com/v1/namespaces/default/shells/s1/console?timeout=1s HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${agg.kapi.adminToken}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n`,
        /\r\n\r\n/,
      );
      assert.match(consoleSession.text(), /^HTTP\/1\.1 101 /);
      await new Promise((r) => setTimeout(r, 1600));
      consoleSession.socket.write('still there');
      await until('the echo after the timeout', async () => consoleSession.text().endsWith('STILL THERE'));
      consoleSession.socket.destroy();
    } finally {
      await agg.request('DELETE', '/apis/apiregistration.k8s.io/v1/apiservices/v1.up.example.com');
      await new Promise<void>((r) => {
        backend.close(() => r());
        backend.closeAllConnections?.();
      });
    }
  });

  it('passes the user along, for the extension\'s own RBAC', async () => {
    const denied = await agg.request('GET', `/apis/${GROUP}/v1/namespaces/default/widgets`, { token: ALICE });
    assert.equal(denied.status, 403, denied.text);
    assert.equal(denied.json.message, `widgets.${GROUP} is forbidden: User "alice" cannot list resource "widgets" in API group "${GROUP}" in the namespace "default"`);
    const binding = { metadata: { name: 'alice' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view-widgets' }, subjects: [{ kind: 'Group', name: 'devs' }] };
    assert.equal((await ext.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', { body: { metadata: { name: 'view-widgets' }, rules: [{ apiGroups: [GROUP], resources: ['widgets'], verbs: ['list'] }] } })).status, 201);
    assert.equal((await ext.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', { body: binding })).status, 201);
    await until('alice (in devs) allowed by the extension', async () => (await agg.request('GET', `/apis/${GROUP}/v1/namespaces/default/widgets`, { token: ALICE })).status === 200);
  });

  it('marks the APIService unavailable when its backend stops, answers 503, and available again when it returns', async () => {
    await ext.stop();
    await until('Available False', async () => (await condition())?.status === 'False');
    const down = await condition();
    assert.equal(down.reason, 'FailedDiscoveryCheck');
    assert.match(down.message, new RegExp(`^failing or missing response from https://127\\.0\\.0\\.1:${extPort}/apis/${GROUP.replace(/\./g, '\\.')}/v1: `));
    const unavailable = await agg.request('GET', `/apis/${GROUP}/v1/namespaces/default/widgets`);
    assert.equal(unavailable.status, 503);
    assert.equal(unavailable.text, 'service unavailable\n');
    // Aggregated discovery keeps what the backend last listed, marked Stale.
    const freshness = async () => {
      const doc = (await agg.request('GET', '/apis', { accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' })).json;
      const v1 = doc.items.find((g: { metadata: { name: string } }) => g.metadata.name === GROUP)?.versions.find((v: { version: string }) => v.version === 'v1');
      return `${v1?.freshness} ${v1?.resources.map((r: { resource: string }) => r.resource).join()}`;
    };
    assert.equal(await freshness(), 'Stale widgets');
    ext = await startExtension(extPort);
    await until('Available True again', async () => (await condition())?.status === 'True');
    assert.equal(await freshness(), 'Current widgets');
    assert.equal((await agg.request('GET', `/apis/${GROUP}/v1/namespaces/default/widgets`)).status, 200);
  });

  it('checks an APIService again as soon as its Service or Endpoints change (not only every interval)', async () => {
    const late = await startTestServer({ proxyClientCertFile: join(dir, 'proxy.crt'), proxyClientKeyFile: join(dir, 'proxy.key'), apiServiceCheckIntervalMs: 600_000 });
    try {
      const ok = (r: { status: number; text: string }) => assert.ok(r.status < 300, r.text);
      ok(
        await late.request('POST', '/apis/apiregistration.k8s.io/v1/apiservices', {
          body: {
            metadata: { name: `v1.${GROUP}` },
            spec: { group: GROUP, version: 'v1', groupPriorityMinimum: 1000, versionPriority: 15, service: { namespace: 'default', name: 'ext', port: 443 }, caBundle: Buffer.from(ext.kapi.caCertPem).toString('base64') },
          },
        }),
      );
      const reason = async () => (await late.request('GET', APISERVICE)).json.status?.conditions?.[0]?.reason;
      await until('ServiceNotFound', async () => (await reason()) === 'ServiceNotFound');
      ok(await late.request('POST', '/api/v1/namespaces/default/services', { body: { metadata: { name: 'ext' }, spec: { ports: [{ port: 443, targetPort: extPort }] } } }));
      await until('EndpointsNotFound', async () => (await reason()) === 'EndpointsNotFound');
      ok(await late.request('POST', '/api/v1/namespaces/default/endpoints', { body: { metadata: { name: 'ext' }, subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ port: extPort }] }] } }));
      await until('Passed', async () => (await reason()) === 'Passed');
    } finally {
      await late.stop();
    }
  });

  it('refuses a backend whose certificate its caBundle does not trust', async () => {
    const other = readFileSync(join(dir, 'front-proxy-ca.crt'), 'utf8');
    const made = await agg.request('POST', '/apis/apiregistration.k8s.io/v1/apiservices', {
      body: { metadata: { name: 'v2.ext.example.com' }, spec: { group: GROUP, version: 'v2', groupPriorityMinimum: 1000, versionPriority: 10, service: { namespace: 'default', name: 'ext', port: 443 }, caBundle: Buffer.from(other).toString('base64') } },
    });
    assert.equal(made.status, 201, made.text);
    let c: any;
    await until('the check to fail', async () => {
      c = (await agg.request('GET', '/apis/apiregistration.k8s.io/v1/apiservices/v2.ext.example.com')).json.status?.conditions?.[0];
      return c?.status === 'False';
    });
    assert.equal(c.reason, 'FailedDiscoveryCheck');
    assert.match(c.message, /certificate/);
    // Never available: its group-version answers 503, as upstream, not 404.
    const never = await agg.request('GET', `/apis/${GROUP}/v2/namespaces/default/widgets`);
    assert.deepEqual([never.status, never.text], [503, 'service unavailable\n']);
    // Discovery lists it (kubectl then warns that it cannot list its resources), its document is 503, and
    // aggregated discovery lists it Stale, without resources, until its backend was reached.
    const group = (await agg.request('GET', '/apis')).json.groups.find((g: { name: string }) => g.name === GROUP);
    assert.deepEqual(group.versions.map((v: { version: string }) => v.version), ['v1', 'v2']);
    assert.equal(group.preferredVersion.version, 'v1', 'versionPriority 15 before 10');
    assert.equal((await agg.request('GET', `/apis/${GROUP}/v2`)).status, 503);
    const aggregatedDoc = (await agg.request('GET', '/apis', { accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' })).json;
    const entry = aggregatedDoc.items.find((g: { metadata: { name: string } }) => g.metadata.name === GROUP);
    assert.deepEqual(entry.versions.map((v: { version: string; freshness: string; resources?: unknown[] }) => [v.version, v.freshness, v.resources?.length]), [['v1', 'Current', 1], ['v2', 'Stale', undefined]]);
    const listed = await agg.kubectl(['api-resources', '--api-group', GROUP]);
    assert.match(listed.stderr, new RegExp(`${GROUP.replace(/\./g, '\\.')}/v2: the server is currently unable to handle the request`));
    assert.equal((await agg.request('DELETE', '/apis/apiregistration.k8s.io/v1/apiservices/v2.ext.example.com')).status, 200);
    await until('v2 gone from discovery', async () =>
      (await agg.request('GET', `/apis/${GROUP}`)).json.versions.every((v: { version: string }) => v.version !== 'v2'),
    );
  });
});

describe('delegated authentication and authorization (kapi behind a core cluster)', () => {
  it('reviews unknown tokens and asks about unknown permissions of the core cluster, reads its request-header settings, and honours its namespaces', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kapi-delegated-'));
    const BOB = 'bob-core-token-0123456789';
    writeFileSync(join(dir, 'tokens.csv'), `${BOB},bob,uid-bob,"team"\n`);
    makeCA(dir, 'fp-ca');
    makeClient(dir, 'fp-ca', 'aggregator', 'fp');
    const core = await startTestServer({ tokenAuthFile: join(dir, 'tokens.csv') });
    let ext: TestServer | undefined;
    try {
      const ok = (r: { status: number; text: string }) => assert.ok(r.status < 300, r.text);
      // What kube-apiserver publishes for its extension servers.
      ok(
        await core.request('POST', '/api/v1/namespaces/kube-system/configmaps', {
          body: {
            metadata: { name: 'extension-apiserver-authentication' },
            data: {
              'requestheader-client-ca-file': readFileSync(join(dir, 'fp-ca.crt'), 'utf8'),
              'requestheader-allowed-names': '["aggregator"]',
              'requestheader-username-headers': '["X-Remote-User"]',
              'requestheader-group-headers': '["X-Remote-Group"]',
              'requestheader-extra-headers-prefix': '["X-Remote-Extra-"]',
            },
          },
        }),
      );
      ok(await core.request('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles', { body: { metadata: { name: 'cm-reader' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['list'] }] } }));
      ok(
        await core.request('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings', {
          body: { metadata: { name: 'bob' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'cm-reader' }, subjects: [{ kind: 'User', name: 'bob' }] },
        }),
      );
      ok(await core.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'only-core' } } }));
      const warnings: string[] = [];
      ext = await startTestServer({
        authenticationKubeconfig: core.kapi.kubeconfigPath,
        authorizationKubeconfig: core.kapi.kubeconfigPath,
        coreKubeconfig: core.kapi.kubeconfigPath,
        warn: (m) => warnings.push(m),
      });
      // The core cluster's namespaces count: one only it has takes objects, one nobody has does not.
      const cm = (ns: string) => ext!.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: { metadata: { name: 'c' } } });
      assert.equal((await cm('only-core')).status, 201);
      const nowhere = await cm('nowhere');
      assert.equal(nowhere.status, 404);
      assert.equal(nowhere.json.message, 'namespaces "nowhere" not found');
      // bob is the core cluster's user: the extension reviews his token there, and asks there what he may do.
      const listed = await ext.request('GET', '/api/v1/namespaces/default/configmaps', { token: BOB });
      assert.equal(listed.status, 200, listed.text);
      const secrets = await ext.request('GET', '/api/v1/namespaces/default/secrets', { token: BOB });
      assert.equal(secrets.status, 403);
      assert.match(secrets.json.message, /^secrets is forbidden: User "bob" cannot list resource "secrets" in API group "" in the namespace "default"/);
      assert.equal((await ext.request('GET', '/api/v1/namespaces/default/configmaps', { token: 'nobody-knows-this-token' })).status, 401);
      // The front proxy the core cluster names authenticates its users here too.
      const whoami = (name: string) =>
        reviewWithCertificate(ext!, { cert: readFileSync(join(dir, `${name}.crt`)), key: readFileSync(join(dir, `${name}.key`)) }, { 'X-Remote-User': 'carol', 'X-Remote-Group': 'team' });
      const first = await whoami('fp');
      assert.equal(first.status, 201, JSON.stringify(first.body));
      assert.deepEqual(first.body.status.userInfo, { username: 'carol', groups: ['team', 'system:authenticated'] });
      // The core cluster's settings change (another front proxy, of another CA): followed without a restart.
      makeCA(dir, 'fp2-ca');
      makeClient(dir, 'fp2-ca', 'aggregator2', 'fp2');
      const cmPath = '/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication';
      const settings = (await core.request('GET', cmPath)).json;
      settings.data['requestheader-client-ca-file'] = readFileSync(join(dir, 'fp2-ca.crt'), 'utf8');
      settings.data['requestheader-allowed-names'] = '["aggregator2"]';
      ok(await core.request('PUT', cmPath, { body: settings }));
      let now: { status: number; body: any } = first;
      for (let i = 0; i < 250; i++) {
        now = await whoami('fp2');
        if (now.status === 201) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      assert.equal(now.status, 201, JSON.stringify(now.body));
      assert.equal(now.body.status.userInfo.username, 'carol');
      assert.equal((await whoami('fp')).status, 401, 'the old front proxy is no longer trusted');
      // Settings that do not parse (names that are no JSON list) leave the last good ones in force, not an open door.
      const broken = (await core.request('GET', cmPath)).json;
      broken.data['requestheader-allowed-names'] = 'aggregator2,anyone';
      ok(await core.request('PUT', cmPath, { body: broken }));
      for (let i = 0; i < 250 && !warnings.some((w) => w.includes('do not parse')); i++) await new Promise((r) => setTimeout(r, 20));
      assert.ok(warnings.some((w) => w.includes('holds settings that do not parse: the last good ones stay')), warnings.join('\n'));
      assert.equal((await whoami('fp2')).status, 201);
    } finally {
      await ext?.stop();
      await core.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/**
 * A kind of `group` served by the extension (a CRD of its own, any fields), and the core cluster's Service `ext` and
 * its Endpoints routing to it, as an APIService of the core names them.
 */
async function serveBehind(core: TestServer, ext: TestServer, group: string, kind: string): Promise<void> {
  const ok = (r: { status: number; text: string }) => assert.ok(r.status < 300, r.text);
  const plural = `${kind.toLowerCase()}s`;
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: { group, scope: 'Namespaced', names: { plural, kind }, versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }] },
  };
  ok(await ext.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: crd }));
  ok(await core.request('POST', '/api/v1/namespaces/default/services', { body: { metadata: { name: 'ext' }, spec: { ports: [{ port: 443, targetPort: ext.kapi.port }] } } }));
  ok(await core.request('POST', '/api/v1/namespaces/default/endpoints', { body: { metadata: { name: 'ext' }, subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ port: ext.kapi.port }] }] } }));
}

describe('kapi behind kapi, as an extension server behind kube-apiserver', () => {
  it('serves the core cluster\'s users through its aggregator, with their rights and namespaces judged there', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kapi-combined-'));
    const ALICE = 'alice-core-token-0123456789';
    const GROUP = 'combined.example.com';
    writeFileSync(join(dir, 'tokens.csv'), `${ALICE},alice,uid-alice,"team"\n`);
    makeCA(dir, 'fp-ca');
    makeClient(dir, 'fp-ca', 'front-proxy-client', 'fp');
    // The core: its front proxy's CA and names (which it publishes), and the certificate it proxies with.
    const core = await startTestServer({
      dataDir: join(dir, 'core'),
      tokenAuthFile: join(dir, 'tokens.csv'),
      requestHeader: { clientCAFile: join(dir, 'fp-ca.crt'), allowedNames: ['front-proxy-client'] },
      proxyClientCertFile: join(dir, 'fp.crt'),
      proxyClientKeyFile: join(dir, 'fp.key'),
      apiServiceCheckIntervalMs: 200,
    });
    let ext: TestServer | undefined;
    try {
      const ok = (r: { status: number; text: string }) => assert.ok(r.status < 300, r.text);
      const published = (await core.request('GET', '/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication')).json;
      assert.equal(published.data['requestheader-client-ca-file'], readFileSync(join(dir, 'fp-ca.crt'), 'utf8'));
      assert.equal(published.data['requestheader-allowed-names'], '["front-proxy-client"]');
      assert.equal(published.data['requestheader-username-headers'], '["X-Remote-User"]');
      assert.match(published.data['client-ca-file'], /^-----BEGIN CERTIFICATE-----/);
      // The extension knows only the core cluster: who is who, who may do what, which namespaces exist.
      ext = await startTestServer({
        dataDir: join(dir, 'ext'),
        tlsSans: ['ext.default.svc'],
        authenticationKubeconfig: core.kapi.kubeconfigPath,
        authorizationKubeconfig: core.kapi.kubeconfigPath,
        coreKubeconfig: core.kapi.kubeconfigPath,
      });
      await serveBehind(core, ext, GROUP, 'Gadget');
      ok(
        await core.request('POST', '/apis/apiregistration.k8s.io/v1/apiservices', {
          body: { metadata: { name: `v1.${GROUP}` }, spec: { group: GROUP, version: 'v1', groupPriorityMinimum: 2000, versionPriority: 10, service: { namespace: 'default', name: 'ext', port: 443 }, caBundle: Buffer.from(ext.kapi.caCertPem).toString('base64') } },
        }),
      );
      ok(await core.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'team-ns' } } }));
      // alice may read and create gadgets in team-ns, on the core cluster's word alone.
      ok(await core.request('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/team-ns/roles', { body: { metadata: { name: 'gadgets' }, rules: [{ apiGroups: [GROUP], resources: ['gadgets'], verbs: ['get', 'list', 'create'] }] } }));
      ok(
        await core.request('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/team-ns/rolebindings', {
          body: { metadata: { name: 'alice' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'gadgets' }, subjects: [{ kind: 'User', name: 'alice' }] },
        }),
      );
      for (let i = 0; i < 300 && (await core.request('GET', `/apis/${GROUP}/v1`)).status !== 200; i++) await new Promise((r) => setTimeout(r, 20));
      // alice's own kubeconfig: her token alone (the admin's has a client certificate, which would win).
      writeFileSync(join(dir, 'ca.crt'), core.kapi.caCertPem);
      writeFileSync(
        join(dir, 'alice.kubeconfig'),
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'Config',
          clusters: [{ name: 'core', cluster: { server: core.kapi.url, 'certificate-authority': join(dir, 'ca.crt') } }],
          users: [{ name: 'alice', user: { token: ALICE } }],
          contexts: [{ name: 'alice', context: { cluster: 'core', user: 'alice' } }],
          'current-context': 'alice',
        }),
      );
      const asAlice = (args: string[], input?: string) => core.kubectl(['--kubeconfig', join(dir, 'alice.kubeconfig'), ...args], input === undefined ? {} : { input });
      const gadget = (ns: string) => JSON.stringify({ apiVersion: `${GROUP}/v1`, kind: 'Gadget', metadata: { name: 'g1', namespace: ns }, spec: { size: 1 } });
      const created = await asAlice(['create', '-f', '-'], gadget('team-ns'));
      assert.equal(created.code, 0, created.stderr);
      const listed = await asAlice(['get', 'gadgets', '-n', 'team-ns', '-o', 'name']);
      assert.equal(listed.code, 0, listed.stderr);
      assert.equal(listed.stdout.trim(), `gadget.${GROUP}/g1`);
      // Stored on the extension, created by alice as the core cluster knows her.
      const stored = (await ext.request('GET', `/apis/${GROUP}/v1/namespaces/team-ns/gadgets/g1`)).json;
      assert.equal(stored.spec.size, 1);
      assert.equal(stored.metadata.managedFields[0].manager, 'kubectl-create');
      // What the core cluster does not grant her is refused in her name.
      const deleted = await asAlice(['delete', 'gadget', 'g1', '-n', 'team-ns']);
      assert.notEqual(deleted.code, 0, deleted.stdout + deleted.stderr);
      assert.match(deleted.stderr, new RegExp(`gadgets\\.${GROUP.replace(/\./g, '\\.')} "g1" is forbidden: User "alice" cannot delete resource "gadgets" in API group "${GROUP.replace(/\./g, '\\.')}" in the namespace "team-ns"`));
      // The core cluster's users' certificates (its client-ca-file) are users of the extension too.
      const kubeconfig = readFileSync(core.kapi.kubeconfigPath, 'utf8');
      const pem = (field: string) => Buffer.from(new RegExp(`${field}: (\\S+)`).exec(kubeconfig)![1], 'base64');
      const reviewed = async (server: TestServer) => {
        const { status, body } = await reviewWithCertificate(server, { cert: pem('client-certificate-data'), key: pem('client-key-data') });
        return { status, user: body.status?.userInfo };
      };
      const atCore = await reviewed(core);
      assert.equal(atCore.status, 201);
      assert.deepEqual(await reviewed(ext), atCore);
      // A namespace the core cluster does not have takes nothing, even from its admin.
      const nowhere = await core.kubectl(['create', '-f', '-'], { input: gadget('nowhere') });
      assert.notEqual(nowhere.code, 0);
      assert.match(nowhere.stderr, /namespaces "nowhere" not found/);
    } finally {
      await ext?.stop();
      await core.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('kapi behind kapi, its serving certificate kept by the core cluster (--serving-cert-service)', () => {
  it('serves a certificate from a Secret of the core cluster and writes its CA into the APIServices that route to it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kapi-serving-cert-'));
    const GROUP = 'verified.example.com';
    makeCA(dir, 'fp-ca');
    makeClient(dir, 'fp-ca', 'front-proxy-client', 'fp');
    const core = await startTestServer({
      dataDir: join(dir, 'core'),
      requestHeader: { clientCAFile: join(dir, 'fp-ca.crt'), allowedNames: ['front-proxy-client'] },
      proxyClientCertFile: join(dir, 'fp.crt'),
      proxyClientKeyFile: join(dir, 'fp.key'),
      apiServiceCheckIntervalMs: 200,
    });
    const replicas: TestServer[] = [];
    try {
      const ok = (r: { status: number; text: string }) => assert.ok(r.status < 300, r.text);
      const apiService = (version: string, spec: object = {}) => ({
        metadata: { name: `${version}.${GROUP}` },
        spec: { group: GROUP, version, groupPriorityMinimum: 2000, versionPriority: 10, service: { namespace: 'default', name: 'ext', port: 443 }, ...spec },
      });
      // Registered before the server runs, with no CA: nothing could verify it yet.
      ok(await core.request('POST', '/apis/apiregistration.k8s.io/v1/apiservices', { body: apiService('v1') }));
      const options = {
        authenticationKubeconfig: core.kapi.kubeconfigPath,
        authorizationKubeconfig: core.kapi.kubeconfigPath,
        coreKubeconfig: core.kapi.kubeconfigPath,
        servingCertService: { namespace: 'default', name: 'ext' },
      };
      const ext = await startTestServer({ dataDir: join(dir, 'ext'), ...options });
      replicas.push(ext);
      const secret = (await core.request('GET', '/api/v1/namespaces/default/secrets/ext-cert')).json;
      assert.equal(secret.type, 'kubernetes.io/tls');
      const caPem = Buffer.from(secret.data['ca.crt'], 'base64').toString();
      assert.equal(ext.kapi.caCertPem, caPem, 'the admin kubeconfig trusts the CA of the served certificate');
      const served = new X509Certificate(Buffer.from(secret.data['tls.crt'], 'base64'));
      assert.match(served.subjectAltName ?? '', /DNS:ext\.default\.svc\b/);
      const registered = (await core.request('GET', `/apis/apiregistration.k8s.io/v1/apiservices/v1.${GROUP}`)).json;
      assert.equal(registered.spec.caBundle, secret.data['ca.crt']);

      await serveBehind(core, ext, GROUP, 'Gauge');
      // The aggregator verifies the backend by the caBundle, as <service>.<namespace>.svc.
      await until('the APIService Available', async () => {
        const conditions = (await core.request('GET', `/apis/apiregistration.k8s.io/v1/apiservices/v1.${GROUP}`)).json.status?.conditions ?? [];
        return conditions.some((c: { type: string; status: string }) => c.type === 'Available' && c.status === 'True');
      });
      const through = await core.request('GET', `/apis/${GROUP}/v1`);
      assert.equal(through.status, 200, through.text);
      assert.deepEqual(through.json.resources.map((r: { name: string }) => r.name), ['gauges']);

      // An APIService that comes later, even one that skipped verification, is given the CA.
      ok(await core.request('POST', '/apis/apiregistration.k8s.io/v1/apiservices', { body: apiService('v1beta1', { insecureSkipTLSVerify: true }) }));
      await until('the later APIService verified', async () => {
        const spec = (await core.request('GET', `/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.${GROUP}`)).json.spec;
        return spec.caBundle === secret.data['ca.crt'] && spec.insecureSkipTLSVerify === undefined;
      });
      // Another replica serves the same certificate (the Secret is made once).
      const second = await startTestServer({ dataDir: join(dir, 'ext2'), ...options });
      replicas.push(second);
      const peer = await new Promise<Buffer>((resolve, reject) => {
        const socket = tls.connect({ host: '127.0.0.1', port: second.kapi.port, servername: 'ext.default.svc', ca: caPem }, () => {
          resolve(socket.getPeerCertificate().raw);
          socket.end();
        });
        socket.on('error', reject);
      });
      assert.deepEqual(peer, served.raw);
      assert.deepEqual((await core.request('GET', '/api/v1/namespaces/default/secrets/ext-cert')).json.metadata.resourceVersion, secret.metadata.resourceVersion);
      // Without the core cluster there is nothing to keep it in.
      await assert.rejects(startKapi({ dataDir: join(dir, 'alone'), port: 0, servingCertService: { namespace: 'default', name: 'ext' } }), {
        message: '--serving-cert-service needs --kubeconfig: the core cluster that keeps the certificate',
      });
    } finally {
      for (const r of replicas) await r.stop();
      await core.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
