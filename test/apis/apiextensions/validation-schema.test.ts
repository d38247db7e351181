import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { validateCRD, validateCRDUpdate } from '../../../src/apis/apiextensions/validation.js';
import type { StructuralSchemaContext } from '../../../src/api/apiextensions.js';
import { defaultV1, defaultV1beta1, prepareCRDForCreate } from '../../../src/apis/apiextensions/defaults.js';
import type { CustomResourceDefinitionV1, JSONSchemaProps } from '../../../src/api/apiextensions.js';
import { cronTabV1beta1, noxu, noxuWithSubresources, texts } from './fixtures.js';

function withSchema(schema: JSONSchemaProps, base = noxu()): CustomResourceDefinitionV1 {
  for (const v of base.spec!.versions!) v.schema = { openAPIV3Schema: structuredClone(schema) };
  return prepareCRDForCreate(defaultV1(base));
}

const create = (schema: JSONSchemaProps, base?: CustomResourceDefinitionV1): string[] => texts(validateCRD(withSchema(schema, base), 'v1'));
const obj = (properties: Record<string, JSONSchemaProps>, extra: JSONSchemaProps = {}): JSONSchemaProps => ({ type: 'object', properties, ...extra });
const P = 'spec.validation.openAPIV3Schema';

describe('forbidden schema constructs (B-07)', () => {
  it('uniqueItems, $ref, id, additionalItems, patternProperties, definitions, dependencies', () => {
    assert.deepEqual(create(obj({ foo: { type: 'array', items: { type: 'string' }, uniqueItems: true } })), [
      `${P}.properties[foo].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic`,
    ]);
    assert.deepEqual(create(obj({ foo: { $ref: '#/definitions/bar' } })), [`${P}.properties[foo].$ref: Forbidden: $ref is not supported`]);
    assert.deepEqual(
      create(
        obj({
          foo: {
            type: 'object',
            id: 'x',
            additionalItems: false,
            patternProperties: { '^a': { type: 'string' } },
            definitions: { d: { type: 'string' } },
            dependencies: { a: ['b'] },
          },
        }),
      ),
      [
        `${P}.properties[foo].id: Forbidden: id is not supported`,
        `${P}.properties[foo].additionalItems: Forbidden: additionalItems is not supported`,
        `${P}.properties[foo].patternProperties: Forbidden: patternProperties is not supported`,
        `${P}.properties[foo].definitions: Forbidden: definitions is not supported`,
        `${P}.properties[foo].dependencies: Forbidden: dependencies is not supported`,
      ],
    );
  });

  it('type null, invalid types and array items', () => {
    assert.deepEqual(create(obj({ a: { type: 'null' }, b: { type: 'map' }, c: { type: 'array', items: [{ type: 'string' }] } })), [
      `${P}.properties[a].type: Unsupported value: "null": supported values: "array", "boolean", "integer", "number", "object", "string"`,
      `${P}.properties[a].type: Forbidden: type cannot be set to null, use nullable as an alternative`,
      `${P}.properties[b].type: Unsupported value: "map": supported values: "array", "boolean", "integer", "number", "object", "string"`,
      `${P}.properties[c].items: Forbidden: items must be a schema object and not an array`,
    ]);
  });

  it('v1beta1 tolerates invalid types but not type null', () => {
    const crd = cronTabV1beta1();
    crd.spec!.preserveUnknownFields = true;
    crd.spec!.validation = { openAPIV3Schema: obj({ a: { type: 'map' }, b: { type: 'null' } }) };
    assert.deepEqual(texts(validateCRD(prepareCRDForCreate(defaultV1beta1(crd)), 'v1beta1')), [
      'spec.validation.openAPIV3Schema.properties[b].type: Forbidden: type cannot be set to null, use nullable as an alternative',
    ]);
  });

  it('additionalProperties together with properties', () => {
    assert.deepEqual(create(obj({ m: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: { type: 'string' } } })), [
      `${P}.properties[m].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive`,
    ]);
    assert.deepEqual(create(obj({ m: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: true } })), []);
  });

  it('x-kubernetes-preserve-unknown-fields must be true or undefined; root nullable is forbidden', () => {
    assert.deepEqual(create(obj({ a: { type: 'object', 'x-kubernetes-preserve-unknown-fields': false } }, { nullable: true })), [
      `${P}.nullable: Forbidden: nullable cannot be true at the root`,
      `${P}.properties[a].x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true or undefined`,
    ]);
  });

  it('defaults are forbidden in top-level metadata and inside embedded metadata maps', () => {
    assert.deepEqual(create(obj({ metadata: { type: 'object', default: {} } })), [`${P}.properties[metadata].default: Forbidden: must not be set in top-level metadata`]);
    const embedded = obj({
      e: {
        type: 'object',
        'x-kubernetes-embedded-resource': true,
        properties: { metadata: { type: 'object', additionalProperties: { type: 'string', default: 'x' }, 'x-kubernetes-embedded-resource': true } },
      },
    });
    assert.deepEqual(create(embedded), [
      `${P}.properties[e].properties[metadata].x-kubernetes-embedded-resource: Forbidden: must not be used inside of resource meta`,
      `${P}.properties[e].properties[metadata].additionalProperties.default: Forbidden: must not be set inside additionalProperties applying to object metadata`,
    ]);
  });

  it('walks allOf/anyOf/oneOf/not/items/additionalProperties in upstream order', () => {
    const schema = obj({
      a: {
        type: 'array',
        items: { type: 'string', uniqueItems: true },
        allOf: [{ $ref: 'x' }],
        anyOf: [{ id: 'y' }],
        oneOf: [{ type: 'null' }],
        not: { uniqueItems: true },
      },
    });
    assert.deepEqual(create(schema), [
      `${P}.properties[a].not.uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic`,
      `${P}.properties[a].allOf[0].$ref: Forbidden: $ref is not supported`,
      `${P}.properties[a].oneOf[0].type: Unsupported value: "null": supported values: "array", "boolean", "integer", "number", "object", "string"`,
      `${P}.properties[a].oneOf[0].type: Forbidden: type cannot be set to null, use nullable as an alternative`,
      `${P}.properties[a].anyOf[0].id: Forbidden: id is not supported`,
      `${P}.properties[a].items.uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic`,
    ]);
  });
});

describe('status subresource root restrictions (B-08)', () => {
  it('the root type must be object', () => {
    assert.deepEqual(create({ type: 'array', items: { type: 'string' } }, noxuWithSubresources()), [
      `${P}.type: Invalid value: "array": only "object" is allowed as the type at the root of the schema if the status subresource is enabled`,
    ]);
  });

  it('a root description and required: [spec] are fine', () => {
    assert.deepEqual(create(obj({ spec: { type: 'object' } }, { description: 'root', required: ['spec'] }), noxuWithSubresources()), []);
  });

  it('other root fields are rejected with the whole internal schema as value', () => {
    const errs = create(obj({}, { minProperties: 1 }), noxuWithSubresources());
    assert.equal(errs.length, 1);
    const prefix = `${P}: Invalid value: {"ID":"","Schema":"","Ref":null,"Description":"","Type":"object","Nullable":false,`;
    assert.ok(errs[0].startsWith(prefix), errs[0]);
    assert.ok(errs[0].includes('"MinProperties":1,'), errs[0]);
    assert.ok(
      errs[0].endsWith(
        ': only [Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example XPreserveUnknownFields XValidations] fields are allowed at the root of the schema if the status subresource is enabled',
      ),
      errs[0],
    );
  });

  it('does not apply without the status subresource', () => {
    assert.deepEqual(create(obj({}, { minProperties: 1 })), []);
  });
});

describe('list and map types', () => {
  it('x-kubernetes-list-type needs an array, and a known value', () => {
    assert.deepEqual(create(obj({ a: { type: 'object', 'x-kubernetes-list-type': 'set' }, b: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'bag' } })), [
      `${P}.properties[a].type: Invalid value: "object": must be array if x-kubernetes-list-type is specified`,
      `${P}.properties[b].x-kubernetes-list-type: Unsupported value: "bag": supported values: "atomic", "set", "map"`,
    ]);
  });

  it('x-kubernetes-map-type needs an object, and a known value', () => {
    assert.deepEqual(create(obj({ a: { 'x-kubernetes-map-type': 'weird', 'x-kubernetes-preserve-unknown-fields': true } })), [
      `${P}.properties[a].type: Required value: must be object if x-kubernetes-map-type is specified`,
      `${P}.properties[a].x-kubernetes-map-type: Unsupported value: "weird": supported values: "atomic", "granular"`,
    ]);
  });

  it('set items must be atomic', () => {
    assert.deepEqual(create(obj({ s: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'object' } } })), [
      `${P}.properties[s].items.x-kubernetes-map-type: Invalid value: null: must be atomic as item of a list with x-kubernetes-list-type=set`,
    ]);
  });

  it('map lists need keys that are scalar, required or defaulted item properties', () => {
    const list = (keys: string[], items: JSONSchemaProps): JSONSchemaProps => ({ type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': keys, items });
    assert.deepEqual(create(obj({ l: list(['name'], { type: 'object', required: ['name'], properties: { name: { type: 'string' } } }) })), []);
    assert.deepEqual(create(obj({ l: list(['name', 'obj', 'missing'], { type: 'object', properties: { name: { type: 'string', nullable: true }, obj: { type: 'object' } } }) })), [
      `${P}.properties[l].items.properties[obj].type: Invalid value: "object": must be a scalar type if parent array's x-kubernetes-list-type is map`,
      `${P}.properties[l].x-kubernetes-list-map-keys: Invalid value: ["name","obj","missing"]: entries must all be names of item properties`,
      `${P}.properties[l].items.properties[name].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property`,
      `${P}.properties[l].items.properties[name].nullable: Forbidden: this property is in x-kubernetes-list-map-keys, so it cannot be nullable`,
      `${P}.properties[l].items.properties[obj].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property`,
    ]);
    assert.deepEqual(create(obj({ l: { type: 'array', 'x-kubernetes-list-type': 'map' } })), [
      `${P}.properties[l].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map`,
      `${P}.properties[l].items: Required value: must have a schema if x-kubernetes-list-type is map`,
    ]);
    assert.deepEqual(create(obj({ l: { type: 'array', 'x-kubernetes-list-map-keys': ['a'], items: { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] } } })), [
      `${P}.properties[l].x-kubernetes-list-type: Required value: must be map if x-kubernetes-list-map-keys is non-empty`,
    ]);
  });
});

describe('structural schema hook', () => {
  it('runs on v1 schemas with the schema path and context', () => {
    const calls: [string, StructuralSchemaContext][] = [];
    const errs = validateCRD(withSchema(obj({ a: { uniqueItems: true, type: 'array', items: { type: 'string' } } })), 'v1', {
      validateStructuralSchema: (_s, path, ctx) => {
        calls.push([path, ctx]);
        return [{ type: 'FieldValueRequired', field: `${path}.properties[a].items.type`, detail: 'must not be empty for specified array items' }];
      },
    });
    assert.deepEqual(calls, [[P, { hasOtherErrors: true, requirePrunedDefaults: true }]]);
    assert.equal(texts(errs)[1], `${P}.properties[a].items.type: Required value: must not be empty for specified array items`);
  });

  it('runs per version for differing schemas', () => {
    const base = noxuWithSubresources();
    base.spec!.versions![1].schema = { openAPIV3Schema: { type: 'object', description: 'v1' } };
    const paths: string[] = [];
    validateCRD(prepareCRDForCreate(defaultV1(base)), 'v1', { validateStructuralSchema: (_s, path) => (paths.push(path), []) });
    assert.deepEqual(paths, ['spec.versions[0].schema.openAPIV3Schema', 'spec.versions[1].schema.openAPIV3Schema']);
  });

  it('is skipped for v1beta1 CRDs without pruning or extensions, used with pruning', () => {
    const paths: string[] = [];
    const hook = { validateStructuralSchema: (_s: JSONSchemaProps, path: string) => (paths.push(path), []) };
    const crd = cronTabV1beta1();
    crd.spec!.preserveUnknownFields = true;
    validateCRD(prepareCRDForCreate(defaultV1beta1(crd)), 'v1beta1', hook);
    assert.deepEqual(paths, []);
    validateCRD(prepareCRDForCreate(defaultV1beta1(cronTabV1beta1())), 'v1beta1', hook);
    assert.deepEqual(paths, [P]);
  });

  it('updates keep non-structural persisted schemas acceptable when told so', () => {
    const old = withSchema(obj({ a: {} }));
    const seen: boolean[] = [];
    const hooks = { isNonStructural: () => true, validateStructuralSchema: () => (seen.push(true), []) };
    const next = structuredClone(old);
    next.spec!.versions![0].schema!.openAPIV3Schema!.description = 'changed';
    assert.deepEqual(texts(validateCRDUpdate(next, old, 'v1', hooks)), []);
    // pruning (preserveUnknownFields false) still requires a structural schema
    assert.equal(seen.length, 1);
  });
});
