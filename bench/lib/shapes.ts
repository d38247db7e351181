/**
 * Request shapes where the size of a request meets an algorithm, each at a size n (or depth d) chosen by the
 * caller: the complexity suite (test/complexity) sends each at n and 8n and compares the times; the soak
 * benchmark (bench/soak.ts) sends the attacks among them while it measures a plain GET on another connection.
 *
 * A shape is built in two steps: `setup` (not timed) creates what the request needs, and `request` is the
 * one timed request. Names are per size so that sizes never share objects.
 */
import { encodeObject } from '../../src/machinery/protobuf/objects.js';

export interface ShapeRequest {
  method: string;
  path: string;
  body?: Buffer | string;
  headers?: Record<string, string>;
}

/** What the shapes need of a client: one request, its status and body. */
export interface ShapeClient {
  request(method: string, path: string, body?: Buffer | string, headers?: Record<string, string>): Promise<{ status: number; body: Buffer }>;
}

export interface Shape {
  /** What it exercises, as the README's table lists it. */
  name: string;
  /** The size the suite starts from (the big one is 8 times this). */
  n: number;
  /** The statuses a correct server answers. */
  expect: number[];
  /** Part of the soak benchmark's attacks (issue #39's reproductions). */
  attack?: boolean;
  /** The size the soak benchmark attacks with (8n when not given). */
  attackN?: number;
  setup?(c: ShapeClient, n: number): Promise<void>;
  request(n: number): ShapeRequest;
}

/** The namespace the shapes' objects go into. */
export const NAMESPACE = 'complexity';
const NS = NAMESPACE;
const JSON_TYPE = { 'content-type': 'application/json' };
const CM = `/api/v1/namespaces/${NS}/configmaps`;
const DEPLOYMENTS = `/apis/apps/v1/namespaces/${NS}/deployments`;
const GROUP = 'complexity.example.com';
const DEEP = `/apis/${GROUP}/v1/namespaces/${NS}/deeps`;
const CHECKED = `/apis/${GROUP}/v1/namespaces/${NS}/checkeds`;

const keys = (n: number, value = (i: number) => `v${i}`) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, value(i)]));
const configMap = (name: string, data: Record<string, string>) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NS }, data });

/** An object nested `depth` levels: {"a":{"a":...{"a":1}}}. */
export function nested(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}

/** The same as JSON text, without recursion (JSON.stringify recurses). */
function nestedJson(depth: number): string {
  return `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

/** A fieldsV1 set `depth` levels deep: {"f:data":{"f:a":{"f:a":...{}}}} as text. */
function deepFieldsJson(depth: number): string {
  return `{"f:data":${'{"f:a":'.repeat(depth)}{}${'}'.repeat(depth)}}`;
}

async function must(c: ShapeClient, method: string, path: string, body: unknown, ok: number[] = [200, 201], headers: Record<string, string> = JSON_TYPE): Promise<Buffer> {
  const r = await c.request(method, path, typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body), headers);
  if (!ok.includes(r.status)) throw new Error(`setup ${method} ${path}: ${r.status} ${r.body.toString().slice(0, 300)}`);
  return r.body;
}

function deployment(name: string, extra: { volumes?: number; containers?: number; finalizers?: number }) {
  const containers = Array.from({ length: Math.max(1, extra.containers ?? 1) }, (_, i) => ({ name: `c${i}`, image: 'busybox' }));
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: NS, ...(extra.finalizers ? { finalizers: Array.from({ length: extra.finalizers }, (_, i) => `example.com/f${i}`) } : {}) },
    spec: {
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers, volumes: Array.from({ length: extra.volumes ?? 0 }, (_, i) => ({ name: `v${i}`, emptyDir: {} })) },
      },
    },
  };
}

/** A namespaced CRD of the shapes' group, one version served and stored, with this schema. */
function crd(plural: string, kind: string, openAPIV3Schema: Record<string, unknown>) {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${GROUP}` },
    spec: { group: GROUP, scope: 'Namespaced', names: { plural, singular: kind.toLowerCase(), kind }, versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema } }] },
  };
}

const CRD = crd('deeps', 'Deep', { type: 'object', 'x-kubernetes-preserve-unknown-fields': true });

const CHECKED_CRD = crd('checkeds', 'Checked', {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        items: {
          type: 'array',
          maxItems: 1_000_000,
          items: {
            type: 'object',
            properties: {
              name: { type: 'string', maxLength: 64, pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$' },
              size: { type: 'integer', minimum: 0, maximum: 1000, default: 1 },
              when: { type: 'string', format: 'date-time' },
              mode: { type: 'string', enum: ['a', 'b', 'c'] },
              port: { 'x-kubernetes-int-or-string': true },
            },
          },
        },
        names: { type: 'array', maxItems: 1_000_000, items: { type: 'string', maxLength: 16 }, 'x-kubernetes-validations': [{ rule: 'self.all(x, x.size() <= 16)', message: 'names are short' }] },
        text: { type: 'string', pattern: '^(a+)+$' },
        quantity: { type: 'string', 'x-kubernetes-validations': [{ rule: "!isQuantity(self) || quantity(self).add(quantity(self)).sub(quantity('1')).isGreaterThan(quantity('1Ki'))", message: 'too small' }] },
      },
    },
  },
});

async function crds(c: ShapeClient): Promise<void> {
  for (const definition of [CRD, CHECKED_CRD]) {
    const r = await c.request('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${definition.metadata.name}`);
    if (r.status === 200) continue;
    await must(c, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', definition);
  }
  // Served once established: wait for the resources to answer.
  for (const path of [DEEP, CHECKED]) {
    for (let i = 0; ; i++) {
      if ((await c.request('GET', path)).status === 200) break;
      if (i > 200) throw new Error(`${path} never served`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }
}

/** The namespace and CRDs every shape may use. */
export async function prepare(c: ShapeClient): Promise<void> {
  const r = await c.request('GET', `/api/v1/namespaces/${NS}`);
  if (r.status !== 200) await must(c, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  await crds(c);
}

const DRY = '?dryRun=All';

export const SHAPES: Shape[] = [
  {
    name: 'JSON decoding: a ConfigMap of n keys',
    n: 1000,
    expect: [201],
    request: (n) => ({ method: 'POST', path: CM + DRY, body: JSON.stringify(configMap(`json-${n}`, keys(n))), headers: JSON_TYPE }),
  },
  {
    name: 'JSON decoding: a custom resource nested d deep',
    n: 1200,
    expect: [201],
    attack: true,
    request: (d) => ({ method: 'POST', path: DEEP + DRY, body: `{"apiVersion":"${GROUP}/v1","kind":"Deep","metadata":{"name":"deep-${d}"},"spec":${nestedJson(d)}}`, headers: JSON_TYPE }),
  },
  {
    name: 'YAML decoding: a ConfigMap of n keys',
    n: 1000,
    expect: [201],
    request: (n) => ({
      method: 'POST',
      path: CM + DRY,
      body: `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yaml-${n}\ndata:\n${Array.from({ length: n }, (_, i) => `  k${i}: v${i}\n`).join('')}`,
      headers: { 'content-type': 'application/yaml' },
    }),
  },
  {
    name: 'protobuf decoding: a ConfigMap of n keys',
    n: 1000,
    expect: [201],
    request: (n) => ({ method: 'POST', path: CM + DRY, body: encodeObject(configMap(`proto-${n}`, keys(n))), headers: { 'content-type': 'application/vnd.kubernetes.protobuf' } }),
  },
  {
    name: 'schema, format and CEL validation: a custom resource of n list items',
    n: 500,
    expect: [201],
    request: (n) => ({
      method: 'POST',
      path: CHECKED + DRY,
      body: JSON.stringify({
        apiVersion: `${GROUP}/v1`,
        kind: 'Checked',
        metadata: { name: `checked-${n}` },
        spec: {
          items: Array.from({ length: n }, (_, i) => ({ name: `item-${i}`, size: i % 1000, when: '2026-01-02T03:04:05Z', mode: 'b', port: i % 2 ? 'http' : 80 })),
          names: Array.from({ length: n }, (_, i) => `n${i}`),
        },
      }),
      headers: JSON_TYPE,
    }),
  },
  {
    name: 'regex validation: a pattern like ^(a+)+$ on n characters',
    n: 20_000,
    expect: [422],
    request: (n) => ({ method: 'POST', path: CHECKED + DRY, body: JSON.stringify({ apiVersion: `${GROUP}/v1`, kind: 'Checked', metadata: { name: `regex-${n}` }, spec: { text: `${'a'.repeat(n)}b` } }), headers: JSON_TYPE }),
  },
  {
    name: 'CEL quantity: quantity(), add, sub and a comparison of n digits',
    n: 50_000,
    expect: [201],
    request: (n) => ({
      method: 'POST',
      path: CHECKED + DRY,
      body: JSON.stringify({ apiVersion: `${GROUP}/v1`, kind: 'Checked', metadata: { name: `quantity-${n}` }, spec: { quantity: `${'7'.repeat(n)}.${'3'.repeat(n)}Mi` } }),
      headers: JSON_TYPE,
    }),
  },
  {
    name: 'quantity parsing: a PVC whose request is n digits and a wrong letter',
    n: 30_000,
    expect: [400],
    attack: true,
    attackN: 260_000,
    request: (n) => ({
      method: 'POST',
      path: `/api/v1/namespaces/${NS}/persistentvolumeclaims${DRY}`,
      body: JSON.stringify({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: `pvc-${n}` }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: `${'1'.repeat(n)}x` } } } }),
      headers: JSON_TYPE,
    }),
  },
  {
    name: 'merge patch: n keys into a ConfigMap of n keys',
    n: 1000,
    expect: [200],
    setup: async (c, n) => void (await must(c, 'POST', CM, configMap(`merge-${n}`, keys(n)))),
    request: (n) => ({ method: 'PATCH', path: `${CM}/merge-${n}`, body: JSON.stringify({ data: keys(n, (i) => `w${i}`) }), headers: { 'content-type': 'application/merge-patch+json' } }),
  },
  {
    name: 'merge patch: one label on a ConfigMap of n keys',
    n: 2000,
    expect: [200],
    setup: async (c, n) => void (await must(c, 'POST', CM, configMap(`label-${n}`, keys(n)))),
    request: (n) => ({ method: 'PATCH', path: `${CM}/label-${n}`, body: JSON.stringify({ metadata: { labels: { round: String(Math.random()).slice(2, 10) } } }), headers: { 'content-type': 'application/merge-patch+json' } }),
  },
  {
    name: 'JSON patch: n operations on a ConfigMap',
    n: 1000,
    expect: [200],
    setup: async (c, n) => void (await must(c, 'POST', CM, configMap(`jsonpatch-${n}`, { a: 'b' }))),
    request: (n) => ({
      method: 'PATCH',
      path: `${CM}/jsonpatch-${n}`,
      body: JSON.stringify(Array.from({ length: n }, (_, i) => ({ op: 'add', path: `/data/k${i}`, value: `v${i}` }))),
      headers: { 'content-type': 'application/json-patch+json' },
    }),
  },
  {
    name: 'strategic merge patch: n volumes into a Deployment of n volumes',
    n: 300,
    expect: [200],
    attack: true,
    attackN: 5000,
    setup: async (c, n) => void (await must(c, 'POST', DEPLOYMENTS, deployment(`smp-volumes-${n}`, { volumes: n }))),
    request: (n) => ({
      method: 'PATCH',
      path: `${DEPLOYMENTS}/smp-volumes-${n}`,
      body: JSON.stringify({ spec: { template: { spec: { volumes: Array.from({ length: n }, (_, i) => ({ name: `v${n - 1 - i}`, emptyDir: { medium: 'Memory' } })) } } } }),
      headers: { 'content-type': 'application/strategic-merge-patch+json' },
    }),
  },
  {
    name: 'strategic merge patch: n containers and their $setElementOrder',
    n: 250,
    expect: [200],
    attack: true,
    setup: async (c, n) => void (await must(c, 'POST', DEPLOYMENTS, deployment(`smp-order-${n}`, {}))),
    request: (n) => ({
      method: 'PATCH',
      path: `${DEPLOYMENTS}/smp-order-${n}`,
      body: JSON.stringify({
        spec: {
          template: {
            spec: {
              '$setElementOrder/containers': Array.from({ length: n }, (_, i) => ({ name: `c${n - 1 - i}` })),
              containers: Array.from({ length: n }, (_, i) => ({ name: `c${i}`, image: 'busybox' })),
            },
          },
        },
      }),
      headers: { 'content-type': 'application/strategic-merge-patch+json' },
    }),
  },
  {
    name: 'strategic merge patch: $deleteFromPrimitiveList of n finalizers',
    n: 1000,
    expect: [200],
    attack: true,
    setup: async (c, n) => void (await must(c, 'POST', DEPLOYMENTS, deployment(`smp-finalizers-${n}`, { finalizers: n }))),
    request: (n) => ({
      method: 'PATCH',
      path: `${DEPLOYMENTS}/smp-finalizers-${n}`,
      body: JSON.stringify({ metadata: { '$deleteFromPrimitiveList/finalizers': Array.from({ length: n }, (_, i) => `example.com/f${i}`) } }),
      headers: { 'content-type': 'application/strategic-merge-patch+json' },
    }),
  },
  {
    name: 'server-side apply: a ConfigMap of n keys, a second manager taking them over',
    n: 600,
    expect: [200],
    setup: async (c, n) => void (await must(c, 'PATCH', `${CM}/apply-${n}?fieldManager=first`, configMap(`apply-${n}`, keys(n)), [200, 201], { 'content-type': 'application/apply-patch+yaml' })),
    request: (n) => ({ method: 'PATCH', path: `${CM}/apply-${n}?fieldManager=second&force=true`, body: JSON.stringify(configMap(`apply-${n}`, keys(n, (i) => `w${i}`))), headers: { 'content-type': 'application/apply-patch+yaml' } }),
  },
  {
    name: 'server-side apply: a ConfigMap of n keys applied again by its manager, with one more label',
    n: 1000,
    expect: [200],
    setup: async (c, n) => void (await must(c, 'PATCH', `${CM}/reapply-${n}?fieldManager=m`, configMap(`reapply-${n}`, keys(n)), [200, 201], { 'content-type': 'application/apply-patch+yaml' })),
    request: (n) => ({
      method: 'PATCH',
      path: `${CM}/reapply-${n}?fieldManager=m`,
      body: JSON.stringify({ ...configMap(`reapply-${n}`, keys(n)), metadata: { name: `reapply-${n}`, namespace: NS, labels: { round: String(Math.random()).slice(2, 10) } } }),
      headers: { 'content-type': 'application/apply-patch+yaml' },
    }),
  },
  {
    name: 'server-side apply: a Deployment of n containers (a list map)',
    n: 250,
    expect: [200, 201],
    request: (n) => ({ method: 'PATCH', path: `${DEPLOYMENTS}/apply-containers-${n}?fieldManager=first`, body: JSON.stringify(deployment(`apply-containers-${n}`, { containers: n })), headers: { 'content-type': 'application/apply-patch+yaml' } }),
  },
  {
    name: 'managedFields: a fieldsV1 set nested d deep',
    n: 1200,
    expect: [201],
    attack: true,
    request: (d) => ({
      method: 'POST',
      path: CM + DRY,
      body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"fields-${d}","managedFields":[{"manager":"m","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":${deepFieldsJson(d)}}]},"data":{"a":"b"}}`,
      headers: JSON_TYPE,
    }),
  },
  {
    name: 'label selector: a set of n values',
    n: 200,
    expect: [200],
    request: (n) => ({ method: 'GET', path: `${CM}?labelSelector=${encodeURIComponent(`app in (${Array.from({ length: n }, (_, i) => `v${i}`).join(',')})`)}` }),
  },
  {
    name: 'field selector: n requirements',
    n: 100,
    expect: [200],
    request: (n) => ({ method: 'GET', path: `${CM}?fieldSelector=${encodeURIComponent(Array.from({ length: n }, (_, i) => `metadata.name!=x${i}`).join(','))}` }),
  },
  {
    name: 'JSON output: a ConfigMap of n keys',
    n: 2000,
    expect: [200],
    setup: async (c, n) => void (await must(c, 'POST', CM, configMap(`out-${n}`, keys(n)))),
    request: (n) => ({ method: 'GET', path: `${CM}/out-${n}` }),
  },
  {
    name: 'YAML output: a ConfigMap of n keys',
    n: 1000,
    expect: [200],
    setup: async (c, n) => void (await must(c, 'POST', CM, configMap(`yaml-out-${n}`, keys(n)))),
    request: (n) => ({ method: 'GET', path: `${CM}/yaml-out-${n}`, headers: { accept: 'application/yaml' } }),
  },
  {
    name: 'YAML output: a custom resource nested d deep',
    n: 250,
    expect: [200],
    attack: true,
    setup: async (c, d) => void (await must(c, 'POST', DEEP, `{"apiVersion":"${GROUP}/v1","kind":"Deep","metadata":{"name":"yaml-deep-${d}"},"spec":${nestedJson(d)}}`)),
    request: (d) => ({ method: 'GET', path: `${DEEP}/yaml-deep-${d}`, headers: { accept: 'application/yaml' } }),
  },
  {
    name: 'YAML output: a ConfigMap whose managedFields hold 8 fieldsV1 sets nested d deep',
    n: 375,
    expect: [200],
    attack: true,
    setup: async (c, d) => {
      const entry = (i: number) => `{"manager":"m${i}","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":${deepFieldsJson(d)}}`;
      const entries = Array.from({ length: 8 }, (_, i) => entry(i)).join(',');
      await must(c, 'POST', CM, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"fields-yaml-${d}","managedFields":[${entries}]},"data":{"a":"b"}}`);
    },
    request: (d) => ({ method: 'GET', path: `${CM}/fields-yaml-${d}`, headers: { accept: 'application/yaml' } }),
  },
  {
    name: 'Table output: a ConfigMap of n keys',
    n: 2000,
    expect: [200],
    setup: async (c, n) => void (await must(c, 'POST', CM, configMap(`table-${n}`, keys(n)))),
    request: (n) => ({ method: 'GET', path: `${CM}/table-${n}`, headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } }),
  },
  {
    name: 'protobuf output: a ConfigMap of n keys',
    n: 2000,
    expect: [200],
    setup: async (c, n) => void (await must(c, 'POST', CM, configMap(`proto-out-${n}`, keys(n)))),
    request: (n) => ({ method: 'GET', path: `${CM}/proto-out-${n}`, headers: { accept: 'application/vnd.kubernetes.protobuf' } }),
  },
];
