/**
 * The protobuf codec: bytes as gogo-protobuf writes Kubernetes' structs (non-pointer fields always
 * present, pointers and slices when set, maps in key order), and JSON as encoding/json writes the
 * decoded struct. (Upstream's round-trip fixtures of every type are checked with
 * scripts/check-protobuf-fixtures.mjs.)
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeStruct, encodeStruct, formatGoDuration, structOfKind } from '../../src/machinery/protobuf/codec.js';
import { decodeEnvelope, encodeEnvelope } from '../../src/machinery/protobuf/envelope.js';
import { ProtobufError } from '../../src/machinery/protobuf/wire.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

test('encodes a ConfigMap as gogo-protobuf does', () => {
  const bytes = encodeStruct('core/v1.ConfigMap', { metadata: { name: 'a' }, data: { k: 'v' } });
  // metadata (1): name "a", then ObjectMeta's other non-pointer fields at their zero values
  // (generateName 2 ... resourceVersion 6 empty, generation 7 = 0, creationTimestamp 8 an empty message);
  // data (2): one entry {key 1: "k", value 2: "v"}.
  assert.equal(hex(bytes), '0a11' + '0a0161' + '1200' + '1a00' + '2200' + '2a00' + '3200' + '3800' + '4200' + '1206' + '0a016b' + '120176');
  assert.deepEqual(decodeStruct('core/v1.ConfigMap', bytes), { metadata: { name: 'a' }, data: { k: 'v' } });
});

test('decodes into the JSON encoding/json writes: pointers kept at zero, structs never omitted', () => {
  const bytes = encodeStruct('apps/v1.Deployment', { metadata: { name: 'd' }, spec: { replicas: 0, selector: { matchLabels: { a: 'b' } } } });
  const back = decodeStruct('apps/v1.Deployment', bytes);
  assert.equal(back.spec && (back.spec as any).replicas, 0, 'a pointer set to 0 stays');
  assert.deepEqual((back.spec as any).template, { metadata: {}, spec: { containers: null } }, 'containers has no omitempty: nil is null');
  assert.deepEqual(back.status, {}, 'a non-pointer struct is written even when empty');
  assert.deepEqual((back.spec as any).strategy, {});
});

test('carries the special types', () => {
  const pod = {
    metadata: { name: 'p', creationTimestamp: '2026-11-25T10:00:00Z', deletionTimestamp: '2026-11-25T10:00:05Z' },
    spec: {
      containers: [
        {
          name: 'c',
          resources: { limits: { cpu: '500m', memory: '1Gi' } },
          ports: [{ containerPort: 80 }],
          livenessProbe: { httpGet: { port: 'http', path: '/' } },
          readinessProbe: { tcpSocket: { port: 8080 } },
        },
      ],
      activeDeadlineSeconds: 9007199254740993n,
      securityContext: { runAsUser: -1 },
    },
  };
  const back = decodeStruct('core/v1.Pod', encodeStruct('core/v1.Pod', pod)) as any;
  assert.equal(back.metadata.creationTimestamp, '2026-11-25T10:00:00Z');
  assert.equal(back.metadata.deletionTimestamp, '2026-11-25T10:00:05Z');
  const c = back.spec.containers[0];
  assert.deepEqual(c.resources.limits, { cpu: '500m', memory: '1Gi' });
  assert.equal(c.livenessProbe.httpGet.port, 'http');
  assert.equal(c.readinessProbe.tcpSocket.port, 8080);
  assert.equal(back.spec.activeDeadlineSeconds, 9007199254740993n, 'int64 beyond 2^53');
  assert.equal(back.spec.securityContext.runAsUser, -1, 'a negative varint');
  const event = { metadata: { name: 'e' }, eventTime: '2026-11-25T10:00:00.123456Z', series: { count: 2, lastObservedTime: '2026-11-25T10:00:01.000001Z' } };
  const ev = decodeStruct('events/v1.Event', encodeStruct('events/v1.Event', event)) as any;
  assert.equal(ev.eventTime, '2026-11-25T10:00:00.123456Z');
  assert.equal(ev.series.lastObservedTime, '2026-11-25T10:00:01.000001Z');
  const secret = decodeStruct('core/v1.Secret', encodeStruct('core/v1.Secret', { metadata: { name: 's' }, data: { k: Buffer.from([0, 255]).toString('base64') } })) as any;
  assert.equal(secret.data.k, 'AP8=');
  const lease = decodeStruct('coordination/v1.Lease', encodeStruct('coordination/v1.Lease', { metadata: { name: 'l' }, spec: { leaseDurationSeconds: 15, holderIdentity: 'me' } })) as any;
  assert.deepEqual(lease.spec, { holderIdentity: 'me', leaseDurationSeconds: 15 });
});

test('formats durations as Go does', () => {
  assert.equal(formatGoDuration(0), '0s');
  assert.equal(formatGoDuration(1.5e9), '1.5s');
  assert.equal(formatGoDuration(3723e9), '1h2m3s');
  assert.equal(formatGoDuration(60e9), '1m0s');
  assert.equal(formatGoDuration(1.5e6), '1.5ms');
  assert.equal(formatGoDuration(-2e3), '-2µs');
});

test('wraps messages in the k8s envelope', () => {
  const raw = encodeStruct('core/v1.Namespace', { metadata: { name: 'n' } });
  const env = encodeEnvelope('v1', 'Namespace', raw);
  assert.equal(hex(env.subarray(0, 4)), '6b387300');
  const back = decodeEnvelope(env);
  assert.equal(back.apiVersion, 'v1');
  assert.equal(back.kind, 'Namespace');
  assert.deepEqual(Buffer.from(back.raw), Buffer.from(raw));
  assert.throws(() => decodeEnvelope(Buffer.from('{"kind":"x"}')), /expected prefix \[107 56 115 0\]/);
  assert.equal(structOfKind('apps', 'v1', 'DeploymentList'), 'apps/v1.DeploymentList');
  assert.equal(structOfKind('stable.example.com', 'v1', 'CronTab'), undefined);
});

test('refuses malformed bytes and values that do not fit', () => {
  for (const bad of [[0x0a, 0x05, 0x01], [0x0f], [0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]]) {
    assert.throws(() => decodeStruct('core/v1.ConfigMap', Uint8Array.from(bad)), ProtobufError, JSON.stringify(bad));
  }
  assert.throws(() => encodeStruct('apps/v1.Deployment', { spec: { replicas: 'three' } }), /spec\.replicas: a string cannot be encoded as integer/);
});

test('carries CRD schemas: the JSON forms of JSONSchemaPropsOrArray, OrBool and OrStringArray, and raw JSON values', () => {
  const schema = {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        required: ['list'],
        properties: {
          list: { type: 'array', items: { type: 'string', enum: ['a', 'b'] }, default: ['a'] },
          tuple: { type: 'array', items: [{ type: 'string' }, { type: 'integer' }] },
          open: { type: 'object', additionalProperties: true },
          closed: { type: 'object', additionalProperties: false },
          typed: { type: 'object', additionalProperties: { type: 'integer', minimum: 1 } },
          port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
          ratio: { type: 'number', maximum: 1.5, example: 0.5 },
        },
        dependencies: { list: ['tuple'], open: { required: ['closed'] } },
        'x-kubernetes-validations': [{ rule: 'self.list.size() > 0', message: 'needs one' }],
      },
    },
  };
  const crd = {
    metadata: { name: 'things.example.com' },
    spec: { group: 'example.com', names: { plural: 'things', kind: 'Thing' }, scope: 'Namespaced', versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema } }] },
  };
  const back = decodeStruct('apiextensions/v1.CustomResourceDefinition', encodeStruct('apiextensions/v1.CustomResourceDefinition', crd)) as any;
  assert.deepEqual(back.spec.versions[0].schema.openAPIV3Schema, schema);
  assert.throws(() => encodeStruct('apiextensions/v1.JSONSchemaProps', { additionalProperties: 'yes' }), /additionalProperties: a string cannot be encoded as boolean or object/);
});
