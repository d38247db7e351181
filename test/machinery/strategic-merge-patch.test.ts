import assert from 'node:assert/strict';
import { it } from 'node:test';
import { applyStrategicMergePatch } from '../../src/machinery/strategic-merge-patch.js';

const deployment = {
  spec: {
    template: {
      spec: {
        containers: [
          { name: 'web', image: 'nginx:1', ports: [{ containerPort: 80 }] },
          { name: 'side', image: 'busybox' },
        ],
      },
    },
  },
  metadata: { finalizers: ['a', 'b'], labels: { app: 'x' } },
};

it('merges lists by the key of $setElementOrder, as kubectl apply patches them', () => {
  const patch = {
    spec: {
      template: {
        spec: {
          '$setElementOrder/containers': [{ name: 'web' }, { name: 'side' }],
          containers: [{ name: 'web', image: 'nginx:2' }],
        },
      },
    },
  };
  const out = applyStrategicMergePatch(deployment, patch) as any;
  assert.deepEqual(out.spec.template.spec.containers, [
    { name: 'web', image: 'nginx:2', ports: [{ containerPort: 80 }] },
    { name: 'side', image: 'busybox' },
  ]);
  assert.deepEqual(deployment.spec.template.spec.containers[0].image, 'nginx:1', 'the input is left alone');
});

it('deletes list elements and map keys with $patch: delete and null, and replaces with $patch: replace', () => {
  const out = applyStrategicMergePatch(deployment, {
    spec: { template: { spec: { containers: [{ name: 'side', $patch: 'delete' }] } } },
    metadata: { labels: { app: null, tier: 'front' } },
  }) as any;
  assert.deepEqual(out.spec.template.spec.containers.map((c: any) => c.name), ['web']);
  assert.deepEqual(out.metadata.labels, { tier: 'front' });
  const replaced = applyStrategicMergePatch(deployment, { metadata: { labels: { $patch: 'replace', only: 'this' } } }) as any;
  assert.deepEqual(replaced.metadata.labels, { only: 'this' });
});

it('merges primitive lists with their order and $deleteFromPrimitiveList, and replaces lists without directives', () => {
  const out = applyStrategicMergePatch(deployment, {
    metadata: { '$setElementOrder/finalizers': ['c', 'a'], finalizers: ['c'], '$deleteFromPrimitiveList/finalizers': ['b'] },
  }) as any;
  assert.deepEqual(out.metadata.finalizers, ['c', 'a']);
  const plain = applyStrategicMergePatch({ a: [1, 2, 3] }, { a: [4] }) as any;
  assert.deepEqual(plain.a, [4]);
});
