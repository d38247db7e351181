import { test } from 'node:test';
import assert from 'node:assert/strict';
import { updateManagedFields } from '../../src/apply/field-manager.js';
import { BUILTIN_OBJECT } from '../../src/apply/types.js';
import { deepClone } from '../../src/machinery/json.js';
import { apply, create, GV, owners, tick, TYPE, update, widget, type Obj } from './harness.js';

test('create records the creator; a PUT by one manager then an apply by another gives two entries', () => {
  let obj = create(widget({ replicas: 1, containers: [{ name: 'c', image: 'i' }] }, { labels: { app: 'a' } }), 'kubectl-create');
  assert.deepEqual(owners(obj), [
    'kubectl-create/Update: {"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{".":{},"f:containers":{".":{},"k:{\\"name\\":\\"c\\"}":{".":{},"f:image":{},"f:name":{}}},"f:replicas":{}}}',
  ]);
  const [entry] = obj.metadata.managedFields;
  assert.deepEqual(Object.keys(entry), ['manager', 'operation', 'apiVersion', 'time', 'fieldsType', 'fieldsV1']);
  obj = update(obj, (o) => (o.spec.image = 'x'), 'kubectl-replace');
  obj = apply(obj, widget({ hostname: 'h' }), 'applier');
  assert.deepEqual(
    obj.metadata.managedFields.map((e: Obj) => `${e.manager}/${e.operation}`),
    ['applier/Apply', 'kubectl-create/Update', 'kubectl-replace/Update'],
  );
});

test('updates by the same manager merge into one entry with the latest time; other versions and subresources are separate', () => {
  let obj = apply(undefined, widget({ replicas: 1 }, { labels: { 'test-label': 'test' } }), 'apply_test');
  obj = update(obj, (o) => (o.spec.config = { 'new-key': 'value' }), 'updater');
  const first = obj.metadata.managedFields[1].time;
  obj = update(obj, (o) => (o.spec.config.key = 'new value'), 'updater');
  assert.deepEqual(owners(obj), [
    'apply_test/Apply: {"f:metadata":{"f:labels":{"f:test-label":{}}},"f:spec":{"f:replicas":{}}}',
    'updater/Update: {"f:spec":{"f:config":{".":{},"f:key":{},"f:new-key":{}}}}',
  ]);
  assert.notEqual(obj.metadata.managedFields[1].time, first);
  obj = update(obj, (o) => (o.spec.image = 'v2'), 'updater', { apiVersion: 'example.com/v2' });
  obj = update(obj, (o) => (o.status = { phase: 'Running' }), 'updater', { subresource: 'status' });
  assert.deepEqual(
    obj.metadata.managedFields.map((e: Obj) => [e.manager, e.apiVersion, e.subresource ?? '']),
    [
      ['apply_test', GV, ''],
      ['updater', GV, ''],
      ['updater', 'example.com/v2', ''],
      ['updater', GV, 'status'],
    ],
  );
});

test('an update that changes nothing keeps entries and times', () => {
  const obj = create(widget({ replicas: 1 }), 'creator');
  const same = update(obj, (o) => (o.metadata.resourceVersion = '5'), 'someone');
  assert.deepEqual(same.metadata.managedFields, obj.metadata.managedFields);
});

test('a client clears managedFields with [] or [{}]; tracking then waits for an apply', () => {
  const obj = apply(undefined, widget({ replicas: 1 }, { labels: { 'test-label': 'test' } }), 'apply_test');
  for (const reset of [[], [{}]]) {
    const cleared = update(obj, (o) => (o.metadata.managedFields = reset), 'kubectl');
    assert.equal(cleared.metadata.managedFields, undefined);
    const later = update(cleared, (o) => (o.metadata.labels['test-label'] = 'v1'), 'kubectl');
    assert.equal(later.metadata.managedFields, undefined);
    const applied = apply(later, widget({ image: 'x' }), 'applier');
    assert.deepEqual(
      applied.metadata.managedFields.map((e: Obj) => e.manager),
      ['applier', 'before-first-apply'],
    );
  }
});

test('managedFields the client sends are used when valid, ignored when not, and ignored on subresources', () => {
  let obj = apply(undefined, widget(undefined, { labels: { a: 'one' } }), 'multi_manager_one');
  obj = apply(obj, { apiVersion: GV, kind: 'Widget', metadata: { labels: { b: 'two' } } }, 'multi_manager_two');
  // Two apply entries renamed to the same manager collapse: the last one wins.
  const renamed = update(obj, (o) => o.metadata.managedFields.forEach((e: Obj) => (e.manager = 'multi_manager')), 'kubectl');
  assert.deepEqual(owners(renamed), ['multi_manager/Apply: {"f:metadata":{"f:labels":{"f:b":{}}}}']);

  for (const bad of [
    [{ manager: 'x', operation: 'Apply', apiVersion: 'v1', time: '2019-07-08T09:31:18Z', fieldsType: '', fieldsV1: {} }],
    [{ manager: 'x', operation: 'Patch', apiVersion: 'v1', fieldsType: 'FieldsV1' }],
    [{ manager: 'x', operation: 'Update', fieldsType: 'FieldsV1' }],
    [{ manager: 'x', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { nope: {} } }],
  ]) {
    const kept = update(obj, (o) => (o.metadata.managedFields = bad), 'kubectl');
    assert.deepEqual(kept.metadata.managedFields, obj.metadata.managedFields);
  }

  const viaStatus = update(
    obj,
    (o) => {
      o.metadata.managedFields = [{ manager: 'testing', operation: 'Update', apiVersion: GV, fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': {} } }];
      o.status = { phase: 'x' };
    },
    'status_updater',
    { subresource: 'status' },
  );
  assert.deepEqual(viaStatus.metadata.managedFields.slice(0, 2), obj.metadata.managedFields);
  assert.equal(viaStatus.metadata.managedFields[2].manager, 'status_updater');
});

test('entries with client-chosen times are normalized and sorted as upstream sorts them', () => {
  const obj = create(widget({ replicas: 1 }), 'c');
  const set = update(
    obj,
    (o) =>
      (o.metadata.managedFields = [
        { manager: 'b', operation: 'Update', apiVersion: GV, time: '2020-01-01T01:00:00+01:00', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:replicas': {} } } },
        { manager: 'a', operation: 'Update', apiVersion: GV, time: '2020-01-01T00:00:00Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:image': {} } } },
        { manager: 'z', operation: 'Apply', apiVersion: GV, time: '2021-01-01T00:00:00Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:hostname': {} } } },
      ]),
    'kubectl',
  );
  assert.deepEqual(
    set.metadata.managedFields.map((e: Obj) => [e.manager, e.time]),
    [
      ['z', '2021-01-01T00:00:00Z'],
      ['a', '2020-01-01T00:00:00Z'],
      ['b', '2020-01-01T00:00:00Z'],
    ],
  );
});

test('at most 10 update entries: the oldest merge into ancient-changes', () => {
  let obj = apply(undefined, widget(undefined, { labels: { applier: 'true' } }), 'apply_test');
  for (let i = 0; i < 20; i++) obj = update(obj, (o) => (o.metadata.labels[`updater${i}`] = 'new'), `updater${i}`);
  const mf = obj.metadata.managedFields;
  assert.equal(mf.length, 11);
  assert.equal(mf[0].manager, 'apply_test');
  const ancient = mf.find((e: Obj) => e.manager === 'ancient-changes');
  assert.ok(ancient);
  // updater0..updater10: the first of the version, then one more each time the cap is passed.
  assert.equal(Object.keys(ancient.fieldsV1['f:metadata']['f:labels']).length, 11);
  assert.deepEqual(
    mf.slice(1).map((e: Obj) => e.manager),
    ['ancient-changes', ...Array.from({ length: 9 }, (_, i) => `updater${i + 11}`)],
  );
});

test('object metadata and type fields are never owned; a manager name defaults to "unknown"', () => {
  const obj = updateManagedFields(undefined, widget(undefined, { uid: 'x', resourceVersion: '1', generation: 1 }), '', { type: TYPE, apiVersion: GV, now: tick() });
  assert.equal(obj.metadata.managedFields, undefined);
  const labeled = updateManagedFields(undefined, widget(undefined, { labels: { a: 'b' } }), '', { type: TYPE, apiVersion: GV, now: tick() });
  assert.equal(labeled.metadata.managedFields[0].manager, 'unknown');
});

test('duplicates in associative lists are owned as single members', () => {
  const obj = create(widget({ tags: ['a', 'b', 'b'], containers: [{ name: 'x', image: '1' }, { name: 'x', image: '2' }] }), 'create');
  assert.deepEqual(owners(obj), [
    'create/Update: {"f:spec":{".":{},"f:containers":{".":{},"k:{\\"name\\":\\"x\\"}":{}},"f:tags":{".":{},"v:\\"a\\"":{},"v:\\"b\\"":{}}}}',
  ]);
  const fixed = update(obj, (o) => (o.spec.containers = [{ name: 'x', image: '3' }]), 'fixer');
  assert.deepEqual(owners(fixed)[1], 'fixer/Update: {"f:spec":{"f:containers":{"k:{\\"name\\":\\"x\\"}":{".":{},"f:image":{},"f:name":{}}}}}');
});

test('built-in objects: typed ObjectMeta (finalizers set, ownerReferences by uid), the rest deduced', () => {
  const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', finalizers: ['f1'], ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'p', uid: 'u1' }] }, data: { k: 'v' } };
  const obj = updateManagedFields(undefined, structuredClone(cm), 'creator', { type: BUILTIN_OBJECT, apiVersion: 'v1', now: tick() });
  assert.deepEqual(
    JSON.stringify(obj.metadata.managedFields[0].fieldsV1),
    '{"f:data":{".":{},"f:k":{}},"f:metadata":{"f:finalizers":{".":{},"v:\\"f1\\"":{}},"f:ownerReferences":{".":{},"k:{\\"uid\\":\\"u1\\"}":{}}}}',
  );
});

test('an object that does not fit its type keeps the live managedFields', () => {
  const obj = create(widget({ replicas: 1 }), 'creator');
  const bad = update(obj, (o) => (o.spec.replicas = 'many'), 'x');
  assert.deepEqual(bad.metadata.managedFields, obj.metadata.managedFields);
  const created = updateManagedFields(undefined, widget({ nope: true }), 'x', { type: TYPE, apiVersion: GV });
  assert.equal(created.metadata.managedFields, undefined);
});

test('entries are frozen, and copies that share them (as the store copies objects) give the same ownership as fresh ones', () => {
  const obj = create(widget({ replicas: 1, image: 'i' }), 'creator');
  const o = { type: TYPE, apiVersion: GV, now: tick() };
  // Two writes in the same second by one manager of the same field, once on copies that share
  // the entries (deepClone) and once on fresh copies (structuredClone): the entries must agree.
  const shared = (live: Obj, replicas: number) => {
    const next = deepClone(live);
    next.spec.replicas = replicas;
    return updateManagedFields(live, next, 'scaler', o);
  };
  const fresh = (live: Obj, replicas: number) => {
    const next = structuredClone(live);
    next.spec.replicas = replicas;
    return updateManagedFields(structuredClone(live), next, 'scaler', o);
  };
  const a1 = shared(obj, 2);
  const a2 = shared(a1, 3);
  const b2 = fresh(fresh(obj, 2), 3);
  assert.deepEqual(owners(a2), owners(b2));
  assert.deepEqual(owners(a2), [
    'creator/Update: {"f:spec":{".":{},"f:image":{}}}',
    'scaler/Update: {"f:spec":{"f:replicas":{}}}',
  ]);
  assert.ok(a2.metadata.managedFields.every((e: Obj) => Object.isFrozen(e)));
  // Nothing changed for either manager between the two writes: the entries are the ones made before.
  assert.equal(a2.metadata.managedFields[0], a1.metadata.managedFields[0]);
  assert.equal(a2.metadata.managedFields[1], a1.metadata.managedFields[1]);
  // A later write by the scaler moves its time, and only its entry is new.
  const a3 = updateManagedFields(a2, Object.assign(deepClone(a2), { spec: { ...a2.spec, replicas: 4 } }), 'scaler', { ...o, now: tick(5) });
  assert.equal(a3.metadata.managedFields[0], a2.metadata.managedFields[0]);
  assert.notEqual(a3.metadata.managedFields[1].time, a2.metadata.managedFields[1].time);
});
