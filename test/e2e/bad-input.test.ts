/**
 * The bad-input suite: hundreds of requests made from a seeded generator
 * (KAPI_FUZZ_SEED picks another seed; the seed is printed), over HTTP/1.1 and
 * HTTP/2 in turn: malformed targets, bodies (JSON, YAML, invalid UTF-8, BOM,
 * deep nesting, huge strings and numbers, duplicate and prototype keys),
 * patches of every type, query parameters, headers, methods and subresources.
 * Each answer must be of the class kube-apiserver gives (a Status for API
 * errors, never a 5xx for the client's mistakes); afterwards the server is
 * alive and the objects stored before are unchanged.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import http2 from 'node:http2';
import https from 'node:https';
import tls from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { CRONTAB_CRD, cronTab, startTestServer, type TestServer } from './harness.js';

const SEED = Number(process.env.KAPI_FUZZ_SEED ?? 20261125);
const CASES = Number(process.env.KAPI_FUZZ_CASES ?? 700);
const MALLORY = 'mallory-token-0123456789';
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const CT = '/apis/stable.example.com/v1/namespaces/default/crontabs';
const CM = '/api/v1/namespaces/default/configmaps';
const KEEP = ['keep-0', 'keep-1', 'keep-2'];

/** mulberry32: a small seeded generator, so that a failing case can be run again. */
function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)];
  return { next, int, pick, chance: (p: number) => next() < p };
}
type Rng = ReturnType<typeof rng>;

interface Case {
  what: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** Sent as written on a TLS socket (HTTP/1.1), for targets no client library sends. */
  raw?: boolean;
  /** The status classes kube-apiserver answers this case with. */
  expect: (status: number) => boolean;
}

const clientError = (s: number) => s >= 400 && s < 500;
const notServerError = (s: number) => s >= 200 && s < 500;
const is = (...codes: number[]) => (s: number) => codes.includes(s);

const STRINGS = ['', 'a', ' ', '\u65e5\u672c', '\u0000', '\u007f', '\ud800', 'x'.repeat(70_000), '${x}', '%zz', '../..', '__proto__', 'constructor', '\\', '"', '\n'];
const NUMBERS = ['0', '-0', '1e400', '-1e400', '99999999999999999999999', '1.5', '9223372036854775808', '-9223372036854775809', '0x10', '1e-400', 'NaN', 'Infinity'];

function randomScalar(r: Rng): unknown {
  switch (r.int(6)) {
    case 0:
      return r.pick(STRINGS);
    case 1:
      return r.int(1000) - 500;
    case 2:
      return r.chance(0.5);
    case 3:
      return null;
    case 4:
      return [r.pick(STRINGS), r.int(10)];
    default:
      return { [r.pick(STRINGS)]: r.pick(STRINGS) };
  }
}

function nested(depth: number, open: string, close: string, leaf = '1'): string {
  return open.repeat(depth) + leaf + close.repeat(depth);
}

/** A JSON text that is a crontab with something wrong in it, as bytes. */
function badObjectBody(r: Rng, name: string): { body: Buffer; what: string; expect: Case['expect'] } {
  const obj: any = cronTab(name);
  const json = (o: unknown) => Buffer.from(JSON.stringify(o));
  switch (r.int(16)) {
    case 0:
      return { what: 'truncated JSON', body: json(obj).subarray(0, r.int(60) + 1), expect: clientError };
    case 1:
      return { what: 'deep nesting', body: Buffer.from(`{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"${name}"},"spec":${nested(r.pick([200, 10_001, 50_000]), '{"a":', '}')}}`), expect: notServerError };
    case 2:
      return { what: 'deep arrays', body: Buffer.from(`{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"${name}"},"spec":{"cronSpec":${nested(r.pick([100, 20_000]), '[', ']')}}}`), expect: notServerError };
    case 3:
      obj.spec.cronSpec = 'x'.repeat(r.pick([100_000, 2_900_000]));
      return { what: 'huge string', body: json(obj), expect: notServerError };
    case 4:
      return { what: 'huge number', body: Buffer.from(JSON.stringify(obj).replace('"spec":{', `"spec":{"replicas":${r.pick(NUMBERS.filter((n) => /^[-0-9]/.test(n)))},`)), expect: notServerError };
    case 5:
      return { what: 'duplicate keys', body: Buffer.from(JSON.stringify(obj).replace('"spec":{', '"spec":{"image":"a","image":"b",')), expect: notServerError };
    case 6:
      return { what: 'prototype keys', body: Buffer.from(JSON.stringify(obj).replace('"spec":{', `"spec":{"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":1}},`).replace('"metadata":{', '"metadata":{"__proto__":{"x":1},')), expect: notServerError };
    case 7:
      return { what: 'BOM', body: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), json(obj)]), expect: notServerError };
    case 8:
      return { what: 'invalid UTF-8', body: Buffer.concat([json(obj).subarray(0, 20), Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80]), json(obj).subarray(20)]), expect: clientError };
    case 9:
      obj.spec = randomScalar(r);
      return { what: 'spec of another type', body: json(obj), expect: notServerError };
    case 10:
      obj.metadata = r.pick([null, [], 'x', 1, { name: 5 }, { name: name, labels: { '': 'x' } }, { name, labels: 'x' }, { name, annotations: { a: 1 } }, { name, finalizers: 'x' }, { name, ownerReferences: [{}] }, { name, resourceVersion: 'abc' }]);
      return { what: 'bad metadata', body: json(obj), expect: clientError };
    case 11:
      obj.apiVersion = r.pick(['', 'v1', 'stable.example.com/v2', 'x/y/z', 5]);
      // An empty apiVersion is defaulted from the URL, as upstream's decoder does.
      return { what: `apiVersion ${JSON.stringify(obj.apiVersion)}`, body: json(obj), expect: obj.apiVersion === '' ? notServerError : clientError };
    case 12:
      obj.kind = r.pick(['', 'Other', 5, null]);
      return { what: 'bad kind', body: json(obj), expect: clientError };
    case 13:
      return { what: 'not an object', body: Buffer.from(r.pick(['[]', '1', '"x"', 'null', 'true', '', ' '])), expect: clientError };
    case 14:
      return { what: 'unicode everywhere', body: json({ ...obj, spec: { [`\u65e5${r.int(100)}`]: '\u975e\u63a8\u5968', '\u007f': 1, '\u0085': 2 } }), expect: notServerError };
    default:
      return { what: 'many fields', body: json({ ...obj, spec: Object.fromEntries(Array.from({ length: r.pick([1000, 60_000]) }, (_, i) => [`f${i}`, i])) }), expect: notServerError };
  }
}

function badYamlBody(r: Rng, name: string): { body: Buffer; what: string } {
  const base = `apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: ${name}\n`;
  const bodies = [
    `${base}spec: [1, 2\n`,
    `${base}spec:\n  a: &a [x, x, x, x, x, x, x, x, x]\n  b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n  c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n  d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n  e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n  f: [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n`,
    `${base}spec: !!python/object:os.system x\n`,
    `${base}spec: !!binary "not base64"\n`,
    `${base}spec:\n  image: *undefined\n`,
    `${base}spec: ${nested(r.pick([100, 12_000]), '[', ']')}\n`,
    `${base}spec:\n  ? [a, b]\n  : c\n`,
    `${base}---\nkind: Other\n`,
    `\t${base}`,
    `${base}spec: {a: 1, a: 2}\n`,
    `${base}spec:\n${Array.from({ length: 8000 }, (_, i) => `  k${i}: ${i}`).join('\n')}\n`,
  ];
  const i = r.int(bodies.length);
  return { what: `YAML body ${i}`, body: Buffer.from(bodies[i]) };
}

const PATCH_TYPES = ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json', 'application/apply-patch+yaml', 'application/apply-patch+cbor', 'text/plain', ''];

function randomPointer(r: Rng): string {
  const parts = Array.from({ length: r.int(5) }, () => r.pick(['spec', 'metadata', 'labels', 'image', '0', '-', '-1', '99', '~0', '~1', '__proto__', 'constructor', '', 'managedFields', 'x']));
  return r.chance(0.1) ? parts.join('/') : `/${parts.join('/')}`;
}

function badPatch(r: Rng): { body: Buffer; contentType: string; what: string } {
  const contentType = r.pick(PATCH_TYPES);
  let body: unknown;
  switch (contentType) {
    case 'application/json-patch+json':
      body = Array.from({ length: r.int(6) }, () => {
        const op: Record<string, unknown> = { op: r.pick(['add', 'remove', 'replace', 'move', 'copy', 'test', 'bogus', 5]), path: randomPointer(r) };
        if (r.chance(0.7)) op.value = randomScalar(r);
        if (r.chance(0.3)) op.from = randomPointer(r);
        return r.chance(0.05) ? randomScalar(r) : op;
      });
      break;
    case 'application/apply-patch+yaml':
      body = r.chance(0.5) ? { apiVersion: 'stable.example.com/v1', kind: 'CronTab', metadata: { name: r.pick(KEEP) }, spec: randomScalar(r) } : randomScalar(r);
      break;
    default:
      body = r.chance(0.8) ? { spec: { image: randomScalar(r), $patch: r.pick(['replace', 'delete', 'merge', 'bogus']) }, metadata: { labels: randomScalar(r), resourceVersion: r.pick([undefined, '1', 'abc']) } } : randomScalar(r);
  }
  const text = r.chance(0.1) ? `${JSON.stringify(body)}garbage` : JSON.stringify(body) ?? 'null';
  return { body: Buffer.from(text), contentType, what: `patch ${contentType || '(none)'}` };
}

const QUERY_KEYS = ['limit', 'continue', 'resourceVersion', 'resourceVersionMatch', 'timeoutSeconds', 'labelSelector', 'fieldSelector', 'watch', 'dryRun', 'fieldValidation', 'fieldManager', 'force', 'pretty', 'gracePeriodSeconds', 'propagationPolicy', 'sendInitialEvents', 'allowWatchBookmarks', 'timeout', 'orphanDependents'];
const QUERY_VALUES = ['', 'abc', '-1', '0', '1', '500', '99999999999999999999', 'All', 'Strict', 'Exact', 'NotOlderThan', 'true', 'false', 'x in (a,b', 'a=b,c!=d', 'metadata.name=x', 'spec.foo=bar', '!x', '%zz', '\u65e5', 'a'.repeat(5000), '1s', '1h', 'Orphan', 'Bogus'];

function randomQuery(r: Rng, count = r.int(4)): string {
  const parts = Array.from({ length: count }, () => `${encodeURIComponent(r.pick(QUERY_KEYS))}=${encodeURIComponent(r.pick(QUERY_VALUES))}`);
  return parts.length ? `?${parts.join('&')}` : '';
}

function withQuery(path: string, query: string, extra: string): string {
  return query ? `${path}${query}&${extra}` : `${path}?${extra}`;
}

/** The next case: one of the categories, with a name that is either a stored object's or a fresh one. */
function makeCase(r: Rng, n: number): Case {
  const fresh = `fuzz-${n}`;
  const keep = r.pick(KEEP);
  const h = (contentType?: string): Record<string, string> => (contentType ? { 'content-type': contentType } : {});
  switch (r.int(9)) {
    case 0: {
      const targets = ['//%zz', '/\\%zz', '/api/v1/%zz', 'http://[::1/', '/api/v1/namespaces/default/configmaps/../configmaps', '/api/v1/namespaces/default/%2e%2e/configmaps', '/api//v1/namespaces', `/api/v1/namespaces/${'x'.repeat(5000)}`, '/apis/stable.example.com/v1/namespaces/default/crontabs/%2F', '/api/v1/namespaces/%00', '/%ff%fe', '*', '/api/v1/namespaces/default/configmaps/keep/./x', '/apis/\u65e5', '/api/v1/namespaces?%zz=1&a=%', '/openapi/v2?%', '/apis/stable.example.com/v1/namespaces/default/crontabs?watch=1&timeoutSeconds=0'];
      const path = r.pick(targets);
      return { what: `target ${path.slice(0, 60)}`, method: r.pick(['GET', 'POST', 'PUT']), path, headers: {}, raw: true, expect: path.includes('watch=1') ? notServerError : (s) => s === 400 || s === 404 || s === 405 || s === 200 || s === 401 || s === 415 || s === 422 };
    }
    case 1: {
      const b = badObjectBody(r, r.chance(0.3) ? keep : fresh);
      const method = r.pick(['POST', 'PUT']);
      const path = method === 'POST' ? `${CT}?dryRun=All` : `${CT}/${keep}?dryRun=All`;
      return { what: b.what, method, path, headers: h('application/json'), body: b.body, expect: b.expect };
    }
    case 2: {
      const b = badYamlBody(r, fresh);
      return { what: b.what, method: 'POST', path: `${CT}?dryRun=All`, headers: h('application/yaml'), body: b.body, expect: notServerError };
    }
    case 3: {
      const p = badPatch(r);
      const target = r.chance(0.5) ? `${CT}/${keep}` : `${CM}/${keep}`;
      const sub = r.pick(['', '', '/status', '/scale']);
      return { what: p.what, method: 'PATCH', path: withQuery(`${target}${sub}`, randomQuery(r, r.int(2)), 'dryRun=All&fieldManager=fuzz'), headers: h(p.contentType), body: p.body, expect: notServerError };
    }
    case 4: {
      const path = r.pick([CT, CM, `${CT}/${keep}`, `${CM}/${keep}`, '/api/v1/namespaces', `${CT}/${keep}/status`]);
      const method = r.pick(['GET', 'GET', 'DELETE']);
      const q = randomQuery(r, 1 + r.int(4));
      // Deletes of stored objects are dry runs: what is stored must stay.
      const full = method === 'DELETE' ? withQuery(path, q, 'dryRun=All') : q.includes('watch=') ? withQuery(path, q, 'timeoutSeconds=1') : `${path}${q}`;
      return { what: `query ${q.slice(0, 80)}`, method, path: full, headers: {}, expect: notServerError };
    }
    case 5: {
      const headers: Record<string, string> = {};
      headers.accept = r.pick(['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf', 'application/json;as=Table;v=v1;g=meta.k8s.io', 'application/json;as=Table;v=v9;g=meta.k8s.io', 'text/html', '*/*', ';;;', 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1', 'a'.repeat(10_000)]);
      if (r.chance(0.3)) headers['content-type'] = r.pick(['application/json; charset=latin1', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', ';', 'application/json;;']);
      if (r.chance(0.3)) headers['user-agent'] = r.pick(['\u00ff\u00fe', 'x'.repeat(20_000), 'kubectl/v1.30.0 (linux/amd64) kubernetes/abc']);
      if (r.chance(0.3)) headers['impersonate-user'] = r.pick(['bob', '', 'system:serviceaccount:default:x', 'system:serviceaccount:bad:', 'system:anonymous', '\u00ff']);
      if (r.chance(0.2)) headers[`impersonate-extra-${r.pick(['__proto__', 'constructor', 'a%zz', 'x%2Fy', 'hasOwnProperty'])}`] = r.pick(['v', '']);
      if (r.chance(0.2)) headers['impersonate-group'] = r.pick(['devs', 'system:masters', '']);
      if (r.chance(0.1)) headers['impersonate-uid'] = '42';
      return { what: `headers ${JSON.stringify(headers).slice(0, 80)}`, method: 'GET', path: r.pick([CT, `${CT}/${keep}`, '/api', '/apis', '/apis/stable.example.com/v1']), headers, expect: notServerError };
    }
    case 6: {
      const method = r.pick(['HEAD', 'OPTIONS', 'TRACE', 'CONNECT', 'FOO', 'PROPFIND', 'POST', 'PUT']);
      const path = r.pick([`${CT}/${keep}`, CT, `${CT}/${keep}/status`, '/api/v1', '/healthz', '/metrics']);
      const body = method === 'POST' || method === 'PUT' ? Buffer.from(JSON.stringify(cronTab(keep))) : undefined;
      const guarded = method === 'POST' || method === 'PUT' ? withQuery(path, '', 'dryRun=All') : path;
      return { what: `method ${method}`, method, path: guarded, headers: h(body ? 'application/json' : undefined), body, expect: notServerError };
    }
    case 7: {
      const sub = r.pick(['status', 'scale', 'finalize', 'made-up', 'log', 'exec', 'proxy', 'status/extra', '', '\u65e5', 'eviction']);
      const method = r.pick(['GET', 'PUT', 'PATCH', 'POST', 'DELETE']);
      const body = method === 'GET' || method === 'DELETE' ? undefined : Buffer.from(JSON.stringify(r.chance(0.5) ? cronTab(keep) : { kind: 'Scale', apiVersion: 'autoscaling/v1', metadata: { name: keep }, spec: { replicas: r.pick([-1, 3, 'x']) } }));
      const path = withQuery(`${r.pick([CT, '/api/v1/namespaces'])}/${r.pick([keep, 'default'])}/${sub}`, '', 'dryRun=All');
      return { what: `subresource ${sub} ${method}`, method, path, headers: h(body ? r.pick(['application/json', 'application/merge-patch+json']) : undefined), body, expect: notServerError };
    }
    default: {
      // Authentication: a bearer token that is not known is 401, whatever the path; a header that presents
      // no token leaves the request anonymous, and system:anonymous may read none of these (403).
      const token = r.pick(['', 'x', 'Bearer', 'Bearer ', `Bearer ${'x'.repeat(10_000)}`, 'Basic YWRtaW46YWRtaW4=', 'Bearer \u00ff']);
      const presented = /^Bearer \S/.test(token);
      return { what: `authorization ${token.slice(0, 20)}`, method: 'GET', path: r.pick([CT, '/api/v1/namespaces', '/metrics', '/openapi/v2']), headers: { authorization: token }, expect: is(presented ? 401 : 403) };
    }
  }
}

interface Reply {
  status: number;
  contentType: string;
  text: string;
}

describe(`bad input (seed ${SEED}, ${CASES} cases; KAPI_FUZZ_SEED=${SEED} runs them again)`, () => {
  let s: TestServer;
  let session: http2.ClientHttp2Session;
  let agent: https.Agent;
  const stored = new Map<string, string>();

  const snapshot = async () => {
    const out = new Map<string, string>();
    for (const name of KEEP) {
      for (const base of [CT, CM]) {
        const res = await s.request('GET', `${base}/${name}`);
        assert.equal(res.status, 200, `${base}/${name}: ${res.text}`);
        out.set(`${base}/${name}`, res.text);
      }
    }
    return out;
  };

  let tokenDir: string;
  before(async () => {
    // mallory: an unprivileged user, who may edit namespaced objects (upstream's `edit` role) and nothing more.
    tokenDir = mkdtempSync(join(tmpdir(), 'kapi-fuzz-'));
    writeFileSync(join(tokenDir, 'tokens.csv'), `${MALLORY},mallory,uid-mallory,"fuzzers"\n`);
    s = await startTestServer({ tokenAuthFile: join(tokenDir, 'tokens.csv') });
    const binding = { metadata: { name: 'fuzzers-edit' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit' }, subjects: [{ kind: 'Group', name: 'fuzzers' }] };
    assert.equal((await s.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', { body: binding })).status, 201);
    assert.equal((await s.request('POST', CRDS, { body: CRONTAB_CRD })).status, 201);
    for (const name of KEEP) {
      assert.equal((await s.request('POST', CT, { body: cronTab(name) })).status, 201);
      assert.equal((await s.request('POST', CM, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: 'b' } } })).status, 201);
    }
    for (const [k, v] of await snapshot()) stored.set(k, v);
    agent = new https.Agent({ ca: s.kapi.caCertPem, keepAlive: true, maxSockets: 4 });
    // Up to 4,096 characters of warnings may come in hundreds of short Warning headers: more than Node's default 128 pairs.
    session = http2.connect(s.kapi.url, { ca: s.kapi.caCertPem, maxHeaderListPairs: 4096 });
    session.on('error', () => {});
  });
  after(async () => {
    session.close();
    agent.destroy();
    await s.stop();
    rmSync(tokenDir, { recursive: true, force: true });
  });

  let token = '';
  const withToken = (c: Case) => ('authorization' in c.headers ? c.headers : { ...c.headers, authorization: `Bearer ${token}` });

  function viaRaw(c: Case): Promise<Reply> {
    const { hostname, port } = new URL(s.kapi.url);
    const head = Object.entries(withToken(c)).map(([k, v]) => `${k}: ${v}\r\n`).join('');
    const request = Buffer.concat([Buffer.from(`${c.method} ${c.path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n${head}content-length: ${c.body?.length ?? 0}\r\n\r\n`, 'latin1'), c.body ?? Buffer.alloc(0)]);
    return new Promise((resolve, reject) => {
      const socket = tls.connect({ host: hostname, port: Number(port), ca: s.kapi.caCertPem, ALPNProtocols: ['http/1.1'] }, () => socket.write(request));
      const chunks: Buffer[] = [];
      socket.on('data', (d: Buffer) => chunks.push(d));
      socket.on('close', () => {
        const text = Buffer.concat(chunks).toString('latin1');
        const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
        if (!m) return reject(new Error(`no HTTP answer: ${JSON.stringify(text.slice(0, 100))}`));
        const ct = /\r\ncontent-type: ([^\r]*)/i.exec(text)?.[1] ?? '';
        resolve({ status: Number(m[1]), contentType: ct, text: text.slice(text.indexOf('\r\n\r\n') + 4) });
      });
      socket.on('error', reject);
      socket.setTimeout(20_000, () => socket.destroy(new Error('timed out')));
    });
  }

  function viaHttp1(c: Case): Promise<Reply> {
    return new Promise((resolve, reject) => {
      const req = https.request(new URL(c.path, s.kapi.url), { method: c.method, agent, headers: { ...withToken(c), ...(c.body ? { 'content-length': String(c.body.length) } : {}) } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), text: Buffer.concat(chunks).toString() }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.setTimeout(20_000, () => req.destroy(new Error('timed out')));
      req.end(c.body);
    });
  }

  function viaHttp2(c: Case): Promise<Reply> {
    return new Promise((resolve, reject) => {
      const stream = session.request({ ':method': c.method, ':path': c.path, ...withToken(c) });
      let status = 0;
      let contentType = '';
      const chunks: Buffer[] = [];
      stream.on('response', (h) => {
        status = Number(h[':status']);
        contentType = String(h['content-type'] ?? '');
      });
      stream.on('data', (d: Buffer) => chunks.push(d));
      stream.on('end', () => resolve({ status, contentType, text: Buffer.concat(chunks).toString() }));
      stream.on('error', reject);
      stream.setTimeout(20_000, () => stream.close(http2.constants.NGHTTP2_CANCEL));
      stream.end(c.body);
    });
  }

  /** Runs every case as the user of `as`; `alsoAllowed`: statuses any case may also get (an unprivileged user's 403). */
  async function runCases(as: string, alsoAllowed: number[]): Promise<void> {
    token = as;
    const r = rng(SEED);
    const failures: string[] = [];
    let sent = 0;
    for (let n = 0; n < CASES; n++) {
      const c = makeCase(r, n);
      const transport = c.raw || c.method === 'CONNECT' ? 'raw' : n % 2 === 0 ? 'h2' : 'h1';
      let reply: Reply;
      try {
        reply = transport === 'raw' ? await viaRaw(c) : transport === 'h2' ? await viaHttp2(c) : await viaHttp1(c);
      } catch (err) {
        // Requests a client library refuses to send (invalid header characters) test nothing here.
        if (/ERR_INVALID|ERR_HTTP2_INVALID|Invalid character|is not a valid HTTP token/.test(String((err as Error).message) + String((err as { code?: string }).code))) continue;
        failures.push(`#${n} ${transport} ${c.what} ${c.method} ${c.path.slice(0, 100)}: ${(err as Error).message}`);
        continue;
      }
      sent++;
      const label = `#${n} ${transport} ${c.what} ${c.method} ${c.path.slice(0, 100)} -> ${reply.status} ${reply.text.slice(0, 160)}`;
      if (!c.expect(reply.status) && !alsoAllowed.includes(reply.status)) failures.push(`unexpected status: ${label}`);
      if (reply.status >= 400 && c.method !== 'HEAD' && reply.contentType.startsWith('application/json')) {
        let body: any;
        try {
          body = JSON.parse(reply.text);
        } catch {
          body = undefined;
        }
        if (body?.kind !== 'Status' || body.code !== reply.status || typeof body.message !== 'string') failures.push(`not a Status: ${label}`);
      }
    }
    assert.deepEqual(failures, [], `${failures.length} of ${CASES} cases failed (seed ${SEED})`);
    assert.ok(sent > CASES * 0.9, `only ${sent} of ${CASES} cases were sent`);
    assert.equal((await s.request('GET', '/healthz', { token: null })).status, 200);
    assert.deepEqual(await snapshot(), stored, 'stored objects are unchanged');
    const metrics = await s.request('GET', '/metrics');
    assert.equal(metrics.status, 200);
    assert.ok(metrics.text.length < 2_000_000, `metrics grew to ${metrics.text.length} bytes`);
    assert.equal(({} as { polluted?: unknown }).polluted, undefined, 'no prototype was polluted');
  }

  it('answers every case in Kubernetes form, stays up, and keeps what is stored', () => runCases(s.kapi.adminToken, []));

  // The same cases as a user RBAC judges: authorization, escalation checks and denials on attacker input.
  it('does the same for an unprivileged user, who may also be refused (403)', () => runCases(MALLORY, [403]));
});
