/** shareUnchanged: an updated object shares what did not change with the cached object it replaces. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deepClone } from '../../src/machinery/json.js';
import { shareUnchanged } from '../../src/registry/share-unchanged.js';

const cached = () => ({
  apiVersion: 'stable.example.com/v1',
  kind: 'CronTab',
  metadata: { name: 'a', labels: { app: 'x' }, managedFields: [{ manager: 'm', time: 't1' }, { manager: 'n', time: 't1' }] },
  spec: { cronSpec: '* * * * */5', replicas: 1, list: [{ a: 1 }, { b: 2 }] },
  status: { phase: 'Pending' },
});

test('unchanged members point at the old values; changed ones stay the new object’s own', () => {
  const old = cached();
  const next = deepClone(old);
  next.status.phase = 'Running';
  next.metadata.managedFields[1].time = 't2';
  next.spec.list[1] = { b: 3 };
  assert.equal(shareUnchanged(next, old), false);
  assert.equal(next.metadata.labels, old.metadata.labels);
  assert.equal(next.metadata.managedFields[0], old.metadata.managedFields[0]);
  assert.notEqual(next.metadata.managedFields[1], old.metadata.managedFields[1]);
  assert.equal(next.spec.list[0], old.spec.list[0]);
  assert.notEqual(next.spec, old.spec);
  assert.notEqual(next.status, old.status);
  // The values are those of the update.
  assert.deepEqual(next.status, { phase: 'Running' });
  assert.deepEqual(next.spec.list, [{ a: 1 }, { b: 3 }]);
  assert.deepEqual(old, cached());
});

test('an equal object is reported equal, and its metadata stays its own', () => {
  const old = cached();
  const next = deepClone(old);
  assert.equal(shareUnchanged(next, old), true);
  assert.notEqual(next.metadata, old.metadata);
  assert.equal(next.spec, old.spec);
  assert.equal(next.metadata.managedFields, old.metadata.managedFields);
  next.metadata.name = 'changed';
  assert.equal(old.metadata.name, 'a');
});

test('added and removed members make the objects differ; members holding undefined do not', () => {
  const old: Record<string, unknown> = cached();
  const added: Record<string, unknown> = { ...deepClone(old), extra: 1 };
  assert.equal(shareUnchanged(added, old), false);
  const removed: Record<string, unknown> = deepClone(old);
  delete removed.status;
  assert.equal(shareUnchanged(removed, old), false);
  const withUndefined: Record<string, unknown> = { ...deepClone(old), extra: undefined };
  assert.equal(shareUnchanged(withUndefined, old), true);
  const longer = deepClone(old) as ReturnType<typeof cached>;
  longer.spec.list.push({ a: 1 });
  assert.equal(shareUnchanged(longer, old), false);
  assert.equal(longer.spec.list.length, 3);
});

test('frozen values (shared fieldsV1 sets) are compared whole, never written into', () => {
  const set = (f: string) => Object.freeze({ [f]: Object.freeze({ '.': Object.freeze({}) }) });
  const old = { metadata: { managedFields: [{ manager: 'm', fieldsV1: set('f:a') }] }, spec: {} };
  const sameSet = { metadata: { managedFields: [{ manager: 'm', fieldsV1: set('f:a') }] }, spec: {} };
  assert.equal(shareUnchanged(sameSet, old), true);
  assert.equal(sameSet.metadata.managedFields, old.metadata.managedFields);
  const otherSet = { metadata: { managedFields: [{ manager: 'm', fieldsV1: set('f:b') }] }, spec: {} };
  assert.equal(shareUnchanged(otherSet, old), false);
  assert.deepEqual(Object.keys(otherSet.metadata.managedFields[0].fieldsV1), ['f:b']);
});
