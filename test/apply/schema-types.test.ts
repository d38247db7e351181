import { test } from 'node:test';
import assert from 'node:assert/strict';
import { typeFromDefinition, typeFromSchema } from '../../src/apply/schema-types.js';
import { toFieldSet } from '../../src/apply/typed.js';
import { ATOMIC_ANY, DEDUCED, OBJECT_META, type MapType, type TypeInfo } from '../../src/apply/types.js';

function field(t: TypeInfo, ...path: string[]): TypeInfo {
  let cur = t;
  for (const p of path) {
    const m = cur.kind === 'map' ? cur : cur.kind === 'any' ? cur.map : undefined;
    const next = m?.fields?.get(p) ?? m?.elements;
    assert.ok(next, `no type at ${path.join('.')}`);
    cur = next;
  }
  return cur;
}

const fieldsV1 = (v: unknown, t: TypeInfo) => JSON.stringify(toFieldSet(v, t).toFieldsV1());

test('CRD schemas: properties, additionalProperties, list and map types, ObjectMeta', () => {
  const schema = {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: {
          count: { type: 'integer' },
          name: { type: 'string' },
          when: { type: 'string', format: 'date-time' },
          flag: { type: 'boolean' },
          set: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
          map: { type: 'array', items: { type: 'object', properties: { k: { type: 'string', default: 'd' } } }, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['k'] },
          plain: { type: 'array', items: { type: 'string' } },
          atomicMap: { type: 'object', 'x-kubernetes-map-type': 'atomic', properties: { a: { type: 'string' } } },
          labels: { type: 'object', additionalProperties: { type: 'string' } },
          intOrString: { 'x-kubernetes-int-or-string': true },
          free: { type: 'object' },
        },
      },
    },
  };
  const t = typeFromSchema(schema);
  assert.equal(typeFromSchema(schema), t, 'compiled once per schema object');
  assert.deepEqual(field(t, 'spec', 'count'), { kind: 'scalar', scalar: 'numeric' });
  assert.deepEqual(field(t, 'spec', 'name'), { kind: 'scalar', scalar: 'string' });
  assert.deepEqual(field(t, 'spec', 'when'), { kind: 'scalar', scalar: 'untyped' });
  assert.deepEqual(field(t, 'spec', 'flag'), { kind: 'scalar', scalar: 'boolean' });
  assert.equal((field(t, 'spec', 'set') as { listType: string }).listType, 'set');
  const map = field(t, 'spec', 'map');
  assert.ok(map.kind === 'list' && map.listType === 'map' && map.keys[0] === 'k');
  assert.equal((map.elements as MapType).defaults?.get('k'), 'd');
  assert.equal((field(t, 'spec', 'plain') as { listType: string }).listType, 'atomic');
  assert.equal((field(t, 'spec', 'atomicMap') as MapType).atomic, true);
  assert.equal((field(t, 'spec', 'labels') as MapType).elements?.kind, 'scalar');
  assert.equal(field(t, 'spec', 'intOrString').kind, 'any');
  assert.equal((field(t, 'spec', 'free') as MapType).elements, DEDUCED, 'object without properties: free-form');
  assert.equal((field(t, 'spec') as MapType).elements, undefined, 'unknown fields are not declared');
  assert.equal(field(t, 'metadata'), OBJECT_META);
  assert.deepEqual(field(t, 'apiVersion'), { kind: 'scalar', scalar: 'string' });
  assert.equal(fieldsV1({ spec: { map: [{ x: 1 }] } }, t), '{"f:spec":{"f:map":{"k:{\\"k\\":\\"d\\"}":{".":{},"f:x":{}}}}}');
});

test('x-kubernetes-preserve-unknown-fields makes unknown fields deduced for the whole subtree', () => {
  const t = typeFromSchema({
    type: 'object',
    properties: {
      preserving: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { known: { type: 'object', properties: { a: { type: 'string' } } } } },
      pruning: { type: 'object', properties: { a: { type: 'string' } } },
    },
  });
  assert.equal((field(t, 'preserving') as MapType).elements, DEDUCED);
  assert.equal((field(t, 'preserving', 'known') as MapType).elements, DEDUCED, 'inherited below');
  assert.equal((field(t, 'pruning') as MapType).elements, undefined);
  assert.equal(
    fieldsV1({ preserving: { known: { a: 'x', b: { c: [1] } }, other: 1 } }, t),
    '{"f:preserving":{"f:known":{"f:a":{},"f:b":{".":{},"f:c":{}}},"f:other":{}}}',
  );
  const legacy = typeFromSchema({ type: 'object', properties: { spec: { type: 'object', properties: { a: { type: 'string' } } } } }, { preserveUnknownFields: true });
  assert.equal((field(legacy, 'spec') as MapType).elements, DEDUCED);
});

test('embedded resources get apiVersion, kind and ObjectMeta', () => {
  const t = typeFromSchema({ type: 'object', properties: { template: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true } } });
  assert.equal(field(t, 'template', 'metadata'), OBJECT_META);
  assert.deepEqual(field(t, 'template', 'kind'), { kind: 'scalar', scalar: 'string' });
  assert.equal(
    fieldsV1({ template: { metadata: { labels: { a: 'b' }, finalizers: ['x'] }, spec: { z: 1 } } }, t),
    '{"f:template":{"f:metadata":{"f:finalizers":{"v:\\"x\\"":{}},"f:labels":{"f:a":{}}},"f:spec":{".":{},"f:z":{}}}}',
  );
});

test('no schema: the whole object deduced, metadata included', () => {
  const t = typeFromSchema(undefined);
  assert.equal(t, DEDUCED);
  assert.equal(fieldsV1({ metadata: { finalizers: ['a'] }, spec: { l: [1] } }, t), '{"f:metadata":{".":{},"f:finalizers":{}},"f:spec":{".":{},"f:l":{}}}');
});

test('OpenAPI definitions: $ref, patch strategies, map-type overrides on references, special types', () => {
  const defs = {
    'io.k8s.api.core.v1.ConfigMap': {
      type: 'object',
      properties: {
        apiVersion: { type: 'string' },
        kind: { type: 'string' },
        metadata: { $ref: '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' },
        data: { type: 'object', additionalProperties: { type: 'string' } },
      },
    },
    'io.k8s.api.core.v1.PodSpec': {
      type: 'object',
      properties: {
        containers: { type: 'array', items: { $ref: '#/definitions/io.k8s.api.core.v1.Container' }, 'x-kubernetes-patch-strategy': 'merge', 'x-kubernetes-patch-merge-key': 'name' },
        nodeSelector: { type: 'object', additionalProperties: { type: 'string' }, 'x-kubernetes-map-type': 'atomic' },
        selector: { allOf: [{ $ref: '#/definitions/Selector' }], 'x-kubernetes-map-type': 'atomic' },
        quantity: { $ref: '#/definitions/io.k8s.apimachinery.pkg.api.resource.Quantity' },
        raw: { $ref: '#/definitions/io.k8s.apimachinery.pkg.runtime.RawExtension' },
        self: { $ref: '#/definitions/io.k8s.api.core.v1.PodSpec' },
      },
    },
    'io.k8s.api.core.v1.Container': { type: 'object', properties: { name: { type: 'string' } } },
    Selector: { type: 'object', properties: { a: { type: 'string' } } },
  };
  const cm = typeFromDefinition('io.k8s.api.core.v1.ConfigMap', defs);
  assert.equal(field(cm, 'metadata'), OBJECT_META);
  const pod = typeFromDefinition('io.k8s.api.core.v1.PodSpec', defs);
  const containers = field(pod, 'containers');
  assert.ok(containers.kind === 'list' && containers.listType === 'map' && containers.keys[0] === 'name');
  assert.equal((field(pod, 'selector') as MapType).atomic, true);
  assert.equal((defs.Selector as object) && (typeFromDefinition('Selector', defs) as MapType).atomic, false);
  assert.deepEqual(field(pod, 'quantity'), { kind: 'scalar', scalar: 'untyped' });
  assert.equal(field(pod, 'raw'), ATOMIC_ANY);
  assert.equal(field(pod, 'self'), pod, 'recursive references resolve');
});
