import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrorString } from '../../src/machinery/field-errors.js';
import { hasUnprunedDefaults, isNonStructural, validateStructuralSchema } from '../../src/schema/crd-hook.js';
import type { JSONSchemaProps } from '../../src/schema/types.js';

const P = 'spec.validation.openAPIV3Schema';
const check = (schema: unknown, ctx = { hasOtherErrors: false, requirePrunedDefaults: true }): string[] =>
  validateStructuralSchema(schema as JSONSchemaProps, P, ctx).map(fieldErrorString);

test('structural violations (C-01) with upstream texts, sorted', () => {
  assert.deepEqual(check({ properties: { foo: { pattern: 'abc' } } }), [
    `${P}.properties[foo].type: Required value: must not be empty for specified object fields`,
    `${P}.type: Required value: must not be empty at the root`,
  ]);
  assert.deepEqual(check({ type: 'integer' }), [`${P}.type: Invalid value: "integer": must be object at the root`]);
  assert.deepEqual(check({ type: 'object', properties: { slice: { type: 'array' }, list: { type: 'array', items: {} } } }), [
    `${P}.properties[list].items.type: Required value: must not be empty for specified array items`,
    `${P}.properties[slice].items: Required value: must be specified`,
  ]);
  assert.deepEqual(check({ type: 'object', additionalProperties: { type: 'string' } }), [`${P}.additionalProperties: Forbidden: must not be used at the root`]);
});

test('junctors may only hold value validations (C-01)', () => {
  const errs = check({
    type: 'object',
    properties: { a: { type: 'string' } },
    anyOf: [{ items: { type: 'string' }, description: 'd', nullable: true, default: 'x', title: 't', 'x-kubernetes-list-type': 'set', properties: { a: { type: 'string' } } }],
  });
  assert.deepEqual(errs, [
    `${P}.anyOf[0].default: Forbidden: must be undefined to be structural`,
    `${P}.anyOf[0].description: Forbidden: must be empty to be structural`,
    `${P}.anyOf[0].items.type: Forbidden: must be empty to be structural`,
    `${P}.anyOf[0].nullable: Forbidden: must be false to be structural`,
    `${P}.anyOf[0].properties[a].type: Forbidden: must be empty to be structural`,
    `${P}.anyOf[0].title: Forbidden: must be empty to be structural`,
    `${P}.anyOf[0].x-kubernetes-list-type: Forbidden: must be undefined to be structural`,
    `${P}.items: Required value: because it is defined in ${P}.anyOf[0].items`,
  ]);
  assert.deepEqual(check({ type: 'object', not: { properties: { a: { minimum: 1 } } } }), [`${P}.properties[a]: Required value: because it is defined in ${P}.not.properties[a]`]);
  assert.deepEqual(check({ type: 'object', properties: { a: { type: 'object' } }, anyOf: [{ properties: { a: { properties: { metadata: {} } } } }] }), [
    `${P}.anyOf[0].properties[a].properties[metadata]: Forbidden: must not be specified in a nested context`,
    `${P}.properties[a].properties[metadata]: Required value: because it is defined in ${P}.anyOf[0].properties[a].properties[metadata]`,
  ]);
});

test('int-or-string patterns are structural, other typed anyOf branches are not', () => {
  assert.deepEqual(check({ type: 'object', properties: { p: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] } } }), []);
  assert.deepEqual(check({ type: 'object', properties: { p: { 'x-kubernetes-int-or-string': true, allOf: [{ anyOf: [{ type: 'integer' }, { type: 'string' }] }, { pattern: 'a' }] } } }), []);
  assert.deepEqual(check({ type: 'object', properties: { p: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'string' }, { type: 'integer' }] } } }), [
    `${P}.properties[p].anyOf[0].type: Forbidden: must be empty to be structural`,
    `${P}.properties[p].anyOf[1].type: Forbidden: must be empty to be structural`,
  ]);
  assert.deepEqual(check({ type: 'object', properties: { p: { 'x-kubernetes-int-or-string': true, 'x-kubernetes-preserve-unknown-fields': true } } }), [
    `${P}.properties[p].x-kubernetes-preserve-unknown-fields: Invalid value: true: must be false if x-kubernetes-int-or-string is true`,
  ]);
});

test('metadata may only restrict name and generateName (C-03)', () => {
  assert.deepEqual(check({ type: 'object', properties: { metadata: { type: 'object', properties: { name: { type: 'string', pattern: '^a' }, generateName: { type: 'string' } } } } }), []);
  assert.deepEqual(check({ type: 'object', properties: { metadata: { type: 'object', properties: { labels: { type: 'object' } } } } }), [
    `${P}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified`,
  ]);
  assert.deepEqual(check({ type: 'object', properties: { metadata: { type: 'string' } } }), [`${P}.properties[metadata].type: Invalid value: "string": must be object`]);
  assert.deepEqual(check({ type: 'object', properties: { metadata: { type: 'object', description: 'd' } } }), [
    `${P}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified`,
  ]);
});

test('embedded resources', () => {
  assert.deepEqual(check({ type: 'object', properties: { e: { type: 'array', items: { type: 'string' }, 'x-kubernetes-embedded-resource': true } } }), [
    `${P}.properties[e].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields`,
    `${P}.properties[e].type: Invalid value: "array": must be object if x-kubernetes-embedded-resource is true`,
  ]);
  assert.deepEqual(check({ type: 'object', properties: { e: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true, properties: { kind: { type: 'integer' } } } } }), [
    `${P}.properties[e].properties[kind].type: Invalid value: "integer": must be string`,
  ]);
});

test('invalid patterns are rejected with Go regexp errors (B-07)', () => {
  assert.deepEqual(check({ type: 'object', properties: { foo: { type: 'string', pattern: '+' } } }), [
    `${P}.properties[foo].pattern: Invalid value: "+": must be a valid regular expression, but isn't: error parsing regexp: missing argument to repetition operator: \`+\``,
  ]);
});

test('NewStructural errors are shown only when nothing else failed', () => {
  assert.deepEqual(check({ type: 'object', $ref: '#/x' }), [`${P}: Invalid value: "": OpenAPIV3Schema '$ref' is not supported`]);
  assert.deepEqual(check({ type: 'object', items: [{ type: 'string' }] }), [`${P}: Invalid value: "": OpenAPIV3Schema 'items' must be a schema, but is an array`]);
  assert.deepEqual(check({ type: 'object', $ref: '#/x' }, { hasOtherErrors: true, requirePrunedDefaults: true }), []);
});

test('defaults must validate, be pruned and be valid metadata (B-12)', () => {
  assert.deepEqual(check({ type: 'object', properties: { spec: { type: 'object', default: { a: 1, b: 2 }, properties: { a: { type: 'integer' } } } } }), [
    `${P}.properties[spec].default: Invalid value: {"a":1,"b":2}: must not have unknown fields`,
  ]);
  assert.deepEqual(check({ type: 'object', properties: { spec: { type: 'object', default: { a: 1, b: 2 }, properties: { a: { type: 'integer' } } } } }, { hasOtherErrors: false, requirePrunedDefaults: false }), []);
  assert.deepEqual(check({ type: 'object', properties: { r: { type: 'integer', maximum: 10, default: 15 } } }), [
    // the validator runs with an empty root path, hence " in body"
    `${P}.properties[r].default: Invalid value: 15:  in body should be less than or equal to 10`,
  ]);
  assert.deepEqual(check({ type: 'object', properties: { s: { type: 'string', default: 5 } } }), [
    `${P}.properties[s].default: Invalid value: "integer":  in body must be of type string: "integer"`,
  ]);
  assert.deepEqual(
    check({ type: 'object', properties: { e: { type: 'object', 'x-kubernetes-embedded-resource': true, properties: { metadata: { type: 'object', properties: { name: { type: 'string', default: '..' } } } } } } }),
    [`${P}.properties[e].properties[metadata].properties[name].default: Invalid value: "..": must result in valid metadata: metadata.name: Invalid value: "..": may not be '..'`],
  );
});

test('x-kubernetes-validations: static checks and CEL compilation (B-14)', () => {
  assert.deepEqual(check({ type: 'object', 'x-kubernetes-validations': [{ rule: 'self.metadata.labels == {}' }] }), [
    `${P}.x-kubernetes-validations[0].rule: Invalid value: {"rule":"self.metadata.labels == {}"}: compilation failed: ERROR: <input>:1:14: undefined field 'labels'\n | self.metadata.labels == {}\n | .............^`,
  ]);
  assert.deepEqual(check({ type: 'object', 'x-kubernetes-validations': [{ rule: 'self.metadata.name.startsWith("a") && self.kind != ""' }] }), []);
  assert.deepEqual(check({ type: 'object', 'x-kubernetes-validations': [{ rule: '1 + 1' }] }), [`${P}.x-kubernetes-validations[0].rule: Invalid value: {"rule":"1 + 1"}: cel expression must evaluate to a bool`]);
  assert.deepEqual(check({ type: 'object', 'x-kubernetes-validations': [{ rule: ' ' }, { rule: 'a\nb' }, { rule: 'true', reason: 'Nope' }] }), [
    `${P}.x-kubernetes-validations[0].rule: Required value: rule is not specified`,
    `${P}.x-kubernetes-validations[1].message: Required value: message must be specified if rule contains line breaks`,
    `${P}.x-kubernetes-validations[2].reason: Unsupported value: "Nope": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"`,
  ]);
  assert.deepEqual(
    check({ type: 'object', properties: { l: { type: 'array', items: { type: 'object', properties: { a: { type: 'string', maxLength: 10 } }, 'x-kubernetes-validations': [{ rule: 'self.a == oldSelf.a' }] } } } }),
    [`${P}.properties[l].items.x-kubernetes-validations[0].rule: Invalid value: "self.a == oldSelf.a": oldSelf cannot be used on the uncorrelatable portion of the schema within ${P}.properties[l]`],
  );
  assert.deepEqual(check({ type: 'object', 'x-kubernetes-validations': [{ rule: 'true', optionalOldSelf: true }] }), [
    `${P}.x-kubernetes-validations[0].optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in rule`,
  ]);
  assert.deepEqual(check({ type: 'object', properties: { a: { type: 'string' } }, 'x-kubernetes-validations': [{ rule: 'true', fieldPath: '.b' }] }), [
    `${P}.x-kubernetes-validations[0].fieldPath: Invalid value: ".b": must be a valid path`,
  ]);
});

test('huge and deeply nested schemas are refused before anything recurses', () => {
  let deep: Record<string, unknown> = { type: 'string' };
  for (let i = 0; i < 5000; i++) deep = { type: 'object', properties: { a: deep } };
  assert.deepEqual(check(deep), [`${P}: Forbidden: must not be nested more than 200 levels deep`]);
  assert.equal(isNonStructural(deep as JSONSchemaProps), true);
});

test('isNonStructural and hasUnprunedDefaults for persisted CRDs', () => {
  assert.equal(isNonStructural({ type: 'object' }), false);
  assert.equal(isNonStructural({ properties: { a: {} } }), true);
  assert.equal(hasUnprunedDefaults({ type: 'object', properties: { a: { type: 'object', default: { x: 1 } } } }), true);
  assert.equal(hasUnprunedDefaults({ type: 'object', properties: { a: { type: 'object', default: {} } } }), false);
  assert.equal(hasUnprunedDefaults({ properties: { a: {} } }), false);
});

test('the hook plugs into CRD validation (B-07, B-14 through validateCRD)', async () => {
  const { validateCRD } = await import('../../src/apis/apiextensions/validation.js');
  const hook: import('../../src/apis/apiextensions/validation.js').StructuralSchemaValidator = validateStructuralSchema;
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'noxus.mygroup.example.com' },
    spec: {
      group: 'mygroup.example.com',
      scope: 'Namespaced',
      names: { plural: 'noxus', singular: 'noxu', kind: 'Noxu', listKind: 'NoxuList' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', properties: { foo: { type: 'string', pattern: '+' } }, 'x-kubernetes-validations': [{ rule: 'self.metadata.labels == {}' }] } },
        },
      ],
    },
  };
  const errs = validateCRD(crd, 'v1', { validateStructuralSchema: hook, isNonStructural, hasUnprunedDefaults }).map(fieldErrorString);
  assert.ok(
    errs.includes(
      `${P}.properties[foo].pattern: Invalid value: "+": must be a valid regular expression, but isn't: error parsing regexp: missing argument to repetition operator: \`+\``,
    ),
    errs.join('\n'),
  );
});
