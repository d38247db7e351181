import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrorString } from '../../src/machinery/field-errors.js';
import { compileSchema } from '../../src/schema/index.js';
import { findDuplicateFields } from '../../src/schema/duplicates.js';
import type { JSONSchemaProps } from '../../src/schema/types.js';

const obj = (rest: Record<string, unknown>, rv = '1') => ({ apiVersion: 'g/v1', kind: 'K', metadata: { name: 'x', resourceVersion: rv }, ...rest });
const strings = (errs: { field: string }[]) => errs.map((e) => fieldErrorString(e as never));

const listSchema = {
  type: 'object',
  properties: {
    'correct-map': { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['a', 'b'], items: { type: 'object', required: ['a', 'b'], properties: { a: { type: 'integer' }, b: { type: 'integer' }, c: { type: 'integer' } } } },
    'invalid-map': { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['a', 'b'], items: { type: 'object', required: ['a', 'b'], properties: { a: { type: 'integer' }, b: { type: 'integer' }, c: { type: 'integer' } } } },
    'correct-set': { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'integer' } },
    'invalid-set': { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'integer' } },
    single: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['k'], items: { type: 'object', properties: { k: { type: 'string' }, v: { type: 'string' } } } },
  },
} as JSONSchemaProps;

test('duplicates in set and map lists are rejected (L-01)', () => {
  const cs = compileSchema(listSchema);
  const o = obj({
    'correct-map': [{ a: 1, b: 1 }, { a: 1, b: 2 }],
    'invalid-map': [{ a: 1, b: 1, c: 1 }, { a: 1, b: 2 }, { a: 2, b: 1 }, { a: 1, b: 1, c: 2 }],
    'correct-set': [1, 2, 3],
    'invalid-set': [1, 2, 3, 4, 1, 1],
    single: [{ k: 'a' }, { k: 'a', v: 'x' }],
  });
  assert.deepEqual(strings(cs.validate(o)), ['invalid-map[3]: Duplicate value: {"a":1,"b":1}', 'invalid-set[4]: Duplicate value: 1', 'single[1]: Duplicate value: {"k":"a"}']);
});

test('an update introducing duplicates fails; one keeping old ones passes (L-02, L-03)', () => {
  const cs = compileSchema(listSchema);
  const good = obj({ 'correct-set': [1, 2] });
  const bad = obj({ 'correct-set': [1, 2, 1] });
  assert.deepEqual(strings(cs.validateUpdate(bad, good)), ['correct-set[2]: Duplicate value: 1']);
  const alsoBad = obj({ 'correct-set': [1, 2, 1, 3] });
  assert.deepEqual(strings(cs.validateUpdate(alsoBad, bad)), []);
});

test('ratcheting: unchanged invalid fields do not fail an update (V-17)', () => {
  const cs = compileSchema({
    type: 'object',
    properties: { spec: { type: 'object', properties: { a: { type: 'string', maxLength: 2 }, b: { type: 'integer', maximum: 5 }, m: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['k'], items: { type: 'object', properties: { k: { type: 'string' }, v: { type: 'string', enum: ['ok'] } } } } } } },
  } as JSONSchemaProps);
  const old = obj({ spec: { a: 'toolong', b: 1, m: [{ k: 'x', v: 'bad' }] } });
  const next = obj({ spec: { a: 'toolong', b: 9, m: [{ k: 'y', v: 'ok' }, { k: 'x', v: 'bad' }] } });
  assert.deepEqual(strings(cs.validateUpdate(next, old)), ['spec.b: Invalid value: 9: spec.b in body should be less than or equal to 5']);
  const changed = obj({ spec: { a: 'stilltoolong', b: 1, m: [{ k: 'x', v: 'worse' }] } });
  assert.deepEqual(strings(cs.validateUpdate(changed, old)), ['spec.a: Too long: may not be more than 2 bytes', 'spec.m[0].v: Unsupported value: "worse": supported values: "ok"']);
  assert.deepEqual(strings(cs.validate(next)), [
    'spec.a: Too long: may not be more than 2 bytes',
    'spec.b: Invalid value: 9: spec.b in body should be less than or equal to 5',
    'spec.m[1].v: Unsupported value: "bad": supported values: "ok"',
  ]);
});

test('status updates validate only status, relative to it', () => {
  const cs = compileSchema({ type: 'object', properties: { spec: { type: 'object', properties: { n: { type: 'integer', maximum: 1 } } }, status: { type: 'object', properties: { num: { type: 'integer', maximum: 10 } } } } } as JSONSchemaProps);
  const old = obj({ spec: { n: 5 }, status: { num: 1 } });
  const next = obj({ spec: { n: 5 }, status: { num: 15 } });
  assert.deepEqual(strings(cs.validateStatusUpdate(next, old)), ['status.num: Invalid value: 15: num in body should be less than or equal to 10']);
});

test('duplicate keys in a JSON body (FV-01)', () => {
  assert.deepEqual(findDuplicateFields('{"a":1,"spec":{"x":1,"x":2,"l":[{"y":1,"y":2}],"s":"\\"x\\""},"a":3}'), ['duplicate field "x"', 'duplicate field "y"', 'duplicate field "a"']);
  assert.deepEqual(findDuplicateFields('{"a":{"b":1},"c":{"b":2}}'), []);
});
