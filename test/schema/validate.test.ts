import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrorString } from '../../src/machinery/field-errors.js';
import { compileSchema } from '../../src/schema/index.js';
import type { JSONSchemaProps } from '../../src/schema/types.js';

const errors = (schema: unknown, obj: Record<string, unknown>): string[] =>
  compileSchema(schema as JSONSchemaProps)
    .validate({ apiVersion: 'g/v1', kind: 'K', metadata: { name: 'x' }, ...obj })
    .map(fieldErrorString);

const noxuValidation = {
  type: 'object',
  required: ['alpha', 'beta'],
  properties: { alpha: { type: 'string', pattern: '^[a-zA-Z0-9_]*$' }, beta: { type: 'number', minimum: 10 }, gamma: { type: 'string', enum: ['foo', 'bar', 'baz'] } },
};

test('pattern, minimum, enum and required (V-01..V-04)', () => {
  assert.deepEqual(errors(noxuValidation, { alpha: 'foo_123!', beta: 5, gamma: 'qux' }), [
    `alpha: Invalid value: "foo_123!": alpha in body should match '^[a-zA-Z0-9_]*$'`,
    'beta: Invalid value: 5: beta in body should be greater than or equal to 10',
    'gamma: Unsupported value: "qux": supported values: "foo", "bar", "baz"',
  ]);
  assert.deepEqual(errors(noxuValidation, {}), ['alpha: Required value', 'beta: Required value']);
  assert.deepEqual(errors(noxuValidation, { alpha: 'foo_123', beta: 10, gamma: 'bar' }), []);
});

test('maximum, exclusive bounds and multipleOf (V-05, V-08)', () => {
  const s = { type: 'object', properties: { spec: { type: 'object', properties: { replicas: { type: 'integer', maximum: 10 }, x: { type: 'integer', maximum: 10, exclusiveMaximum: true }, y: { type: 'number', minimum: 10, exclusiveMinimum: true }, m: { type: 'integer', multipleOf: 3 } } } } };
  assert.deepEqual(errors(s, { spec: { replicas: 15, x: 10, y: 10, m: 4 } }), [
    'spec.replicas: Invalid value: 15: spec.replicas in body should be less than or equal to 10',
    'spec.x: Invalid value: 10: spec.x in body should be less than 10',
    'spec.y: Invalid value: 10: spec.y in body should be greater than 10',
    'spec.m: Invalid value: 4: spec.m in body should be a multiple of 3',
  ]);
  assert.deepEqual(errors({ type: 'object', properties: { f: { type: 'number', maximum: 1000000 } } }, { f: 1500000.5 }), ['f: Invalid value: 1500000.5: f in body should be less than or equal to 1e+06']);
});

test('type errors name the JSON type (V-06)', () => {
  const s = { type: 'object', properties: { spec: { type: 'object', properties: { replicas: { type: 'integer' }, l: { type: 'array', items: { type: 'string' } }, ios: { 'x-kubernetes-int-or-string': true } } } } };
  assert.deepEqual(errors(s, { spec: { replicas: 'string', l: [null, 1], ios: true } }), [
    'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"',
    'spec.l[0]: Invalid value: "null": spec.l[0] in body must be of type string: "null"',
    'spec.l[1]: Invalid value: "integer": spec.l[1] in body must be of type string: "integer"',
    'spec.ios: Invalid value: "boolean": spec.ios in body must be of type integer,string: "boolean"',
  ]);
  assert.deepEqual(errors(s, { spec: { replicas: 3, ios: 'x' } }), []);
  assert.deepEqual(errors({ type: 'object', properties: { o: { type: 'object' } } }, { o: [] }), ['o: Invalid value: "array": o in body must be of type object: "array"']);
  // A float where an integer is expected also fails kube-openapi's range check, reported at the nil path.
  assert.deepEqual(errors({ type: 'object', properties: { i: { type: 'integer' } } }, { i: 1.5 }), [
    'i: Invalid value: "number": i in body must be of type integer: "number"',
    '<nil>: Invalid value: "": Checked value must be of type integer (default format) in i',
  ]);
});

test('string, array and object sizes (V-07, V-08) in the newest texts', () => {
  const s = {
    type: 'object',
    properties: {
      s: { type: 'string', maxLength: 5 },
      one: { type: 'string', maxLength: 1 },
      short: { type: 'string', minLength: 2 },
      l: { type: 'array', items: { type: 'integer' }, maxItems: 3 },
      few: { type: 'array', items: { type: 'integer' }, minItems: 1 },
      o: { type: 'object', additionalProperties: { type: 'integer' }, maxProperties: 1 },
      p: { type: 'object', additionalProperties: { type: 'integer' }, minProperties: 2 },
    },
  };
  assert.deepEqual(errors(s, { s: 'abcdef', one: 'ab', short: 'a', l: [1, 2, 3, 4, 5], few: [], o: { a: 1, b: 2 }, p: { a: 1 } }), [
    's: Too long: may not be more than 5 bytes',
    'one: Too long: may not be more than 1 byte',
    'short: Invalid value: "a": short in body should be at least 2 chars long',
    'l: Too many: 5: must have at most 3 items',
    'few: Invalid value: 0: few in body should have at least 1 items',
    'o: Too many: 2: must have at most 1 item',
    'p: Invalid value: 1: p in body should have at least 2 properties',
  ]);
  assert.deepEqual(errors(s, { s: 'ééééé' }), [], 'lengths count characters');
});

test('formats upstream enforces (V-09); others are ignored', () => {
  const s = {
    type: 'object',
    properties: {
      e: { type: 'string', format: 'email' },
      d: { type: 'string', format: 'date' },
      t: { type: 'string', format: 'date-time' },
      u: { type: 'string', format: 'uuid' },
      i: { type: 'string', format: 'ipv4' },
      b: { type: 'string', format: 'byte' },
      n: { type: 'string', format: 'k8s-short-name' },
      x: { type: 'string', format: 'whatever' },
      q: { type: 'integer', format: 'int32' },
    },
  };
  assert.deepEqual(errors(s, { e: 'bad', d: '2021-02-30', t: '2021-01-01', u: 'nope', i: '1.2.3', b: 'abc', n: 'Bad_Name', x: '!', q: 3 }), [
    'e: Invalid value: "bad": e in body must be of type email: "bad"',
    'd: Invalid value: "2021-02-30": d in body must be of type date: "2021-02-30"',
    't: Invalid value: "2021-01-01": t in body must be of type date-time: "2021-01-01"',
    'u: Invalid value: "nope": u in body must be of type uuid: "nope"',
    'i: Invalid value: "1.2.3": i in body must be of type ipv4: "1.2.3"',
    'b: Invalid value: "abc": b in body must be of type byte: "abc"',
    'n: Invalid value: "Bad_Name": n in body must be of type k8s-short-name: "Bad_Name"',
  ]);
  assert.deepEqual(
    errors(s, { e: 'Jane <jane@example.com>', d: '2020-02-29', t: '2021-01-01T10:00:00Z', u: '123e4567-e89b-12d3-a456-426614174000', i: '010.0.0.1', b: 'YWJj', n: 'ok-name' }),
    [],
  );
});

test('nullable and null values', () => {
  const s = { type: 'object', properties: { n: { type: 'string', nullable: true }, m: { type: 'string' }, e: { type: 'string', nullable: true, enum: ['a'] } } };
  assert.deepEqual(errors(s, { n: null }), []);
  assert.deepEqual(errors(s, { m: null }), ['m: Invalid value: "null": m in body must be of type string: "null"']);
  assert.deepEqual(errors(s, { e: null }), ['e: Unsupported value: null: supported values: "a"']);
});

test('allOf, anyOf, oneOf and not report at the nil path (V-10)', () => {
  const s = { type: 'object', properties: { x: { type: 'string', anyOf: [{ maxLength: 2 }, { pattern: '^a' }], not: { pattern: 'z' } }, o: { type: 'integer', oneOf: [{ minimum: 1 }, { minimum: 2 }], allOf: [{ maximum: 0 }] } } };
  assert.deepEqual(errors(s, { x: 'zzzzzz', o: 3 }), [
    '<nil>: Invalid value: "": "x" must validate at least one schema (anyOf)',
    'x: Too long: may not be more than 2 bytes',
    '<nil>: Invalid value: "": "x" must not validate the schema (not)',
    '<nil>: Invalid value: "": "o" must validate one and only one schema (oneOf). Found 2 valid alternatives',
    'o: Invalid value: 3: o in body should be less than or equal to 0',
    '<nil>: Invalid value: "": "o" must validate all the schemas (allOf). None validated',
  ]);
  assert.deepEqual(errors(s, { x: 'ab', o: 0 }), [
    '<nil>: Invalid value: "": "o" must validate one and only one schema (oneOf). Found none valid',
    'o: Invalid value: 0: o in body should be greater than or equal to 1',
  ]);
});

test('additionalProperties as a schema, and false', () => {
  const s = { type: 'object', properties: { m: { type: 'object', additionalProperties: { type: 'string', maxLength: 1 } }, f: { type: 'object', additionalProperties: false } } };
  assert.deepEqual(errors(s, { m: { a: 'b', c: 'dd' }, f: { x: 1 } }), ['m.c: Too long: may not be more than 1 byte', 'f: Invalid value: "x": f.x in body is a forbidden property']);
});

test('metadata of the custom resource is validated', () => {
  const cs = compileSchema({ type: 'object' }, { namespaced: true });
  const errs = cs.validate({ apiVersion: 'g/v1', kind: 'K', metadata: { name: 'Bad_Name', namespace: 'ns', labels: { 'a b': 'c' } } }).map(fieldErrorString);
  assert.ok(errs[0].startsWith('metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain'), errs[0]);
  assert.ok(errs.some((e) => e.startsWith('metadata.labels: Invalid value: "a b"')));
  const cs2 = compileSchema({ type: 'object' }, { kind: 'K', apiVersion: 'g/v1' });
  assert.deepEqual(cs2.validate({ apiVersion: 'g/v2', kind: 'X', metadata: { name: 'a' } }).map(fieldErrorString), [
    'kind: Invalid value: "X": must be K',
    'apiVersion: Invalid value: "g/v2": must be g/v1',
  ]);
});

test('scale subresource paths are checked', () => {
  const cs = compileSchema({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true }, { scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' } });
  const errs = cs.validate({ apiVersion: 'g/v1', kind: 'K', metadata: { name: 'a' }, spec: { replicas: -1 }, status: { replicas: 'x', selector: 5 } }).map(fieldErrorString);
  assert.deepEqual(errs, [
    '.spec.replicas: Invalid value: -1: should be a non-negative integer',
    '.status.replicas: Invalid value: 0: .status.replicas accessor error: x is of the type string, expected int64',
    '.status.selector: Invalid value: "": .status.selector accessor error: 5 is of the type int64, expected string',
  ]);
});

test('objects whose validation would not end are cut off', () => {
  const schema = { type: 'object', properties: { l: { type: 'array', items: { type: 'object', anyOf: [{ required: ['a'] }, { required: ['b'] }, { required: ['c'] }] } } } };
  const start = Date.now();
  const errs = compileSchema(schema as JSONSchemaProps, { validationBudget: 20_000 }).validate({ apiVersion: 'g/v1', kind: 'K', metadata: { name: 'a' }, l: Array.from({ length: 10_000 }, () => ({})) });
  assert.ok(Date.now() - start < 5000);
  assert.equal(fieldErrorString(errs[errs.length - 1]), '<nil>: Invalid value: "": validation failed due to running out of cost budget, no further validation rules will be run');
});
