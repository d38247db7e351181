/** go-types.ts, generated from upstream's types.go: spot facts, and every type it names is defined. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GO_PACKAGES, GO_STRUCTS } from '../../src/api/go-types.js';

const field = (struct: string, json: string) => GO_STRUCTS[struct].fields.find((f) => f.json === json);

test('carries field names, numbers, types and patch strategies from upstream', () => {
  assert.deepEqual(field('core/v1.ConfigMap', 'data'), { json: 'data', type: 'map[string]string', omitempty: true, proto: [2, 'bytes', 'rep'], optional: true });
  assert.equal(field('core/v1.ConfigMap', 'binaryData')?.type, 'map[string]bytes');
  assert.equal(field('apps/v1.DeploymentSpec', 'replicas')?.type, '*int32');
  assert.deepEqual(field('apps/v1.DeploymentSpec', 'replicas')?.proto, [1, 'varint', 'opt']);
  assert.equal(field('meta/v1.ObjectMeta', 'creationTimestamp')?.type, '@Time');
  assert.deepEqual(field('meta/v1.ObjectMeta', 'managedFields')?.proto, [17, 'bytes', 'rep']);
  const containers = field('core/v1.PodSpec', 'containers')!;
  assert.equal(containers.patchStrategy, 'merge');
  assert.equal(containers.patchMergeKey, 'name');
  assert.equal(containers.listType, 'map');
  assert.deepEqual(containers.listMapKeys, ['name']);
  // VolumeSource is inline in JSON and field 2 on the protobuf wire.
  assert.deepEqual(GO_STRUCTS['core/v1.Volume'].fields[1], { json: '', type: 'core/v1.VolumeSource', goType: 'v1.VolumeSource', inline: true, proto: [2, 'bytes', 'opt'] });
  assert.equal(field('authentication/v1.UserInfo', 'extra')?.type, 'map[string][]string@items');
  assert.equal(field('core/v1.ResourceRequirements', 'limits')?.type, 'map[string]@Quantity');
  assert.deepEqual(GO_PACKAGES['rbac/v1'], { group: 'rbac.authorization.k8s.io', version: 'v1' });
  assert.deepEqual(GO_PACKAGES['core/v1'], { group: '', version: 'v1' });
});

test('every struct a field names is defined, and field numbers are unique in a struct', () => {
  for (const [name, s] of Object.entries(GO_STRUCTS)) {
    const numbers = new Set<number>();
    for (const f of s.fields) {
      for (const ref of f.type.match(/[a-z]+\/v\w+\.\w+/g) ?? []) assert.ok(GO_STRUCTS[ref], `${name}.${f.json}: ${ref}`);
      if (!f.proto) continue;
      assert.ok(!numbers.has(f.proto[0]), `${name}: field ${f.proto[0]} twice`);
      numbers.add(f.proto[0]);
    }
  }
});
