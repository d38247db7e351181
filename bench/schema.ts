/**
 * Schema engine benchmark: µs per prune + default + validate (what a create costs
 * in src/schema), for the CronTab CRD of the Kubernetes docs with a typical object,
 * and for a large generated CRD shaped like real ones (hundreds of properties,
 * nested arrays and maps, patterns, enums, formats, list types, CEL rules). Also
 * compile time, read-path (prune + default) and update (ratcheting) costs.
 *
 *   node .out/schema/bench/schema.js [--quick]
 */
import { performance } from 'node:perf_hooks';
import { compileSchema, type CompiledSchema } from '../src/schema/index.js';
import type { JSONSchemaProps } from '../src/schema/types.js';
import { jsonClone } from '../src/schema/values.js';

const quick = process.argv.includes('--quick');

const CRONTAB: JSONSchemaProps = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        cronSpec: { type: 'string', pattern: '^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$', default: '5 0 * * *' },
        image: { type: 'string' },
        replicas: { type: 'integer', minimum: 1, maximum: 10, default: 1 },
      },
    },
  },
};

const crontab = {
  apiVersion: 'stable.example.com/v1',
  kind: 'CronTab',
  metadata: {
    name: 'my-new-cron-object',
    namespace: 'default',
    labels: { app: 'cron', tier: 'batch', team: 'platform' },
    annotations: { 'example.com/owner': 'someone@example.com', 'example.com/description': 'a cron job that runs a container image on a schedule '.repeat(4) },
    uid: '9423255b-4600-11e7-af6a-28d2447dc82b',
    resourceVersion: '285',
    generation: 1,
    creationTimestamp: '2017-05-31T12:56:35Z',
  },
  spec: { cronSpec: '* * * * */5', image: 'my-awesome-cron-image:1.2.3', replicas: 3 },
};

/** A container-like object schema with n extra scalar fields. */
function containerSchema(n: number): JSONSchemaProps {
  const props: Record<string, JSONSchemaProps> = {
    name: { type: 'string', pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$', maxLength: 63 },
    image: { type: 'string', minLength: 1 },
    imagePullPolicy: { type: 'string', enum: ['Always', 'IfNotPresent', 'Never'], default: 'IfNotPresent' },
    args: { type: 'array', items: { type: 'string' } },
    env: {
      type: 'array',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name'],
      items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, value: { type: 'string' } } },
    },
    ports: {
      type: 'array',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['containerPort', 'protocol'],
      items: {
        type: 'object',
        required: ['containerPort'],
        properties: {
          containerPort: { type: 'integer', format: 'int32', minimum: 1, maximum: 65535 },
          protocol: { type: 'string', enum: ['TCP', 'UDP', 'SCTP'], default: 'TCP' },
          name: { type: 'string' },
        },
      },
    },
    resources: {
      type: 'object',
      properties: {
        limits: { type: 'object', additionalProperties: { 'x-kubernetes-int-or-string': true, pattern: '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$' } },
        requests: { type: 'object', additionalProperties: { 'x-kubernetes-int-or-string': true } },
      },
    },
  };
  for (let i = 0; i < n; i++) {
    const kind = i % 5;
    props[`field${i}`] =
      kind === 0 ? { type: 'string', maxLength: 256 } : kind === 1 ? { type: 'integer', minimum: 0 } : kind === 2 ? { type: 'boolean' } : kind === 3 ? { type: 'string', enum: ['a', 'b', 'c'] } : { type: 'array', items: { type: 'string' } };
  }
  return { type: 'object', required: ['name'], properties: props };
}

function largeSchema(): JSONSchemaProps {
  const specProps: Record<string, JSONSchemaProps> = {
    replicas: { type: 'integer', minimum: 0, default: 1 },
    selector: { type: 'object', properties: { matchLabels: { type: 'object', additionalProperties: { type: 'string' } } } },
    containers: { type: 'array', items: containerSchema(60) },
    initContainers: { type: 'array', items: containerSchema(60) },
    volumes: { type: 'array', items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, configMap: { type: 'object', properties: { name: { type: 'string' }, items: { type: 'array', items: { type: 'object', properties: { key: { type: 'string' }, path: { type: 'string' } } } } } }, emptyDir: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } } },
    strategy: { type: 'object', properties: { type: { type: 'string', enum: ['Recreate', 'RollingUpdate'] }, maxSurge: { 'x-kubernetes-int-or-string': true }, maxUnavailable: { 'x-kubernetes-int-or-string': true } } },
    contact: { type: 'string', format: 'email' },
    since: { type: 'string', format: 'date-time' },
  };
  for (let i = 0; i < 150; i++) specProps[`option${i}`] = i % 3 === 0 ? { type: 'string' } : i % 3 === 1 ? { type: 'integer' } : { type: 'object', properties: { enabled: { type: 'boolean', default: false }, value: { type: 'string' } } };
  return {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: specProps,
        'x-kubernetes-validations': [{ rule: 'self.replicas <= 100', message: 'too many replicas' }, { rule: 'self.containers.all(c, c.name.size() > 0)' }],
      },
      status: { type: 'object', properties: { replicas: { type: 'integer' }, conditions: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'], items: { type: 'object', properties: { type: { type: 'string' }, status: { type: 'string' }, message: { type: 'string' } } } } } },
    },
  };
}

function container(i: number): Record<string, unknown> {
  const c: Record<string, unknown> = {
    name: `container-${i}`,
    image: `registry.example.com/app/component-${i}:1.${i}.0`,
    args: ['--port=8080', '--verbose'],
    env: Array.from({ length: 6 }, (_v, j) => ({ name: `ENV_${j}`, value: `value-${j}` })),
    ports: [{ containerPort: 8080 + i, name: 'http' }, { containerPort: 9090 + i, protocol: 'TCP' }],
    resources: { limits: { cpu: '500m', memory: '512Mi' }, requests: { cpu: '100m', memory: '128Mi' } },
  };
  for (let j = 0; j < 20; j++) c[`field${j}`] = j % 5 === 0 ? `text-${j}` : j % 5 === 1 ? j : j % 5 === 2 ? true : j % 5 === 3 ? 'b' : ['x', 'y'];
  return c;
}

function largeObject(): Record<string, unknown> {
  const spec: Record<string, unknown> = {
    replicas: 3,
    selector: { matchLabels: { app: 'big' } },
    containers: Array.from({ length: 8 }, (_v, i) => container(i)),
    initContainers: [container(100)],
    volumes: [{ name: 'config', configMap: { name: 'cfg', items: [{ key: 'a', path: 'a' }] } }, { name: 'scratch', emptyDir: {} }],
    strategy: { type: 'RollingUpdate', maxSurge: '25%', maxUnavailable: 1 },
    contact: 'ops@example.com',
    since: '2024-01-02T03:04:05Z',
  };
  for (let i = 0; i < 60; i++) spec[`option${i}`] = i % 3 === 0 ? `v${i}` : i % 3 === 1 ? i : { value: 'x' };
  return { apiVersion: 'example.com/v1', kind: 'Big', metadata: { name: 'big', namespace: 'default', labels: { app: 'big' } }, spec };
}

/** µs per call of fn: the best of several rounds, so that other load on the machine distorts less. */
function perOp(label: string, n: number, fn: (i: number) => void): number {
  for (let i = 0; i < Math.min(n, 200); i++) fn(i);
  const rounds = 5;
  const per = Math.max(1, Math.floor(n / rounds));
  let best = Infinity;
  for (let r = 0; r < rounds; r++) {
    const t0 = performance.now();
    for (let i = 0; i < per; i++) fn(r * per + i);
    best = Math.min(best, ((performance.now() - t0) * 1000) / per);
  }
  console.log(`${label.padEnd(58)} ${best.toFixed(1).padStart(9)} µs/op`);
  return best;
}

function run(name: string, schema: JSONSchemaProps, obj: Record<string, unknown>, opts: { kind: string; apiVersion: string }, n: number): void {
  const bytes = JSON.stringify(obj).length;
  let cs: CompiledSchema | undefined;
  perOp(`${name}: compile`, quick ? 3 : 20, () => {
    cs = compileSchema(jsonClone(schema), { ...opts, namespaced: true });
  });
  const c = cs as CompiledSchema;
  const copies = Array.from({ length: n + 200 }, () => jsonClone(obj));
  let k = 0;
  perOp(`${name} (${bytes} B): prune + default + validate`, n, () => {
    const o = copies[k++ % copies.length];
    c.admit(o);
    const errs = c.validate(o);
    if (errs.length) throw new Error(`unexpected errors: ${JSON.stringify(errs)}`);
  });
  const parts = Array.from({ length: n + 200 }, () => jsonClone(obj));
  k = 0;
  perOp(`${name}:   of which prune`, n, () => c.prune(parts[k++ % parts.length], { trackUnknownFields: true }));
  k = 0;
  perOp(`${name}:   of which default`, n, () => c.default(parts[k++ % parts.length]));
  k = 0;
  perOp(`${name}:   of which validate`, n, () => c.validate(parts[k++ % parts.length]));
  const reads = Array.from({ length: n + 200 }, () => jsonClone(obj));
  k = 0;
  perOp(`${name}: read from storage (prune + default)`, n, () => c.read(reads[k++ % reads.length]));
  const prepared = jsonClone(obj);
  c.admit(prepared);
  const old = jsonClone(prepared);
  (prepared.metadata as Record<string, unknown>).resourceVersion = '2';
  (old.metadata as Record<string, unknown>).resourceVersion = '1';
  perOp(`${name}: validateUpdate (ratcheting, unchanged spec)`, n, () => {
    c.validateUpdate(prepared, old);
  });
}

run('CronTab', CRONTAB, crontab, { kind: 'CronTab', apiVersion: 'stable.example.com/v1' }, quick ? 2000 : 50_000);
run('Large CRD', largeSchema(), largeObject(), { kind: 'Big', apiVersion: 'example.com/v1' }, quick ? 200 : 3000);
