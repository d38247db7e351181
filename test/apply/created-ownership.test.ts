import { test } from 'node:test';
import assert from 'node:assert/strict';
import { shapeKey } from '../../src/apply/created-ownership.js';
import { resetFieldsFor, updateManagedFields, type FieldManagerOptions } from '../../src/apply/field-manager.js';
import { GV, TYPE, widget, type Obj } from './harness.js';

const NOW = new Date(Date.UTC(2024, 0, 1));
const opts = (extra: Partial<FieldManagerOptions> = {}): FieldManagerOptions => ({ type: TYPE, apiVersion: GV, now: NOW, ...extra });

/** The create path (remembered by shape) and the general update path from nothing must record the same entries. */
function bothWays(obj: Obj, extra: Partial<FieldManagerOptions> = {}): [unknown, unknown] {
  const created = updateManagedFields(undefined, structuredClone(obj), 'creator', opts(extra));
  const computed = updateManagedFields({}, structuredClone(obj), 'creator', opts(extra));
  return [created.metadata?.managedFields, computed.metadata?.managedFields];
}

test('shapeKey: scalar values do not count, their kinds, map keys and list items do', () => {
  assert.equal(shapeKey({ a: 'x', b: 1, c: { d: true } }), shapeKey({ a: 'yyy', b: 2.5, c: { d: false } }));
  assert.notEqual(shapeKey({ a: 'x' }), shapeKey({ a: 1 }));
  assert.notEqual(shapeKey({ a: null }), shapeKey({ a: {} }));
  assert.notEqual(shapeKey({ a: ['x'] }), shapeKey({ a: ['y'] }));
  assert.notEqual(shapeKey({ 'a:b': 1 }), shapeKey({ a: { b: 1 } }));
  assert.notEqual(shapeKey({ ab: 1 }), shapeKey({ a: 1, b: 1 }));
  assert.equal(shapeKey({ big: 'x'.repeat(10_000) }), shapeKey({ big: '' }));
  assert.equal(shapeKey({ list: Array.from({ length: 2000 }, (_, i) => `item-${i}`) }), undefined);
});

test('creates shaped alike record what each one sets, as the general path computes it', () => {
  const cases: Obj[] = [
    widget({ replicas: 1, image: 'a', containers: [{ name: 'c', image: 'i' }] }, { labels: { app: 'a' } }),
    widget({ replicas: 7, image: 'b', containers: [{ name: 'c', image: 'j' }] }, { labels: { app: 'b' } }),
    widget({ replicas: 7, image: 'b', containers: [{ name: 'd', image: 'j' }] }, { labels: { app: 'b' } }),
    widget({ replicas: 7, image: 'b', containers: [{ name: 'd', image: 'j' }] }, { labels: { tier: 'b' } }),
    widget({ replicas: 7, tags: ['x', 'y'], extra: { anything: { deep: 1 } } }),
    widget({ replicas: 7, tags: ['x', 'z'], extra: { anything: { deep: 'one' } } }),
    widget({ config: {} }, {}, { status: { phase: 'Running' } }),
    widget({ config: { k: 'v' } }, {}, { status: { phase: 'Pending' } }),
  ];
  for (const extra of [{}, { resetFields: resetFieldsFor({ hasStatusSubresource: true }) }, { subresource: 'status', resetFields: resetFieldsFor({ hasStatusSubresource: true, subresource: 'status' }) }]) {
    for (const obj of [...cases, ...cases]) {
      const [created, computed] = bothWays(obj, extra);
      assert.deepEqual(created, computed, JSON.stringify({ obj, extra }));
    }
  }
  const [first] = bothWays(cases[1]);
  const [other] = bothWays(cases[2]);
  assert.match(JSON.stringify(first), /k:\{\\"name\\":\\"c\\"\}/);
  assert.match(JSON.stringify(other), /k:\{\\"name\\":\\"d\\"\}/);
});

test('a create that does not fit the type records no managedFields, after one of its kind that did', () => {
  const fits = widget({ replicas: 1 });
  const [ok] = bothWays(fits);
  assert.ok(Array.isArray(ok));
  const [none, computed] = bothWays(widget({ replicas: 'one' }));
  assert.equal(none, undefined);
  assert.equal(computed, undefined);
});
