import assert from 'node:assert/strict';
import { bestTimes } from '../util/timing.js';
import { performance } from 'node:perf_hooks';
import { describe, it } from 'node:test';
import { applyStrategicMergePatch, StrategicMergePatchError } from '../../src/machinery/strategic-merge-patch.js';
import { stringifyJson } from '../../src/machinery/json.js';

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
  // A map's `$patch: delete` leaves it empty (handleDirectiveInMergeMap); `merge` is no directive of a map.
  const emptied = applyStrategicMergePatch(deployment, { metadata: { labels: { $patch: 'delete' } } }) as any;
  assert.deepEqual(emptied.metadata.labels, {});
  assert.throws(() => applyStrategicMergePatch(deployment, { metadata: { labels: { $patch: 'merge', a: 'b' } } }), /unknown patch type: merge in map: map\[\$patch:merge a:b\]/);
});

it('merges primitive lists with their order and $deleteFromPrimitiveList, and replaces lists without directives', () => {
  const out = applyStrategicMergePatch(deployment, {
    metadata: { '$setElementOrder/finalizers': ['c', 'a'], finalizers: ['c'], '$deleteFromPrimitiveList/finalizers': ['b'] },
  }) as any;
  assert.deepEqual(out.metadata.finalizers, ['c', 'a']);
  const plain = applyStrategicMergePatch({ a: [1, 2, 3] }, { a: [4] }) as any;
  assert.deepEqual(plain.a, [4]);
});

describe('strategic merge patch with the Go types\' patch metadata', () => {
  const deploy = () => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'two', finalizers: ['a', 'b'] },
    spec: {
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } },
      template: {
        spec: {
          containers: [
            { name: 'a', image: 'nginx:1', args: ['x', 'y'], env: [{ name: 'E1', value: '1' }, { name: 'E2', value: '2' }], ports: [{ containerPort: 80, name: 'http' }] },
            { name: 'b', image: 'busybox' },
          ],
        },
      },
    },
  });
  const smp = (patch: unknown) => applyStrategicMergePatch(deploy(), patch, 'apps/v1.Deployment') as any;

  it('merges containers by name, and their env and ports by their keys (kubectl patch\'s idiom)', () => {
    const out = smp({ spec: { template: { spec: { containers: [{ name: 'a', image: 'nginx:3', env: [{ name: 'E2', value: 'two' }, { name: 'E3', value: '3' }] }] } } } });
    const [a, b] = out.spec.template.spec.containers;
    assert.equal(a.image, 'nginx:3');
    assert.deepEqual(a.env, [{ name: 'E1', value: '1' }, { name: 'E2', value: 'two' }, { name: 'E3', value: '3' }]);
    assert.deepEqual(a.ports, [{ containerPort: 80, name: 'http' }], 'untouched fields stay');
    assert.deepEqual(a.args, ['x', 'y']);
    assert.deepEqual(b, { name: 'b', image: 'busybox' }, 'the other container stays');
  });

  it('replaces lists without a merge strategy, and merges primitive merge lists as sets', () => {
    const out = smp({ metadata: { finalizers: ['c', 'a'] }, spec: { template: { spec: { containers: [{ name: 'a', args: ['z'] }] } } } });
    assert.deepEqual(out.spec.template.spec.containers[0].args, ['z']);
    assert.deepEqual(out.metadata.finalizers, ['a', 'b', 'c']);
    const removed = smp({ metadata: { '$deleteFromPrimitiveList/finalizers': ['a'] } });
    assert.deepEqual(removed.metadata.finalizers, ['b']);
  });

  it('honours $patch on elements and maps, $retainKeys and $setElementOrder', () => {
    const deleted = smp({ spec: { template: { spec: { containers: [{ name: 'b', $patch: 'delete' }] } } } });
    assert.deepEqual(deleted.spec.template.spec.containers.map((c: any) => c.name), ['a']);
    const replacedList = smp({ spec: { template: { spec: { containers: [{ $patch: 'replace' }, { name: 'c', image: 'new' }] } } } });
    assert.deepEqual(replacedList.spec.template.spec.containers, [{ name: 'c', image: 'new' }]);
    const replacedMap = smp({ spec: { strategy: { $patch: 'replace', type: 'Recreate' } } });
    assert.deepEqual(replacedMap.spec.strategy, { type: 'Recreate' });
    const retained = smp({ spec: { strategy: { $retainKeys: ['type'], type: 'Recreate' } } });
    assert.deepEqual(retained.spec.strategy, { type: 'Recreate' });
    const ordered = smp({ spec: { template: { spec: { '$setElementOrder/containers': [{ name: 'b' }, { name: 'a' }], containers: [{ name: 'a', image: 'nginx:4' }] } } } });
    assert.deepEqual(ordered.spec.template.spec.containers.map((c: any) => [c.name, c.image]), [['b', 'busybox'], ['a', 'nginx:4']]);
  });

  it('refuses a merge-list element without its merge key, as strategicpatch does', () => {
    assert.throws(() => smp({ spec: { template: { spec: { containers: [{ image: 'x' }] } } } }), (e: unknown) => e instanceof StrategicMergePatchError && e.message === 'map: map[image:x] does not contain declared merge key: name');
  });
});

it('merges deeply nested fields the Go types lack without exhausting the stack', () => {
  let deep: Record<string, unknown> = {};
  const root = deep;
  for (let i = 0; i < 9999; i++) {
    const next = {};
    deep.a = next;
    deep = next;
  }
  let lists: Record<string, unknown> = {};
  const listRoot = lists;
  for (let i = 0; i < 3000; i++) {
    const next = {};
    lists.x = [{ k: i, y: next }];
    lists['$setElementOrder/x'] = [{ k: i }];
    lists = next;
  }
  const out = applyStrategicMergePatch({ data: { a: 'b' } }, { x: root, z: listRoot }, 'core/v1.ConfigMap') as any;
  assert.deepEqual(out.data, { a: 'b' });
  assert.ok(out.x.a.a.a);
});

describe('strategic merge patch of long lists', () => {
  const deployment = (volumes: unknown[]) => ({ apiVersion: 'apps/v1', kind: 'Deployment', spec: { template: { spec: { containers: [{ name: 'a', image: 'x' }], volumes } } } });
  it('removes every entry of a deleted key first, then merges the others into the first of theirs (strategicpatch)', () => {
    const live = deployment([{ name: 'a', emptyDir: {} }, { name: 'b' }, { name: 'a', hostPath: { path: '/x' } }, { name: 'c' }]);
    const out = applyStrategicMergePatch(live, { spec: { template: { spec: { volumes: [{ name: 'c', emptyDir: {} }, { name: 'a', $patch: 'delete' }, { name: 'd' }] } } } }, 'apps/v1.Deployment') as any;
    assert.deepEqual(out.spec.template.spec.volumes, [{ name: 'b' }, { name: 'c', emptyDir: {} }, { name: 'd' }]);
    assert.throws(() => applyStrategicMergePatch(live, { spec: { template: { spec: { volumes: [{ name: 'a', $patch: 'merge' }] } } } }, 'apps/v1.Deployment'), /merging lists cannot yet be specified in the patch/);
    assert.throws(() => applyStrategicMergePatch(live, { spec: { template: { spec: { volumes: [{ $patch: 'delete' }] } } } }, 'apps/v1.Deployment'), /does not contain declared merge key: name/);
  });

  it('merges, orders and deletes from lists in linear time', () => {
    const time = (n: number) => {
      const live = deployment(Array.from({ length: n }, (_, i) => ({ name: `v${i}`, emptyDir: {} })));
      (live as any).metadata = { finalizers: Array.from({ length: n }, (_, i) => `f${i}`) };
      const patch = {
        metadata: { '$deleteFromPrimitiveList/finalizers': Array.from({ length: n }, (_, i) => `f${i}`) },
        spec: { template: { spec: { '$setElementOrder/volumes': Array.from({ length: n }, (_, i) => ({ name: `v${n - 1 - i}` })), volumes: Array.from({ length: n }, (_, i) => ({ name: `v${i}`, emptyDir: { medium: 'Memory' } })) } } },
      };
      let best = Infinity;
      let out: any;
      for (let i = 0; i < 3; i++) {
        const t = performance.now();
        out = applyStrategicMergePatch(live, patch, 'apps/v1.Deployment');
        best = Math.min(best, performance.now() - t);
      }
      assert.equal(out.spec.template.spec.volumes[0].name, `v${n - 1}`);
      assert.deepEqual(out.metadata.finalizers, []);
      return best;
    };
    time(500);
    const [small, big] = bestTimes(() => [Math.max(time(4000), 0.5), time(32_000)], ([a, b]) => b / a < 24);
    assert.ok(big / small < 24, `4,000 entries: ${small.toFixed(1)} ms, 32,000: ${big.toFixed(1)} ms`);
  });
});

it('compares and reports merge keys nested as deep as a request may nest them', () => {
  let deepKey: unknown = 'x';
  for (let i = 0; i < 9990; i++) deepKey = { a: deepKey };
  const live = { spec: { template: { spec: { containers: [{ name: 'a', image: 'x' }] } } } };
  const out = applyStrategicMergePatch(live, { spec: { template: { spec: { containers: [{ name: deepKey, image: 'y' }] } } } }, 'apps/v1.Deployment') as any;
  assert.equal(out.spec.template.spec.containers.length, 2);
  let deepList: unknown = 1;
  for (let i = 0; i < 9990; i++) deepList = [deepList];
  assert.throws(() => applyStrategicMergePatch(live, { spec: { template: { spec: { containers: [{ name: 'b' }, deepList] } } } }, 'apps/v1.Deployment'), (e: unknown) => e instanceof StrategicMergePatchError && e.message.startsWith('invalid value [[[['));
  // Directives whose values nest deep: refused with mergepatch's errors, never a stack overflow.
  const refused = (patch: unknown, message: RegExp) => assert.throws(() => applyStrategicMergePatch(live, patch, 'apps/v1.Deployment'), (e: unknown) => e instanceof StrategicMergePatchError && message.test(e.message));
  refused({ $retainKeys: deepList }, /^invalid patch format of retainKeys$/);
  refused({ $patch: deepList }, /^unknown patch type: \[\[\[/);
  refused({ spec: { $patch: deepList } }, /^unknown patch type: \[\[\[/);
  refused({ spec: { template: { spec: { containers: [{ name: 'c', $patch: deepList }] } } } }, /^unknown patch type: \[\[\[/);
  refused({ spec: { $retainKeys: ['replicas'], paused: true } }, /^patch content doesn't match retainKeys list$/);
});

describe('values the original lacks', () => {
  const DEPLOYMENT = 'apps/v1.Deployment';
  it('takes them as the patch has them, less null entries and every map that carries a directive', () => {
    const base = { metadata: { name: 'd' }, spec: { template: { spec: { containers: [{ name: 'c', image: 'x' }] } } } };
    // Upstream's removeDirectives: `$patch: merge` under a missing key is no error; the map is dropped.
    const out = applyStrategicMergePatch(base, { metadata: { annotations: { $patch: 'merge', a: 'b' } } }, DEPLOYMENT) as any;
    assert.equal('annotations' in out.metadata, false);
    const affinity = applyStrategicMergePatch(base, { spec: { template: { spec: { affinity: { nodeAffinity: { $patch: 'replace' }, podAffinity: { x: null } } } } } }, DEPLOYMENT) as any;
    assert.deepEqual(affinity.spec.template.spec.affinity, { podAffinity: {} });
    const tolerations = applyStrategicMergePatch(base, { spec: { template: { spec: { tolerations: [{ $patch: 'merge', key: 'a' }, { key: 'b' }] } } } }, DEPLOYMENT) as any;
    assert.deepEqual(tolerations.spec.template.spec.tolerations, [{ key: 'b' }]);
    // Another kind in the original (a string where the patch has a map) is replaced the same way.
    const mismatch = applyStrategicMergePatch({ spec: { x: 'text' } }, { spec: { x: { $patch: 'delete' }, y: { z: { $patch: 'merge' }, w: 1 } } }) as any;
    assert.deepEqual(mismatch, { spec: { y: { w: 1 } } });
    // A list entry the list lacks is appended as the patch has it.
    const added = applyStrategicMergePatch(base, { spec: { template: { spec: { containers: [{ name: 'd', image: 'y' }] } } } }, DEPLOYMENT) as any;
    assert.deepEqual(added.spec.template.spec.containers, [{ name: 'c', image: 'x' }, { name: 'd', image: 'y' }]);
  });

  it('copies a value nested 10,000 levels deep without recursion, and leaves the patch as it was', () => {
    let deep: any = { $patch: 'merge' };
    for (let i = 0; i < 10_000; i++) deep = { a: deep, n: null };
    const patch = { spec: deep };
    const text = stringifyJson(patch);
    let out = (applyStrategicMergePatch({}, patch) as any).spec;
    let depth = 0;
    while (out.a) {
      assert.equal('n' in out, false);
      out = out.a;
      depth++;
    }
    assert.equal(depth, 9_999, 'the innermost map was a directive');
    assert.equal(stringifyJson(patch), text);
  });
});
