import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DESCRIPTORS, canonicalize } from '../../../src/apis/apiextensions/wire-codec.js';
import { goSchema, goVersions } from '../../../src/apis/apiextensions/go-values.js';
import { deepEqual } from '../../../src/apis/apiextensions/json-util.js';
import { isDNS1035Label, isDNS1123Subdomain, nameIsDNSSubdomain } from '../../../src/apis/apiextensions/names-validation.js';
import type { CustomResourceDefinitionV1 } from '../../../src/api/apiextensions.js';
import { noxu } from './fixtures.js';

describe('canonical wire form', () => {
  it('emits Go zero values for non-omitempty fields (status of a fresh CRD)', () => {
    const out = canonicalize<CustomResourceDefinitionV1>({ spec: {} }, DESCRIPTORS.crdV1);
    assert.deepEqual(out, {
      spec: { group: '', names: { plural: '', kind: '' }, scope: '', versions: null },
      status: { conditions: null, acceptedNames: { plural: '', kind: '' }, storedVersions: null },
    });
  });

  it('drops omitempty zero values and unknown fields, keeps pointer zero values, sorts maps', () => {
    const crd = noxu();
    const v = crd.spec!.versions![0] as Record<string, unknown>;
    Object.assign(v, { deprecated: false, additionalPrinterColumns: [{ name: 'A', type: 'string', jsonPath: '.a', priority: 0, format: '' }], bogus: true });
    v.schema = {
      openAPIV3Schema: {
        type: 'object',
        default: null,
        nullable: false,
        required: [],
        properties: { z: { type: 'string' }, a: { type: 'object', 'x-kubernetes-preserve-unknown-fields': false } },
      },
    };
    const out = canonicalize<CustomResourceDefinitionV1>(crd, DESCRIPTORS.crdV1);
    const version = out.spec!.versions![0];
    assert.deepEqual(Object.keys(version), ['name', 'served', 'storage', 'schema', 'additionalPrinterColumns']);
    assert.deepEqual(version.additionalPrinterColumns, [{ name: 'A', type: 'string', jsonPath: '.a' }]);
    const schema = version.schema!.openAPIV3Schema!;
    assert.deepEqual(schema, { type: 'object', properties: { a: { type: 'object', 'x-kubernetes-preserve-unknown-fields': false }, z: { type: 'string' } } });
    assert.deepEqual(Object.keys(schema.properties!), ['a', 'z']);
  });

  it('keeps additionalProperties booleans, array items and string-array dependencies', () => {
    const schema = canonicalize({ additionalProperties: false, items: [{ type: 'string' }], dependencies: { a: ['b'], c: { type: 'object' } } }, DESCRIPTORS.schema);
    assert.deepEqual(schema, { items: [{ type: 'string' }], additionalProperties: false, dependencies: { a: ['b'], c: { type: 'object' } } });
  });
});

describe('Go internal values', () => {
  it('renders a schema with every internal field', () => {
    const s = goSchema({ type: 'object', properties: { b: {}, a: {} } });
    assert.equal(Object.keys(s).length, 44);
    assert.equal(s.Type, 'object');
    assert.deepEqual(Object.keys(s.Properties as object), ['a', 'b']);
  });

  it('renders versions', () => {
    assert.equal(
      JSON.stringify(goVersions([{ name: 'v1', served: true, subresources: { status: {} }, additionalPrinterColumns: [{ name: 'A', JSONPath: '.a' }] }])),
      '[{"Name":"v1","Served":true,"Storage":false,"Deprecated":false,"DeprecationWarning":null,"Schema":null,"Subresources":{"Status":{},"Scale":null},"AdditionalPrinterColumns":[{"Name":"A","Type":"","Format":"","Description":"","Priority":0,"JSONPath":".a"}],"SelectableFields":null}]',
    );
  });
});

describe('deepEqual', () => {
  it('ignores key order and undefined, compares bigints with numbers', () => {
    assert.ok(deepEqual({ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1, d: undefined }));
    assert.ok(deepEqual(9007199254740993n, 9007199254740993n));
    assert.ok(deepEqual(5n, 5));
    assert.ok(!deepEqual(5n, 5.5));
    assert.ok(!deepEqual([1], { 0: 1 }));
  });
});

describe('name validators', () => {
  it('DNS-1035 labels: length and pattern errors together', () => {
    assert.deepEqual(isDNS1035Label('a'.repeat(64)), ['must be no more than 63 characters']);
    assert.equal(isDNS1035Label('A'.repeat(64)).length, 2);
    assert.deepEqual(isDNS1035Label('abc-123'), []);
  });

  it('DNS-1123 subdomains', () => {
    assert.deepEqual(isDNS1123Subdomain('noxus.mygroup.example.com'), []);
    assert.equal(isDNS1123Subdomain(`${'a'.repeat(250)}.com`)[0], 'must be no more than 253 characters');
  });

  it('masks a generateName prefix like upstream (dropping two characters)', () => {
    assert.deepEqual(nameIsDNSSubdomain('noxus-', true), []);
    assert.deepEqual(nameIsDNSSubdomain('a.-', true), isDNS1123Subdomain('aa'));
    assert.notDeepEqual(nameIsDNSSubdomain('noxus-', false), []);
  });
});
