import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compare } from '../../src/apply/compare.js';
import { pathString } from '../../src/apply/path-element.js';
import { removeItems, ensureNamedFieldsAreMembers } from '../../src/apply/remove.js';
import { FieldSet } from '../../src/apply/field-set.js';
import { fieldElement } from '../../src/apply/path-element.js';
import { toFieldSet, validate, validationMessage } from '../../src/apply/typed.js';
import { BOOLEAN, DEDUCED, NUMERIC, STRING, listType, mapType } from '../../src/apply/types.js';

const ELEMENT = mapType({ name: STRING, value: NUMERIC, flag: BOOLEAN });
const TYPE = mapType({
  spec: mapType({
    n: NUMERIC,
    s: STRING,
    b: BOOLEAN,
    inner: mapType({ x: STRING }),
    items: listType('map', ELEMENT, ['name']),
    set: listType('set', STRING),
    atomic: listType('atomic', STRING),
    any: DEDUCED,
  }),
});

const fv1 = (v: unknown) => JSON.stringify(toFieldSet(v, TYPE).toFieldsV1());

test('ToFieldSet: leaves, null and empty maps, items with their fields, undeclared keys as members', () => {
  assert.equal(fv1({ spec: { n: 1, inner: {}, s: null } }), '{"f:spec":{"f:inner":{},"f:n":{},"f:s":{}}}');
  assert.equal(fv1({ spec: { inner: { x: 'a' } } }), '{"f:spec":{"f:inner":{"f:x":{}}}}');
  assert.equal(fv1({ spec: { items: [{ name: 'a', value: 1 }], set: ['x'], atomic: ['y', 'y'] } }), '{"f:spec":{"f:atomic":{},"f:items":{"k:{\\"name\\":\\"a\\"}":{".":{},"f:name":{},"f:value":{}}},"f:set":{"v:\\"x\\"":{}}}}');
  assert.equal(fv1({ spec: { items: [], set: [] } }), '{}');
  assert.equal(fv1({ spec: { any: { deep: { er: true }, list: [{ a: 1 }] } } }), '{"f:spec":{"f:any":{"f:deep":{".":{},"f:er":{}},"f:list":{}}}}');
});

test('validation messages', () => {
  const msg = (v: unknown, dups = false) => validationMessage(validate(v, TYPE, dups));
  assert.equal(msg({ spec: { nope: 1 } }), '.spec.nope: field not declared in schema');
  assert.equal(msg({ spec: { n: 'x' } }), '.spec.n: expected numeric (int or float), got string');
  assert.equal(msg({ spec: { s: 5 } }), '.spec.s: expected string, got &value.valueUnstructured{Value:5}');
  assert.equal(msg({ spec: { b: 'yes' } }), '.spec.b: expected boolean, got &{yes}');
  assert.equal(msg({ spec: { inner: 'x' } }), '.spec.inner: expected map, got &{x}');
  assert.equal(msg({ spec: { set: 'x' } }), '.spec.set: expected list, got &{x}');
  assert.equal(msg({ spec: { items: [{ value: 1 }] } }), '.spec.items: element 0: associative list with keys has an element that omits all key fields ["name"] (and doesn\'t have default values for any key fields)');
  assert.equal(msg({ spec: { items: ['a'] } }), '.spec.items: element 0: associative list with keys may not have non-map elements');
  assert.equal(msg({ spec: { set: [{}] } }), ".spec.set: element 0: associative list without keys has an element that's a map type");
  assert.equal(msg({ spec: { set: ['a', 'a'] } }), '.spec.set: duplicate entries for key [="a"]');
  assert.deepEqual(validate({ spec: { set: ['a', 'a'] } }, TYPE, true), []);
  assert.equal(msg({ spec: { items: [{ name: 'x', value: 'v' }] } }), '.spec.items[name="x"].value: expected numeric (int or float), got string');
  assert.equal(msg({ spec: { n: 's', s: 1 } }), 'errors:\n  .spec.n: expected numeric (int or float), got string\n  .spec.s: expected string, got &value.valueUnstructured{Value:1}');
  assert.deepEqual(validate({ spec: { n: null, inner: null, items: null, any: [1, { a: 2 }] } }, TYPE, false), []);
});

test('Compare: added containers are added themselves; leaves are modified; duplicates compare as a whole', () => {
  const paths = (s: FieldSet) => s.paths().map(pathString);
  const c = compare({ spec: { n: 1, set: ['a'] } }, { spec: { n: 2, inner: { x: 'y' }, set: ['b'] } }, TYPE);
  assert.deepEqual(paths(c.modified), ['.spec.n']);
  assert.deepEqual(paths(c.added), ['.spec.inner', '.spec.inner.x', '.spec.set[="b"]']);
  assert.deepEqual(paths(c.removed), ['.spec.set[="a"]']);
  const d = compare({ spec: { set: ['a', 'a'] } }, { spec: { set: ['a', 'a', 'a'] } }, TYPE);
  assert.deepEqual(paths(d.modified), ['.spec.set[="a"]']);
  const e = compare({ spec: { any: { x: { y: 1 } } } }, { spec: { any: { x: 'flat' } } }, TYPE);
  assert.deepEqual([paths(e.removed), paths(e.modified)], [['.spec.any.x.y'], ['.spec.any.x']]);
});

test('RemoveItems and EnsureNamedFieldsAreMembers', () => {
  const obj = { spec: { n: 1, s: 'a', items: [{ name: 'a', value: 1 }, { name: 'b' }], set: ['x', 'y'] } };
  const items = (TYPE.fields!.get('spec') as ReturnType<typeof mapType>).fields!.get('items')!;
  assert.equal(items.kind, 'list');
  const remove = toFieldSet({ spec: { s: 'a', items: [{ name: 'b' }], set: ['x'] } }, TYPE);
  assert.deepEqual(removeItems(obj, remove, TYPE), { spec: { n: 1, items: [{ name: 'a', value: 1 }], set: ['y'] } });
  const all = toFieldSet({ spec: { set: ['x', 'y'] } }, TYPE);
  assert.deepEqual(removeItems({ spec: { set: ['x', 'y'] } }, all, TYPE), { spec: { set: null } });
  const named = ensureNamedFieldsAreMembers(FieldSet.of([fieldElement('spec'), fieldElement('inner'), fieldElement('x')]), TYPE);
  assert.deepEqual(named.paths().map(pathString), ['.spec', '.spec.inner', '.spec.inner.x']);
});
