import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrorString } from '../../src/machinery/field-errors.js';
import { compileSchema } from '../../src/schema/index.js';
import type { JSONSchemaProps } from '../../src/schema/types.js';

const obj = (rest: Record<string, unknown>) => ({ apiVersion: 'g/v1', kind: 'K', metadata: { name: 'x' }, ...rest }) as Record<string, any>;

test('unknown fields are dropped, including unknown metadata (P-01)', () => {
  const cs = compileSchema({ type: 'object', properties: { alpha: { type: 'string' }, beta: { type: 'number' } } });
  const o = obj({ alpha: 'a', beta: 1, unspecified: 'bar', metadata: { name: 'x', unspecified: 'bar', labels: { foo: 'bar' } } });
  assert.deepEqual(cs.admit(o), { unknownFields: ['metadata.unspecified', 'unspecified'] });
  assert.deepEqual(o, { apiVersion: 'g/v1', kind: 'K', metadata: { name: 'x', labels: { foo: 'bar' } }, alpha: 'a', beta: 1 });
});

test('x-kubernetes-preserve-unknown-fields at any level (P-03)', () => {
  const nested = () => ({ pruning: { type: 'object', properties: {} }, preserving: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } });
  const cs = compileSchema({
    type: 'object',
    'x-kubernetes-preserve-unknown-fields': true,
    properties: { alpha: { type: 'string' }, pruning: { type: 'object', properties: nested() }, preserving: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: nested() } },
  } as JSONSchemaProps);
  const sub = () => ({ unspecified: 'bar', unspecifiedObject: { unspecified: 'bar' }, pruning: { unspecified: 'bar' }, preserving: { unspecified: 'bar' } });
  const o = obj({ unspecified: 'bar', alpha: 'a', pruning: sub(), preserving: sub() });
  const r = cs.admit(o);
  assert.deepEqual(r.unknownFields, ['preserving.pruning.unspecified', 'pruning.pruning.unspecified', 'pruning.unspecified', 'pruning.unspecifiedObject']);
  assert.deepEqual(o.pruning, { pruning: {}, preserving: { unspecified: 'bar' } });
  assert.deepEqual(o.preserving, { unspecified: 'bar', unspecifiedObject: { unspecified: 'bar' }, pruning: {}, preserving: { unspecified: 'bar' } });
  assert.equal(o.unspecified, 'bar');
});

test('nested unknown fields are reported with full paths (FV-01)', () => {
  const cs = compileSchema({ type: 'object', properties: { spec: { type: 'object', properties: { ports: { type: 'array', items: { type: 'object', properties: { hostPort: { type: 'integer' } } } } } } } });
  const o = obj({ spec: { unknown1: 1, ports: [{ hostPort: 1, unknownNested: 2 }] } });
  assert.deepEqual(cs.admit(o).unknownFields, ['spec.ports[0].unknownNested', 'spec.unknown1']);
});

test('embedded resources are pruned by their schema; their metadata always as ObjectMeta (P-04)', () => {
  const cs = compileSchema({
    type: 'object',
    properties: {
      embeddedPruning: { type: 'object', 'x-kubernetes-embedded-resource': true, properties: { specified: { type: 'string' } } },
      embeddedPreserving: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
    },
  } as JSONSchemaProps);
  const meta = () => ({ name: 'foo', unspecified: 'bar' });
  const o = obj({
    embeddedPruning: { apiVersion: 'foo/v1', kind: 'Foo', metadata: meta(), specified: 'bar', unspecified: 'bar' },
    embeddedPreserving: { apiVersion: 'foo/v1', kind: 'Foo', metadata: meta(), specified: 'bar', unspecified: 'bar' },
  });
  assert.deepEqual(cs.admit(o).unknownFields, ['embeddedPruning.unspecified', 'embeddedPreserving.metadata.unspecified', 'embeddedPruning.metadata.unspecified']);
  assert.deepEqual(o.embeddedPruning, { apiVersion: 'foo/v1', kind: 'Foo', metadata: { name: 'foo' }, specified: 'bar' });
  assert.deepEqual(o.embeddedPreserving, { apiVersion: 'foo/v1', kind: 'Foo', metadata: { name: 'foo' }, specified: 'bar', unspecified: 'bar' });
});

test('malformed embedded metadata is a decoding error; reads drop it (X-02)', () => {
  const cs = compileSchema({ type: 'object', properties: { embedded: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true } } } as JSONSchemaProps);
  const o = obj({ embedded: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a', namespace: 42 } } });
  assert.deepEqual(cs.admit(o), {
    unknownFields: [],
    error: 'embedded.metadata: Invalid value: {"name":"a","namespace":42}: json: cannot unmarshal number into Go struct field ObjectMeta.namespace of type string',
  });
  const stored = obj({ embedded: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a', namespace: 42 } } });
  cs.read(stored);
  assert.deepEqual(stored.embedded.metadata, { name: 'a' });
});

test('non-nullable nulls without default are removed from objects, not from arrays (P-05, X-03)', () => {
  const cs = compileSchema({
    type: 'object',
    properties: { a: { type: 'string' }, n: { type: 'string', nullable: true }, d: { type: 'string', default: 'D' }, l: { type: 'array', items: { type: 'string' } } },
  } as JSONSchemaProps);
  const o = obj({ a: null, n: null, d: null, l: ['x', null] });
  cs.admit(o);
  assert.deepEqual({ a: o.a, n: o.n, d: o.d, l: o.l }, { a: undefined, n: null, d: 'D', l: ['x', null] });
  assert.ok(!('a' in o));
  assert.deepEqual(cs.validate(o).map(fieldErrorString), ['l[1]: Invalid value: "null": l[1] in body must be of type string: "null"']);
});

test('defaults: recursive, in items and additionalProperties, zero values (DF-01, DF-07)', () => {
  const cs = compileSchema({
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        default: {},
        properties: {
          a: { type: 'string', default: 'A' },
          zero: { type: 'integer', default: 0 },
          empty: { type: 'array', items: { type: 'string' }, default: [] },
          flag: { type: 'boolean', default: false },
          items: { type: 'array', items: { type: 'object', properties: { x: { type: 'integer', default: 7 } } } },
          byName: { type: 'object', additionalProperties: { type: 'object', properties: { y: { type: 'string', default: 'Y' } } } },
        },
      },
    },
  } as JSONSchemaProps);
  const o = obj({});
  cs.admit(o);
  assert.deepEqual(o.spec, { a: 'A', zero: 0, empty: [], flag: false });
  const o2 = obj({ spec: { a: 'mine', items: [{}, { x: 1 }], byName: { k: {} } } });
  cs.admit(o2);
  assert.deepEqual(o2.spec, { a: 'mine', items: [{ x: 7 }, { x: 1 }], byName: { k: { y: 'Y' } }, zero: 0, empty: [], flag: false });
  const shared = o.spec.empty;
  const o3 = obj({});
  cs.admit(o3);
  assert.notEqual(o3.spec.empty, shared, 'defaults are deep copies');
});

test('defaults of embedded apiVersion, kind and metadata; unknown metadata pruned (DF-06)', () => {
  const cs = compileSchema({
    type: 'object',
    properties: {
      embedded: {
        type: 'object',
        'x-kubernetes-embedded-resource': true,
        properties: {
          apiVersion: { type: 'string', default: 'foos/v1' },
          kind: { type: 'string', default: 'Foo' },
          metadata: { type: 'object', default: { name: 'Bar', unknown: 'x' }, properties: { name: { type: 'string' } } },
        },
      },
    },
  } as JSONSchemaProps);
  const o = obj({ embedded: {} });
  cs.admit(o);
  assert.deepEqual(o.embedded, { apiVersion: 'foos/v1', kind: 'Foo', metadata: { name: 'Bar' } });
});

test('defaults that contain unknown fields are pruned when the schema is compiled', () => {
  const cs = compileSchema({ type: 'object', properties: { spec: { type: 'object', default: { keep: 1, drop: 2 }, properties: { keep: { type: 'integer' } } } } } as JSONSchemaProps);
  const o = obj({});
  cs.admit(o);
  assert.deepEqual(o.spec, { keep: 1 });
});

test('legacy preserveUnknownFields keeps unknown fields but still coerces metadata', () => {
  const cs = compileSchema({ type: 'object', properties: { a: { type: 'string' } } }, { preserveUnknownFields: true });
  const o = obj({ b: 1, metadata: { name: 'x', junk: 1 } });
  assert.deepEqual(cs.admit(o), { unknownFields: ['metadata.junk'] });
  assert.equal(o.b, 1);
});
