import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FieldSet, FieldsV1Error } from '../../src/apply/field-set.js';
import { fieldElement, indexElement, keyElement, pathString, valueElement, type PathElement } from '../../src/apply/path-element.js';

const f = fieldElement;
const p = (...names: (string | PathElement)[]) => names.map((n) => (typeof n === 'string' ? f(n) : n));

function roundTrip(json: string): string {
  return JSON.stringify(FieldSet.fromFieldsV1(JSON.parse(json)).toFieldsV1());
}

test('fieldsV1 golden data round-trips byte for byte', () => {
  const golden = [
    `{"f:aaa":{},"f:aab":{},"f:aac":{},"f:aad":{},"f:aae":{},"f:aaf":{},"k:{\\"name\\":\\"first\\"}":{},"k:{\\"name\\":\\"second\\"}":{},"k:{\\"port\\":443,\\"protocol\\":\\"tcp\\"}":{},"k:{\\"port\\":443,\\"protocol\\":\\"udp\\"}":{},"v:1":{},"v:2":{},"v:3":{},"v:\\"aa\\"":{},"v:\\"ab\\"":{},"v:true":{},"i:1":{},"i:2":{},"i:3":{},"i:4":{}}`,
    `{"f:spec":{".":{},"f:apps":{".":{},"k:{\\"name\\":\\" app-💻\\"}":{".":{},"f:container":{".":{},"f:image":{},"f:name":{},"f:ports":{".":{},"k:{\\"name\\":\\"port 🔑\\"}":{".":{},"f:containerPort":{},"f:name":{}}}},"f:name":{}}}}}`,
    `{"f:metadata":{"f:labels":{"f:sidecar_version":{}}},"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\\"name\\":\\"sidecar\\"}":{".":{},"f:image":{},"f:name":{}}}}}}}`,
  ];
  for (const g of golden) assert.equal(roundTrip(g), g);
});

test('fieldsV1 decoding normalizes order and key JSON', () => {
  const messy = `{"i:2":{},"v: 3":{},"f:b":{},"k:{ \\"protocol\\":\\"udp\\",\\"port\\":443}":{},"f:a":{"f:x":{},".":{}},"v:true":{},"v:\\"aa\\"":{}}`;
  assert.equal(
    roundTrip(messy),
    `{"f:a":{".":{},"f:x":{}},"f:b":{},"k:{\\"port\\":443,\\"protocol\\":\\"udp\\"}":{},"v:3":{},"v:\\"aa\\"":{},"v:true":{},"i:2":{}}`,
  );
});

test('fieldsV1: unknown element types are skipped, malformed keys are errors', () => {
  assert.equal(roundTrip('{"f:a":{},"x:future":{},"f:b":{"z:other":{}}}'), '{"f:a":{},"f:b":{}}');
  assert.throws(() => FieldSet.fromFieldsV1({ a: {} }), FieldsV1Error);
  assert.throws(() => FieldSet.fromFieldsV1({ 'f:a': 1 }), FieldsV1Error);
  assert.throws(() => FieldSet.fromFieldsV1({ 'k:{': {} }), FieldsV1Error);
  assert.throws(() => FieldSet.fromFieldsV1({ 'i:x': {} }), FieldsV1Error);
  assert.throws(() => FieldSet.fromFieldsV1('x'), FieldsV1Error);
  assert.equal(JSON.stringify(FieldSet.fromFieldsV1({}).toFieldsV1()), '{}');
});

test('keys escape like encoding/json and print like fieldpath', () => {
  const k = keyElement([
    { name: 'protocol', value: 'TCP' },
    { name: 'containerPort', value: 80 },
  ]);
  assert.equal(k.key, 'k:{"containerPort":80,"protocol":"TCP"}');
  assert.equal(pathString(p('spec', 'ports', k, 'name')), '.spec.ports[containerPort=80,protocol="TCP"].name');
  assert.equal(valueElement('a<b&c').key, 'v:"a\\u003cb\\u0026c"');
  assert.equal(pathString(p('metadata', 'finalizers', valueElement('x'))), '.metadata.finalizers[="x"]');
  assert.equal(pathString(p('list', indexElement(3))), '.list[3]');
  // Numbers read back from fieldsV1 are float64 in Go, and print as such.
  const decoded = FieldSet.fromFieldsV1({ 'f:ports': { 'k:{"port":1000000}': {} } });
  assert.deepEqual(decoded.paths().map(pathString), ['.ports[port=1e+06]']);
});

test('difference keeps subtrees below members of the other set; recursiveDifference drops them', () => {
  const cases: { a: FieldSet; b: FieldSet; diff: FieldSet; rdiff: FieldSet }[] = [
    { a: FieldSet.of(p('a')), b: FieldSet.of(p('a')), diff: new FieldSet(), rdiff: new FieldSet() },
    { a: FieldSet.of(p('a', 'b', 'c'), p('b', 'b', 'c')), b: FieldSet.of(p('a', 'b', 'c')), diff: FieldSet.of(p('b', 'b', 'c')), rdiff: FieldSet.of(p('b', 'b', 'c')) },
    { a: FieldSet.of(p('a')), b: FieldSet.of(p('a', 'aa')), diff: FieldSet.of(p('a')), rdiff: FieldSet.of(p('a')) },
    { a: FieldSet.of(p('a', 'b', 'c')), b: FieldSet.of(p('a')), diff: FieldSet.of(p('a', 'b', 'c')), rdiff: new FieldSet() },
    {
      a: FieldSet.of(p('a', 'aa', 'aab'), p('a', 'ab', 'aba')),
      b: FieldSet.of(p('a', 'aa')),
      diff: FieldSet.of(p('a', 'aa', 'aab'), p('a', 'ab', 'aba')),
      rdiff: FieldSet.of(p('a', 'ab', 'aba')),
    },
  ];
  for (const c of cases) {
    assert.ok(c.a.difference(c.b).equals(c.diff), JSON.stringify(c.a.difference(c.b).toFieldsV1()));
    assert.ok(c.a.recursiveDifference(c.b).equals(c.rdiff), JSON.stringify(c.a.recursiveDifference(c.b).toFieldsV1()));
  }
});

test('union, intersection, has, size and pre-order paths', () => {
  const a = FieldSet.of(p('spec', 'replicas'), p('spec', 'template', 'image'), p('metadata', 'labels', 'app'));
  const b = FieldSet.of(p('spec', 'replicas'), p('spec'), p('status', 'phase'));
  const u = a.union(b);
  assert.equal(u.size(), 5);
  assert.ok(u.has(p('spec')) && u.has(p('spec', 'template', 'image')) && !u.has(p('spec', 'template')));
  assert.deepEqual(JSON.parse(JSON.stringify(a.intersection(b).toFieldsV1())), { 'f:spec': { 'f:replicas': {} } });
  assert.deepEqual(u.paths().map(pathString), ['.spec', '.metadata.labels.app', '.spec.replicas', '.spec.template.image', '.status.phase']);
  assert.ok(a.intersection(FieldSet.of(p('spec'))).isEmpty());
  assert.ok(!FieldSet.of(p('x')).isEmpty());
  assert.ok(new FieldSet().isEmpty());
});

test('path elements sort fields, then keys, then values, then indexes', () => {
  const s = FieldSet.of([indexElement(1)], [valueElement(true)], [valueElement('a')], [valueElement(2)], [keyElement([{ name: 'n', value: 'x' }])], [f('z')], [f('a')]);
  assert.deepEqual(Object.keys(s.toFieldsV1()), ['f:a', 'f:z', 'k:{"n":"x"}', 'v:2', 'v:"a"', 'v:true', 'i:1']);
});

test('set operations that change nothing return their input (which keeps its fieldsV1 object); others build new sets', () => {
  const a = FieldSet.of(p('spec', 'replicas'), p('spec', 'template', 'image'), p('status', 'phase'));
  const encoded = a.toFieldsV1();
  const sub = FieldSet.of(p('spec', 'replicas'), p('status', 'phase'));
  const other = FieldSet.of(p('metadata', 'labels', 'app'), p('spec', 'paused'));
  assert.equal(a.union(sub), a);
  assert.equal(a.union(new FieldSet()), a);
  assert.equal(a.difference(other), a);
  assert.equal(a.recursiveDifference(other), a);
  assert.equal(sub.intersection(a), sub);
  assert.equal(a.union(sub).toFieldsV1(), encoded);
  assert.ok(a.intersection(other).isEmpty());
  // Changes still come out right, and the inputs are left as they were.
  assert.deepEqual(a.union(other).paths().map(pathString), ['.metadata.labels.app', '.spec.paused', '.spec.replicas', '.spec.template.image', '.status.phase']);
  assert.deepEqual(a.difference(sub).paths().map(pathString), ['.spec.template.image']);
  assert.deepEqual(a.recursiveDifference(FieldSet.of(p('spec'))).paths().map(pathString), ['.status.phase']);
  assert.deepEqual(a.intersection(FieldSet.of(p('spec', 'replicas'), p('spec', 'paused'))).paths().map(pathString), ['.spec.replicas']);
  assert.deepEqual(a.paths().map(pathString), ['.spec.replicas', '.spec.template.image', '.status.phase']);
  assert.equal(JSON.stringify(a.toFieldsV1()), JSON.stringify(encoded));
  // A decoded frozen encoding is the set's own encoding.
  assert.equal(FieldSet.fromFieldsV1(encoded).toFieldsV1(), encoded);
});

test('encodes a large set in steps of a few thousand entries, to the same fieldsV1 as in one go', () => {
  const members = Array.from({ length: 20_000 }, (_, i) => [f('data'), f(`k${i}`)]);
  const set = FieldSet.of(...members);
  const steps = set.encoding();
  let pauses = 0;
  let r = steps.next();
  for (; !r.done; r = steps.next()) pauses++;
  // Writing 20,000 entries and freezing 20,000 objects pause every 4,096; the parse has its own.
  assert.ok(pauses >= 8, `${pauses} pauses`);
  assert.ok(Object.isFrozen(r.value) && Object.isFrozen((r.value['f:data'] as Record<string, unknown>)['f:k1']));
  assert.equal(JSON.stringify(r.value), JSON.stringify(FieldSet.of(...members).toFieldsV1()));
});
