import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resetFieldsFor } from '../../src/apply/field-manager.js';
import { typeFromSchema } from '../../src/apply/schema-types.js';
import { apply, applyError, create, GV, owners, update, widget, type Obj } from './harness.js';

const K_NGINX = 'k:{\\"name\\":\\"nginx\\"}';

test('apply creates the object and records the applier', () => {
  const obj = apply(undefined, widget({ replicas: 1, containers: [{ name: 'nginx', image: 'nginx:1' }] }, { labels: { app: 'a' } }), 'apply_test');
  assert.deepEqual(obj.spec, { replicas: 1, containers: [{ name: 'nginx', image: 'nginx:1' }] });
  assert.deepEqual(owners(obj), [
    `apply_test/Apply: {"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:containers":{"${K_NGINX}":{".":{},"f:image":{},"f:name":{}}},"f:replicas":{}}}`,
  ]);
  const [entry] = obj.metadata.managedFields;
  assert.deepEqual(Object.keys(entry), ['manager', 'operation', 'apiVersion', 'time', 'fieldsType', 'fieldsV1']);
  assert.equal(entry.apiVersion, GV);
  assert.equal(entry.fieldsType, 'FieldsV1');
  assert.match(entry.time, /^2024-01-01T00:00:\d\dZ$/);
});

test('two managers fighting over a field: conflict, then force takes ownership', () => {
  let obj = apply(undefined, widget({ replicas: 1, image: 'a' }), 'alice');
  const err = applyError(obj, widget({ replicas: 2 }), 'bob');
  assert.equal(err.code, 409);
  assert.equal(err.reason, 'Conflict');
  assert.equal(err.message, 'Apply failed with 1 conflict: conflict with "alice": .spec.replicas');
  assert.deepEqual(err.details, { causes: [{ reason: 'FieldManagerConflict', message: 'conflict with "alice"', field: '.spec.replicas' }] });

  // The same value is no conflict: ownership is shared. As upstream, an apply that changes
  // nothing records no time, so that entry sorts first.
  const shared = apply(obj, widget({ replicas: 1 }), 'carol');
  assert.deepEqual(owners(shared), ['carol/Apply: {"f:spec":{"f:replicas":{}}}', 'alice/Apply: {"f:spec":{"f:image":{},"f:replicas":{}}}']);
  assert.equal(shared.metadata.managedFields[0].time, undefined);

  obj = apply(obj, widget({ replicas: 2 }), 'bob', { force: true });
  assert.equal(obj.spec.replicas, 2);
  assert.deepEqual(owners(obj), ['alice/Apply: {"f:spec":{"f:image":{}}}', 'bob/Apply: {"f:spec":{"f:replicas":{}}}']);
});

test('an update (PUT, merge patch) by another manager, then the applier re-applies: conflict naming the updater and its apiVersion', () => {
  let obj = apply(undefined, widget({ replicas: 3, image: 'nginx' }), 'apply_test');
  obj = update(obj, (o) => (o.spec.replicas = 5), 'kubectl-edit');
  assert.deepEqual(owners(obj), ['apply_test/Apply: {"f:spec":{"f:image":{}}}', 'kubectl-edit/Update: {"f:spec":{"f:replicas":{}}}']);
  const err = applyError(obj, widget({ replicas: 3, image: 'nginx' }), 'apply_test');
  assert.equal(err.message, `Apply failed with 1 conflict: conflict with "kubectl-edit" using ${GV}: .spec.replicas`);
  assert.deepEqual(err.details?.causes, [{ reason: 'FieldManagerConflict', message: `conflict with "kubectl-edit" using ${GV}`, field: '.spec.replicas' }]);
  obj = apply(obj, widget({ replicas: 3, image: 'nginx' }), 'apply_test', { force: true });
  assert.equal(obj.spec.replicas, 3);
  assert.deepEqual(owners(obj), ['apply_test/Apply: {"f:spec":{"f:image":{},"f:replicas":{}}}']);
});

test('removing a field from the applied configuration removes it when the applier owned it alone', () => {
  let obj = apply(undefined, widget({ replicas: 3, hostname: 'h', containers: [{ name: 'nginx', image: 'i', ports: [{ containerPort: 80 }] }] }), 'apply_test');
  obj = apply(obj, widget({ containers: [{ name: 'nginx', image: 'i' }] }), 'apply_test');
  assert.deepEqual(obj.spec, { containers: [{ name: 'nginx', image: 'i' }] });
  assert.deepEqual(owners(obj), [`apply_test/Apply: {"f:spec":{"f:containers":{"${K_NGINX}":{".":{},"f:image":{},"f:name":{}}}}}`]);
});

test('removing a field from the applied configuration keeps it when another manager also owns it', () => {
  const config = widget({ replicas: 3, hostname: 'test-hostname', image: 'i' });
  let obj = apply(undefined, config, 'shared_owner_1');
  obj = apply(obj, config, 'shared_owner_2');
  obj = apply(obj, widget({ image: 'i' }), 'shared_owner_1');
  assert.deepEqual(obj.spec, { replicas: 3, hostname: 'test-hostname', image: 'i' });
  assert.deepEqual(owners(obj), [
    'shared_owner_2/Apply: {"f:spec":{"f:hostname":{},"f:image":{},"f:replicas":{}}}',
    'shared_owner_1/Apply: {"f:spec":{"f:image":{}}}',
  ]);
});

test('ownership moves to a controller that updates a field; the applier can then omit it', () => {
  let obj = apply(undefined, widget({ replicas: 3, image: 'i' }), 'test_applier');
  obj = update(obj, (o) => (o.spec.replicas = 4), 'test_updater');
  obj = apply(obj, widget({ image: 'i' }), 'test_applier');
  assert.equal(obj.spec.replicas, 4);
});

test('an applier removes a map-list item even though a controller changed a field in it', () => {
  let obj = apply(undefined, widget({ containers: [{ name: 'nginx', image: 'nginx:latest' }] }), 'test_applier');
  obj = update(obj, (o) => (o.spec.containers[0].workingDir = '/home/replacement'), 'test_updater');
  assert.deepEqual(owners(obj), [
    `test_applier/Apply: {"f:spec":{"f:containers":{"${K_NGINX}":{".":{},"f:image":{},"f:name":{}}}}}`,
    `test_updater/Update: {"f:spec":{"f:containers":{"${K_NGINX}":{"f:workingDir":{}}}}}`,
  ]);
  obj = apply(obj, widget({ containers: [{ name: 'other-container', image: 'nginx:latest' }] }), 'test_applier');
  assert.deepEqual(obj.spec.containers, [{ name: 'other-container', image: 'nginx:latest' }]);
});

test('set lists merge by value; an applier removes only its own values', () => {
  let obj = apply(undefined, widget({ tags: ['a', 'b'] }), 'alice');
  obj = apply(obj, widget({ tags: ['c'] }), 'bob');
  assert.deepEqual(obj.spec.tags, ['a', 'b', 'c']);
  assert.deepEqual(owners(obj), ['alice/Apply: {"f:spec":{"f:tags":{"v:\\"a\\"":{},"v:\\"b\\"":{}}}}', 'bob/Apply: {"f:spec":{"f:tags":{"v:\\"c\\"":{}}}}']);
  obj = apply(obj, widget({ tags: ['a'] }), 'alice');
  assert.deepEqual(obj.spec.tags, ['a', 'c']);
});

test('atomic lists are replaced whole and owned whole', () => {
  let obj = apply(undefined, widget({ args: ['x', 'y'] }), 'alice');
  assert.deepEqual(owners(obj), ['alice/Apply: {"f:spec":{"f:args":{}}}']);
  const err = applyError(obj, widget({ args: ['z'] }), 'bob');
  assert.equal(err.message, 'Apply failed with 1 conflict: conflict with "alice": .spec.args');
  obj = apply(obj, widget({ args: ['z'] }), 'bob', { force: true });
  assert.deepEqual(obj.spec.args, ['z']);
  assert.deepEqual(owners(obj), ['bob/Apply: {"f:spec":{"f:args":{}}}']);
});

test('map lists merge items by key, with defaulted key fields', () => {
  let obj = apply(undefined, widget({ containers: [{ name: 'a', image: 'a1', ports: [{ containerPort: 80 }] }] }), 'alice');
  obj = apply(obj, widget({ containers: [{ name: 'b', image: 'b1' }] }), 'bob');
  assert.deepEqual(obj.spec.containers, [
    { name: 'a', image: 'a1', ports: [{ containerPort: 80 }] },
    { name: 'b', image: 'b1' },
  ]);
  assert.deepEqual(owners(obj)[0], 'alice/Apply: {"f:spec":{"f:containers":{"k:{\\"name\\":\\"a\\"}":{".":{},"f:image":{},"f:name":{},"f:ports":{"k:{\\"containerPort\\":80,\\"protocol\\":\\"TCP\\"}":{".":{},"f:containerPort":{}}}}}}}');
  const err = applyError(obj, widget({ containers: [{ name: 'a', image: 'a2' }] }), 'bob');
  assert.equal(err.message, 'Apply failed with 1 conflict: conflict with "alice": .spec.containers[name="a"].image');
});

test('atomic maps conflict as a whole; granular maps merge key by key', () => {
  let obj = apply(undefined, widget({ selector: { a: '1' }, config: { a: '1' } }), 'alice');
  obj = apply(obj, widget({ config: { b: '2' } }), 'bob');
  assert.deepEqual(obj.spec.config, { a: '1', b: '2' });
  const err = applyError(obj, widget({ selector: { b: '2' } }), 'bob');
  assert.equal(err.message, 'Apply failed with 1 conflict: conflict with "alice": .spec.selector');
  obj = apply(obj, widget({ selector: { b: '2' }, config: { b: '2' } }), 'bob', { force: true });
  assert.deepEqual(obj.spec.selector, { b: '2' });
  assert.deepEqual(owners(obj), ['alice/Apply: {"f:spec":{"f:config":{"f:a":{}}}}', 'bob/Apply: {"f:spec":{"f:config":{"f:b":{}},"f:selector":{}}}']);
});

test('preserve-unknown-fields subtrees: unknown maps granular (each key owned), unknown lists atomic', () => {
  let obj = apply(undefined, widget({ extra: { foo: { bar: 1 }, list: [1, 2] } }), 'alice');
  assert.deepEqual(owners(obj), ['alice/Apply: {"f:spec":{"f:extra":{"f:foo":{".":{},"f:bar":{}},"f:list":{}}}}']);
  obj = apply(obj, widget({ extra: { foo: { baz: 2 } } }), 'bob');
  assert.deepEqual(obj.spec.extra, { foo: { bar: 1, baz: 2 }, list: [1, 2] });
  const err = applyError(obj, widget({ extra: { list: [3] } }), 'bob');
  assert.equal(err.message, 'Apply failed with 1 conflict: conflict with "alice": .spec.extra.list');
});

test('a schemaless (preserve-unknown root) custom resource and the scale subresource (SC-08)', () => {
  const type = typeFromSchema({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
  const cr = { apiVersion: GV, kind: 'Widget', metadata: { name: 'foo', namespace: 'ns' }, spec: { num: 10 } };
  let obj = create(cr, 'integration.test', { type });
  obj = apply(obj, { apiVersion: GV, kind: 'Widget', metadata: { name: 'foo' }, spec: { replicas: 3 } }, 'applier', { type });
  assert.equal(obj.metadata.managedFields.length, 2);
  // A merge patch of /scale, as the scale handler applies it to the custom resource.
  obj = update(obj, (o) => (o.spec.replicas = 5), 'scaler', { type, subresource: 'scale' });
  const mf = obj.metadata.managedFields;
  assert.deepEqual(
    mf.map((e: Obj) => [e.manager, e.operation, e.apiVersion, JSON.stringify(e.fieldsV1), e.subresource ?? '']),
    [
      ['applier', 'Apply', GV, '{"f:spec":{}}', ''],
      ['scaler', 'Update', GV, '{"f:spec":{"f:replicas":{}}}', 'scale'],
      ['integration.test', 'Update', GV, '{"f:spec":{".":{},"f:num":{}}}', ''],
    ],
  );
  assert.equal(mf[1].time, undefined);
  const err = applyError(obj, { apiVersion: GV, kind: 'Widget', metadata: { name: 'foo' }, spec: { replicas: 3 } }, 'applier', { type });
  assert.equal(err.message, `Apply failed with 1 conflict: conflict with "scaler" with subresource "scale" using ${GV}: .spec.replicas`);
});

test('status: the main endpoint does not own status, /status owns nothing else', () => {
  const main = resetFieldsFor({ hasStatusSubresource: true });
  const status = resetFieldsFor({ hasStatusSubresource: true, subresource: 'status' });
  let obj = apply(undefined, widget({ replicas: 1 }, {}, { status: { phase: 'ignored' } }), 'alice', { resetFields: main });
  assert.deepEqual(owners(obj), ['alice/Apply: {"f:spec":{"f:replicas":{}}}']);
  obj = apply(obj, widget({ replicas: 7 }, { labels: { x: 'y' } }, { status: { replicas: 1 } }), 'controller', { subresource: 'status', resetFields: status, force: true });
  assert.deepEqual(owners(obj)[1], 'controller/Apply/status: {"f:status":{"f:replicas":{}}}');
  const err = applyError(obj, widget(undefined, {}, { status: { replicas: 2 } }), 'other', { subresource: 'status', resetFields: status });
  assert.equal(err.message, 'Apply failed with 1 conflict: conflict with "controller" with subresource "status": .status.replicas');
});

test('several conflicts are grouped by manager, managers sorted', () => {
  let obj = apply(undefined, widget({ replicas: 1, image: 'a', hostname: 'h' }), 'zed');
  obj = update(obj, (o) => (o.spec.tags = ['t']), 'alpha');
  const err = applyError(obj, widget({ replicas: 2, image: 'b', tags: ['u'], hostname: 'h' }), 'me');
  assert.equal(
    err.message,
    `Apply failed with 2 conflicts: conflicts with "zed":\n- .spec.image\n- .spec.replicas`,
  );
  const err2 = applyError(obj, widget({ replicas: 2, image: 'b', tags: 'x' as unknown as string[] }), 'me');
  assert.equal(err2.code, 400);
  const err3 = applyError(obj, widget({ replicas: 2, args: ['q'] }), 'me');
  assert.equal(err3.message, 'Apply failed with 1 conflict: conflict with "zed": .spec.replicas');
  obj = update(obj, (o) => (o.spec.args = ['p']), 'alpha');
  const err4 = applyError(obj, widget({ replicas: 2, args: ['q'] }), 'me');
  assert.equal(err4.message, `Apply failed with 2 conflicts: conflicts with "alpha" using ${GV}:\n- .spec.args\nconflicts with "zed":\n- .spec.replicas`);
  assert.deepEqual(
    err4.details?.causes?.map((c) => [c.message, c.field]),
    [
      [`conflict with "alpha" using ${GV}`, '.spec.args'],
      ['conflict with "zed"', '.spec.replicas'],
    ],
  );
});

test('re-applying the same configuration changes nothing', () => {
  const config = widget({ replicas: 1, containers: [{ name: 'nginx', image: 'x' }] }, { labels: { a: 'b' } });
  const obj = apply(undefined, config, 'apply_test');
  const again = apply(obj, config, 'apply_test');
  assert.deepEqual(again, obj);
});

test('an object with no managedFields: existing fields belong to before-first-apply', () => {
  const live = { ...widget({ replicas: 1, image: 'old' }), metadata: { name: 'w', namespace: 'default', uid: 'u1' } };
  const err = applyError(live, widget({ replicas: 2 }), 'applier');
  assert.equal(err.message, `Apply failed with 1 conflict: conflict with "before-first-apply" using ${GV}: .spec.replicas`);
  const obj = apply(live, widget({ replicas: 1, hostname: 'h' }), 'applier');
  assert.deepEqual(owners(obj), ['applier/Apply: {"f:spec":{"f:hostname":{},"f:replicas":{}}}', 'before-first-apply/Update: {"f:spec":{".":{},"f:image":{},"f:replicas":{}}}']);
});

test('applying an empty configuration leaves no entry', () => {
  const obj = apply(undefined, widget(undefined), 'apply_test');
  assert.equal(obj.metadata.managedFields, undefined);
  const again = apply(obj, widget(undefined), 'apply_test');
  assert.equal(again.metadata.managedFields, undefined);
});

test('kubectl takes over from client-side apply without conflicts on what its annotation recorded', () => {
  const lastApplied = JSON.stringify(widget({ replicas: 3, image: 'my-image' }, { labels: { app: 'my-app' } }));
  const created = create(widget({ replicas: 100000, image: 'my-image' }, { labels: { app: 'my-app' }, annotations: { 'kubectl.kubernetes.io/last-applied-configuration': lastApplied } }), 'kubectl-client-side-apply');
  // replicas differs from what the annotation recorded: still a conflict.
  const err = applyError(created, widget({ replicas: 3, image: 'my-image' }, { labels: { app: 'my-new-label' } }), 'kubectl');
  assert.equal(err.code, 409);
  assert.equal(err.message, 'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using example.com/v1: .spec.replicas');
  const obj = apply(created, widget({ image: 'my-image-new' }, { labels: { app: 'my-new-label' } }), 'kubectl');
  assert.equal(obj.spec.replicas, 100000);
  assert.equal(obj.spec.image, 'my-image-new');
  assert.equal(obj.metadata.labels.app, 'my-new-label');
  assert.equal(
    obj.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration'],
    '{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"labels":{"app":"my-new-label"},"name":"w","namespace":"default"},"spec":{"image":"my-image-new"}}\n',
  );
  // Another manager gets no such allowance.
  assert.equal(applyError(created, widget({ image: 'x' }), 'someone').code, 409);
});

test('apply body checks: kind and version, managedFields, schema', () => {
  const live = apply(undefined, widget({ replicas: 1 }), 'a');
  assert.equal(applyError(live, { metadata: { name: 'w' } }, 'a').message, 'invalid object type: /, Kind=');
  assert.equal(applyError(live, { ...widget({}), kind: 'Other' }, 'a').message, 'invalid object type: example.com/v1, Kind=Other');
  assert.equal(applyError(live, { ...widget({}), apiVersion: 'v1' }, 'a').message, 'invalid object type: /v1, Kind=Widget');
  const withMF = applyError(live, widget({}, { managedFields: [] }), 'a');
  assert.equal(withMF.code, 400);
  assert.equal(withMF.message, 'metadata.managedFields must be nil');
  const unknown = applyError(live, widget({ nope: 1 }), 'a');
  assert.equal(unknown.code, 400);
  assert.equal(unknown.message, 'failed to create typed patch object (default/w; example.com/v1, Kind=Widget): .spec.nope: field not declared in schema');
  assert.equal(applyError(live, widget({ replicas: 'x' }), 'a').message, 'failed to create typed patch object (default/w; example.com/v1, Kind=Widget): .spec.replicas: expected numeric (int or float), got string');
  assert.equal(
    applyError(live, widget({ tags: ['a', 'a'] }), 'a').message,
    'failed to create typed patch object (default/w; example.com/v1, Kind=Widget): .spec.tags: duplicate entries for key [="a"]',
  );
  assert.equal(
    applyError(live, widget({}, { bogus: 1 }), 'a').message,
    'failed to create typed patch object (default/w; example.com/v1, Kind=Widget): .metadata.bogus: field not declared in schema',
  );
  // An apply without metadata.name keeps the live name; null metadata members mean unset.
  const kept = apply(live, { apiVersion: GV, kind: 'Widget', metadata: { labels: { b: 'two' }, resourceVersion: null, creationTimestamp: null }, spec: { replicas: 1 } }, 'b');
  assert.equal(kept.metadata.name, 'w');
  assert.equal('resourceVersion' in kept.metadata, false);
  assert.equal('creationTimestamp' in kept.metadata, false); // the store keeps the live one
});

test('the result shares nothing with the inputs', () => {
  const live = apply(undefined, widget({ config: { a: '1' }, containers: [{ name: 'x' }] }), 'a');
  const config = widget({ extra: { deep: { x: 1 } } });
  const out = apply(live, config, 'b');
  out.spec.config.a = 'changed';
  out.spec.extra.deep.x = 2;
  assert.equal(live.spec.config.a, '1');
  assert.deepEqual(config.spec.extra, { deep: { x: 1 } });
});

test('a field that became atomic is owned whole (schema change)', () => {
  const schema = (sel: Obj) => typeFromSchema({ type: 'object', properties: { spec: { type: 'object', properties: { other: { type: 'integer' }, sel } } } });
  const granular = schema({ type: 'object', additionalProperties: { type: 'string' } });
  const atomic = schema({ type: 'object', 'x-kubernetes-map-type': 'atomic', additionalProperties: { type: 'string' } });
  let obj = apply(undefined, widget({ sel: { a: '1' } }), 'alice', { type: granular });
  assert.deepEqual(owners(obj), ['alice/Apply: {"f:spec":{"f:sel":{"f:a":{}}}}']);
  obj = update(obj, (o) => (o.spec.other = 1), 'bob', { type: atomic });
  assert.deepEqual(owners(obj)[0], 'alice/Apply: {"f:spec":{"f:sel":{}}}');
  const err = applyError(obj, widget({ sel: { b: '2' } }), 'carol', { type: atomic });
  assert.equal(err.message, 'Apply failed with 1 conflict: conflict with "alice": .spec.sel');
});
