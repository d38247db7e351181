/**
 * OpenAPI publishing benchmark: 1,000 CronTab-like CRDs (a spec of ~20
 * properties, status and scale subresources) plus the built-ins, then the time
 * to publish after one CRD change (setCrd and the next /openapi/v2 JSON and
 * protobuf responses, and the v3 discovery), and the size and time of serving
 * /openapi/v2 (cold and cached). Prints one line per figure.
 *
 *   node --expose-gc dist/bench/openapi.js [--crds N]
 */
import { performance } from 'node:perf_hooks';
import type { CustomResourceDefinitionV1 } from '../src/api/apiextensions.js';
import { OpenApiPublisher, type BuiltinResource } from '../src/openapi/index.js';

const arg = process.argv.indexOf('--crds');
const N = arg > 0 ? Number(process.argv[arg + 1]) : 1000;
const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

const BUILTINS: BuiltinResource[] = [
  ['', 'Namespace', 'namespaces', false],
  ['', 'ConfigMap', 'configmaps', true],
  ['', 'Secret', 'secrets', true],
  ['', 'ServiceAccount', 'serviceaccounts', true],
  ['', 'Event', 'events', true],
  ['', 'Service', 'services', true],
  ['', 'Endpoints', 'endpoints', true],
  ['', 'Pod', 'pods', true],
  ['', 'Node', 'nodes', false],
  ['', 'ReplicationController', 'replicationcontrollers', true],
  ['', 'PodTemplate', 'podtemplates', true],
  ['', 'LimitRange', 'limitranges', true],
  ['', 'ResourceQuota', 'resourcequotas', true],
  ['apps', 'Deployment', 'deployments', true],
  ['apps', 'ReplicaSet', 'replicasets', true],
  ['apps', 'StatefulSet', 'statefulsets', true],
  ['apps', 'DaemonSet', 'daemonsets', true],
  ['coordination.k8s.io', 'Lease', 'leases', true],
  ['events.k8s.io', 'Event', 'events', true],
  ['apiextensions.k8s.io', 'CustomResourceDefinition', 'customresourcedefinitions', false],
].map(([group, kind, resource, namespaced]) => ({
  group: group as string,
  version: 'v1',
  kind: kind as string,
  resource: resource as string,
  namespaced: namespaced as boolean,
  verbs: VERBS,
  subresources: ['status'],
}));

function crd(i: number, revision = 0): CustomResourceDefinitionV1 {
  const props: Record<string, object> = {
    cronSpec: { type: 'string', description: 'The cron spec defining the interval a CronJob is run', pattern: '^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$' },
    image: { type: 'string', description: 'The image to run.' },
    replicas: { type: 'integer', minimum: 0, default: 1 },
    suspend: { type: 'boolean' },
    labels: { type: 'object', additionalProperties: { type: 'string' } },
    ports: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' }, port: { type: 'integer', format: 'int32' } }, required: ['port'] } },
    template: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
  };
  for (let f = 0; f < 13 + revision; f++) props[`field${f}`] = { type: f % 3 ? 'string' : 'integer', description: `Field ${f} of the CronTab spec, revision ${revision}.` };
  const group = `group${i}.example.com`;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `crontabs.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: 'crontabs', singular: 'crontab', kind: 'CronTab', listKind: 'CronTabList' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } },
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: { type: 'object', properties: props },
                status: { type: 'object', properties: { replicas: { type: 'integer' }, lastScheduleTime: { type: 'string', format: 'date-time' } } },
              },
            },
          },
        },
      ],
    },
    status: { conditions: [{ type: 'Established', status: 'True' }] },
  };
}

const ms = (t: number) => `${t.toFixed(1)} ms`;
const mb = (n: number) => `${(n / 1024 / 1024).toFixed(2)} MiB`;

function time<T>(f: () => T): [T, number] {
  const t0 = performance.now();
  const v = f();
  return [v, performance.now() - t0];
}

const PROTO = { accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf' };
const JSON_ACCEPT = { accept: 'application/json' };

const p = new OpenApiPublisher();
const [, tRegister] = time(() => {
  p.setBuiltins(BUILTINS);
  for (let i = 0; i < N; i++) p.setCrd(crd(i));
});
const [json, tJsonCold] = time(() => p.handle('/openapi/v2', JSON_ACCEPT)!);
const [proto, tProtoCold] = time(() => p.handle('/openapi/v2', PROTO)!);
const [, tJsonCached] = time(() => p.handle('/openapi/v2', JSON_ACCEPT)!);
const [, tNotModified] = time(() => p.handle('/openapi/v2', { ...JSON_ACCEPT, 'if-none-match': json.headers.ETag })!);
const [, tV3Cold] = time(() => p.handle('/openapi/v3', {})!);

// One CRD changes: its fragment is rebuilt, the documents re-assembled from cached pieces.
const changes: { json: number; proto: number; v3: number; set: number }[] = [];
for (let k = 1; k <= 11; k++) {
  const [, set] = time(() => p.setCrd(crd(k * 37, k)));
  const [, j] = time(() => p.handle('/openapi/v2', JSON_ACCEPT)!);
  const [, pb] = time(() => p.handle('/openapi/v2', PROTO)!);
  const [, v3] = time(() => {
    p.handle('/openapi/v3', {});
    p.handle(`/openapi/v3/apis/group${k * 37}.example.com/v1`, {});
  });
  changes.push({ set, json: j, proto: pb, v3 });
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const [gz, tGzip] = time(() => p.handle('/openapi/v2', { ...JSON_ACCEPT, 'accept-encoding': 'gzip' })!);
const [pgz] = time(() => p.handle('/openapi/v2', { ...PROTO, 'accept-encoding': 'gzip' })!);

console.log(`openapi: ${N} CRDs + ${BUILTINS.length} built-ins registered in ${ms(tRegister)} (fragments built lazily)`);
console.log(`openapi: /openapi/v2 JSON ${mb(json.body!.length)} (gzip ${mb(gz.body!.length)}), protobuf ${mb(proto.body!.length)} (gzip ${mb(pgz.body!.length)})`);
console.log(`openapi: first serve: JSON ${ms(tJsonCold)} (builds every fragment), protobuf ${ms(tProtoCold)}, v3 discovery ${ms(tV3Cold)}`);
console.log(`openapi: cached serve: JSON ${ms(tJsonCached)}, If-None-Match 304 ${ms(tNotModified)}, first gzip ${ms(tGzip)}`);
console.log(
  `openapi: after one CRD change (median of ${changes.length}): setCrd ${ms(median(changes.map((c) => c.set)))}, ` +
    `/openapi/v2 JSON ${ms(median(changes.map((c) => c.json)))}, protobuf ${ms(median(changes.map((c) => c.proto)))}, ` +
    `v3 discovery + group-version ${ms(median(changes.map((c) => c.v3)))}`,
);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc) {
  gc();
  const mem = process.memoryUsage();
  console.log(`openapi: retained after a full GC: heap ${mb(mem.heapUsed)}, buffers ${mb(mem.arrayBuffers)}, rss ${mb(mem.rss)}`);
} else console.log('openapi: (run with node --expose-gc for retained memory)');
console.log(
  `openapi: publish latency after one change (setCrd + JSON + protobuf): ${ms(median(changes.map((c) => c.set + c.json + c.proto)))}; fragments rebuilt per change: 1 per form served (total builds ${p.fragmentBuilds})`,
);
