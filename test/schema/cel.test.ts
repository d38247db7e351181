import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrorString } from '../../src/machinery/field-errors.js';
import { compileSchema } from '../../src/schema/index.js';
import type { JSONSchemaProps } from '../../src/schema/types.js';

const obj = (rest: Record<string, unknown>) => ({ apiVersion: 'g/v1', kind: 'K', metadata: { name: 'x', resourceVersion: '1' }, ...rest });
const strings = (errs: unknown[]) => errs.map((e) => fieldErrorString(e as never));

const schema = {
  type: 'object',
  'x-kubernetes-validations': [{ rule: 'self.spec.x + self.spec.y >= 0' }],
  properties: {
    spec: {
      type: 'object',
      'x-kubernetes-validations': [
        { rule: 'self.x < 100', message: 'x too big' },
        { rule: 'self.y < 100', messageExpression: '"y is " + string(self.y)' },
        { rule: "!has(self.name) || self.name.matches('^[a-z]+$')", fieldPath: '.name', reason: 'FieldValueForbidden' },
        { rule: 'self.someImmutableThing == oldSelf.someImmutableThing' },
      ],
      properties: {
        x: { type: 'integer' },
        y: { type: 'integer' },
        name: { type: 'string' },
        someImmutableThing: { type: 'string' },
        tags: { type: 'array', items: { type: 'string' }, 'x-kubernetes-validations': [{ rule: 'self.all(t, t.size() <= 3)' }] },
        q: { type: 'string', 'x-kubernetes-validations': [{ rule: "quantity(self).isLessThan(quantity('1Gi'))" }] },
      },
    },
  },
} as JSONSchemaProps;

test('rule failures: messages, messageExpression, fieldPath, reason (CEL-01)', () => {
  const cs = compileSchema(schema);
  assert.deepEqual(strings(cs.validate(obj({ spec: { x: -1, y: 0 } }))), ['<nil>: Invalid value: failed rule: self.spec.x + self.spec.y >= 0']);
  assert.deepEqual(strings(cs.validate(obj({ spec: { x: 200, y: 150, name: 'ABC', tags: ['long'], q: '2Gi' } }))), [
    'spec: Invalid value: x too big',
    'spec: Invalid value: y is 150',
    "spec.name: Forbidden: failed rule: !has(self.name) || self.name.matches('^[a-z]+$')",
    'spec.tags: Invalid value: failed rule: self.all(t, t.size() <= 3)',
    `spec.q: Invalid value: "2Gi": failed rule: quantity(self).isLessThan(quantity('1Gi'))`,
  ]);
  assert.deepEqual(cs.validate(obj({ spec: { x: 1, y: 1, name: 'abc', tags: ['a'], q: '1Mi' } })), []);
});

test('transition rules run on update only (CEL-02)', () => {
  const cs = compileSchema(schema);
  const old = obj({ spec: { x: 1, y: 1, someImmutableThing: 'a' } });
  assert.deepEqual(cs.validate(obj({ spec: { x: 1, y: 1, someImmutableThing: 'b' } })), []);
  assert.deepEqual(strings(cs.validateUpdate(obj({ spec: { x: 1, y: 1, someImmutableThing: 'b' } }), old)), ['spec: Invalid value: failed rule: self.someImmutableThing == oldSelf.someImmutableThing']);
  assert.deepEqual(cs.validateUpdate(obj({ spec: { x: 1, y: 1, someImmutableThing: 'a' } }), old), []);
});

test('optionalOldSelf rules also run on create', () => {
  const cs = compileSchema({ type: 'object', properties: { a: { type: 'string', 'x-kubernetes-validations': [{ rule: 'oldSelf.hasValue() ? oldSelf.value() == self : self == "init"', optionalOldSelf: true, message: 'must start as init, then never change' }] } } } as JSONSchemaProps);
  assert.deepEqual(strings(cs.validate(obj({ a: 'other' }))), ['a: Invalid value: "other": must start as init, then never change']);
  assert.deepEqual(cs.validate(obj({ a: 'init' })), []);
  assert.deepEqual(strings(cs.validateUpdate(obj({ a: 'next' }), obj({ a: 'init' }))), ['a: Invalid value: "next": must start as init, then never change']);
});

test('blocking schema errors short-circuit CEL (V-16)', () => {
  const cs = compileSchema(schema);
  assert.deepEqual(strings(cs.validate(obj({ spec: { x: 'str', y: 1 } }))), [
    'spec.x: Invalid value: "string": spec.x in body must be of type integer: "string"',
    '<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
  ]);
});

test('runtime errors are reported with the rule', () => {
  const cs = compileSchema({ type: 'object', properties: { s: { type: 'object', properties: { a: { type: 'string' } }, 'x-kubernetes-validations': [{ rule: 'self.a == "x"' }] } } } as JSONSchemaProps);
  assert.deepEqual(strings(cs.validate(obj({ s: {} }))), ['s: Invalid value: "object": no such key: a evaluating rule: self.a == "x"']);
});

test('a hostile rule is stopped at the per-call cost limit', () => {
  const cs = compileSchema({ type: 'object', properties: { l: { type: 'array', items: { type: 'integer' }, 'x-kubernetes-validations': [{ rule: 'self.all(a, self.all(b, self.all(c, a + b + c >= 0)))' }] } } } as JSONSchemaProps);
  const start = Date.now();
  const errs = strings(cs.validate(obj({ l: Array.from({ length: 1000 }, (_v, i) => i) })));
  assert.ok(Date.now() - start < 5000);
  assert.deepEqual(errs, [
    `l: Invalid value: "array": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: self.all(a, self.all(b, self.all(c, a + b + c >= 0)))`,
  ]);
});

test('matches() runs on the linear-time engine', () => {
  const cs = compileSchema({ type: 'object', properties: { a: { type: 'string', 'x-kubernetes-validations': [{ rule: "self.matches('(a+)+$')", message: 'no' }] } } } as JSONSchemaProps);
  const start = Date.now();
  assert.deepEqual(strings(cs.validate(obj({ a: 'a'.repeat(50_000) + '!' }))).length, 1);
  assert.ok(Date.now() - start < 5000);
});

test('Kubernetes CEL library functions', () => {
  const rules = [
    "self.s.replace('a', 'b') == 'bbc'",
    "self.s.find('[bc]+') == 'bc'",
    "self.s.findAll('[a-z]') == ['a', 'b', 'c']",
    "url('https://example.com:8080/p?q=1').getHost() == 'example.com:8080'",
    "isURL('https://example.com') && !isURL('not a url')",
    "quantity('1Gi').isGreaterThan(quantity('1000Mi')) && quantity('500m').asApproximateFloat() == 0.5",
    // Below a nano unit a value rounds up to one, whatever its exponent (ParseQuantity's RoundUp).
    "quantity('1e-1001').compareTo(quantity('1n')) == 0 && quantity('-5e-2147483648').compareTo(quantity('-1n')) == 0",
    "ip('10.0.0.1').family() == 4 && cidr('10.0.0.0/8').containsIP(ip('10.1.2.3'))",
    '[1, 2, 3].isSorted() && [1, 2, 3].sum() == 6 && [3, 1].min() == 1 && [3, 1].max() == 3',
    'sets.contains([1, 2, 3], [1, 2]) && sets.intersects([1], [1, 5]) && sets.equivalent([1, 2], [2, 1])',
    'math.greatest(1, 5, 3) == 5 && math.least([4, 2]) == 2',
    "self.s.charAt(1) == 'b' && self.s.reverse() == 'cba' && self.s.upperAscii() == 'ABC'",
    "self.l.exists(x, x == 'b') && self.l.all(x, x.size() == 1) && self.l.map(x, x + x) == ['aa', 'bb']",
    "has(self.s) && !has(self.missing) && self.?missing.orValue('d') == 'd'",
    'self.when < timestamp("2030-01-01T00:00:00Z") && duration("1h") > duration("30m")',
  ];
  const cs = compileSchema({
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: { s: { type: 'string' }, missing: { type: 'string' }, l: { type: 'array', items: { type: 'string' } }, when: { type: 'string', format: 'date-time' } },
        'x-kubernetes-validations': rules.map((rule) => ({ rule })),
      },
    },
  } as JSONSchemaProps);
  assert.deepEqual(strings(cs.validate(obj({ spec: { s: 'abc', l: ['a', 'b'], when: '2024-05-01T00:00:00Z' } }))), []);
});

test('object equality compares values', () => {
  const cs = compileSchema({ type: 'object', properties: { spec: { type: 'object', properties: { o: { type: 'object', properties: { a: { type: 'integer' } } } }, 'x-kubernetes-validations': [{ rule: 'self.o == oldSelf.o', message: 'immutable' }] } } } as JSONSchemaProps);
  assert.deepEqual(cs.validateUpdate(obj({ spec: { o: { a: 1 } } }), obj({ spec: { o: { a: 1 } } })), []);
  assert.deepEqual(strings(cs.validateUpdate(obj({ spec: { o: { a: 2 } } }), obj({ spec: { o: { a: 1 } } }))), ['spec: Invalid value: immutable']);
});

test('list functions compare items nested deeper than the native JSON encoder goes', () => {
  const cs = compileSchema({
    type: 'object',
    properties: { l: { type: 'array', maxItems: 4, items: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }, 'x-kubernetes-validations': [{ rule: 'self.indexOf(self[1]) == 0', message: 'items differ' }] } },
  } as JSONSchemaProps);
  let deep: unknown = 1;
  for (let i = 0; i < 9000; i++) deep = { a: deep };
  assert.deepEqual(cs.validate(obj({ l: [deep, deep] })), []);
  const differ = strings(cs.validate(obj({ l: [deep, { a: 2 }] })));
  assert.equal(differ.length, 1);
  assert.match(differ[0], /^l: Invalid value: .*items differ$/);
});
