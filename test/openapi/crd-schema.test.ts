// The published form of CRD schemas: structural copy, v2 simplifications (O-02), embedded resources, list kinds.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { JSONSchemaProps } from '../../src/api/apiextensions.js';
import { definitionName, kindSchema, listSchema } from '../../src/openapi/index.js';

const gvk = { group: 'mygroup.example.com', version: 'v1beta1', kind: 'WishIHadChosenNoxu' };
const GVK_EXT = [{ group: 'mygroup.example.com', kind: 'WishIHadChosenNoxu', version: 'v1beta1' }];
const OBJECT_META_REF = {
  description: "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
  $ref: '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta',
};

function v2(schema: JSONSchemaProps | undefined, preserveUnknownFields = false) {
  return kindSchema({ gvk, schema, preserveUnknownFields }, { v2: true });
}

describe('CRD schemas in OpenAPI', () => {
  it('names definitions by the reversed group', () => {
    assert.equal(definitionName('stable.example.com', 'v1', 'CronTab'), 'com.example.stable.v1.CronTab');
    assert.equal(definitionName('mygroup.example.com', 'v1beta1', 'NoxuItemList'), 'com.example.mygroup.v1beta1.NoxuItemList');
  });

  it('publishes preserve-unknown-fields roots and missing schemas as plain objects in v2', () => {
    assert.deepEqual(v2({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true }), { type: 'object', 'x-kubernetes-group-version-kind': GVK_EXT });
    assert.deepEqual(v2(undefined), { type: 'object', 'x-kubernetes-group-version-kind': GVK_EXT });
    assert.deepEqual(v2({ type: 'object', properties: { a: { type: 'string' } } }, true), { type: 'object', 'x-kubernetes-group-version-kind': GVK_EXT });
    // v3 keeps the schema.
    const v3 = kindSchema({ gvk, schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } }, { v2: false });
    assert.equal(v3['x-kubernetes-preserve-unknown-fields'], true);
    assert.deepEqual(Object.keys(v3.properties), ['apiVersion', 'kind', 'metadata']);
  });

  it('applies the v2 simplifications', () => {
    const schema: JSONSchemaProps = {
      type: 'object',
      description: 'root',
      required: ['spec'],
      properties: {
        spec: {
          type: 'object',
          required: ['a', 'n'],
          properties: {
            a: { type: 'string', default: 'x', pattern: '^a', enum: ['a', 'ab'] },
            n: { type: 'object', nullable: true, properties: { x: { type: 'string' } } },
            u: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { y: { type: 'string' } } },
            arr: { type: 'array', 'x-kubernetes-preserve-unknown-fields': true, items: { type: 'string' } },
            j: { type: 'string', anyOf: [{ minLength: 1 }], allOf: [{ maxLength: 3 }], oneOf: [{ pattern: 'x' }], not: { enum: ['z'] } },
            ios: { 'x-kubernetes-int-or-string': true },
            m: { type: 'object', additionalProperties: { type: 'string', nullable: true } },
          },
        },
      },
    };
    const s = v2(schema);
    assert.deepEqual(s.required, ['spec']);
    assert.equal(s.description, 'root');
    const spec = s.properties.spec;
    assert.deepEqual(spec.required, ['a']);
    assert.deepEqual(spec.properties.a, { type: 'string', pattern: '^a', enum: ['a', 'ab'] });
    assert.deepEqual(spec.properties.n, {});
    assert.deepEqual(spec.properties.u, { 'x-kubernetes-preserve-unknown-fields': true });
    assert.deepEqual(spec.properties.arr, { 'x-kubernetes-preserve-unknown-fields': true });
    assert.deepEqual(spec.properties.j, { type: 'string' });
    assert.deepEqual(spec.properties.ios, { 'x-kubernetes-int-or-string': true });
    assert.deepEqual(spec.properties.m, { type: 'object', additionalProperties: {} });
    assert.deepEqual(s.properties.metadata, OBJECT_META_REF);
    assert.equal(s.properties.apiVersion.type, 'string');
    assert.equal(s.properties.kind.type, 'string');
    assert.deepEqual(s['x-kubernetes-group-version-kind'], GVK_EXT);
    assert.deepEqual(Object.keys(s), ['description', 'type', 'required', 'properties', 'x-kubernetes-group-version-kind']);

    const v3 = kindSchema({ gvk, schema }, { v2: false });
    assert.equal(v3.properties.spec.properties.a.default, 'x');
    assert.equal(v3.properties.spec.properties.n.nullable, true);
    assert.deepEqual(v3.properties.spec.properties.ios, { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] });
    assert.deepEqual(v3.properties.spec.properties.j.anyOf, [{ minLength: 1 }]);
  });

  it('gives embedded resources apiVersion, kind and metadata', () => {
    const schema: JSONSchemaProps = {
      type: 'object',
      properties: {
        embedded: { type: 'object', 'x-kubernetes-embedded-resource': true, properties: { spec: { type: 'object' } } },
        open: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
      },
    };
    const s = v2(schema);
    assert.deepEqual(Object.keys(s.properties.embedded.properties), ['apiVersion', 'kind', 'metadata', 'spec']);
    assert.deepEqual(s.properties.embedded.required, ['kind', 'apiVersion']);
    assert.deepEqual(s.properties.embedded.properties.metadata, OBJECT_META_REF);
    assert.match(s.properties.embedded.properties.kind.description, /^kind is a string value representing the type of this object/);
    // In v2 a preserve-unknown-fields embedded object stays open; in v3 it gets the fields.
    assert.deepEqual(s.properties.open, { 'x-kubernetes-preserve-unknown-fields': true, 'x-kubernetes-embedded-resource': true });
    const v3 = kindSchema({ gvk, schema }, { v2: false });
    assert.deepEqual(v3.properties.open.required, ['kind', 'apiVersion']);
  });

  it('drops non-structural fields', () => {
    const s = kindSchema(
      { gvk, schema: { type: 'object', properties: { a: { type: 'string', id: 'x', $schema: 'y', externalDocs: { url: 'http://e' }, example: 'ex', title: 't' } as JSONSchemaProps } } },
      { v2: true },
    );
    assert.deepEqual(s.properties.a, { type: 'string', title: 't', externalDocs: { url: 'http://e' }, example: 'ex' });
  });

  it('builds the list kind', () => {
    assert.deepEqual(listSchema({ group: 'stable.example.com', version: 'v1', kind: 'CronTab' }, 'CronTabList', 'crontabs', 'com.example.stable.v1.CronTab'), {
      description: 'CronTabList is a list of CronTab',
      type: 'object',
      required: ['items'],
      properties: {
        apiVersion: {
          description:
            'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources',
          type: 'string',
        },
        items: {
          description: 'List of crontabs. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md',
          type: 'array',
          items: { $ref: '#/definitions/com.example.stable.v1.CronTab' },
        },
        kind: {
          description:
            'Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds',
          type: 'string',
        },
        metadata: {
          description: 'Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds',
          $ref: '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta',
        },
      },
      'x-kubernetes-group-version-kind': [{ group: 'stable.example.com', kind: 'CronTabList', version: 'v1' }],
    });
  });
});
