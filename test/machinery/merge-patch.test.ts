import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyMergePatch, applyMergePatchSharing, createMergePatch, INVALID_MERGE_PATCH, jsonEqual, mergePatchError } from '../../src/machinery/merge-patch.js';
import { deepClone, parseJson, stringifyJson } from '../../src/machinery/json.js';

// RFC 7386, Appendix A.
const RFC_EXAMPLES: [string, string, string][] = [
  ['{"a":"b"}', '{"a":"c"}', '{"a":"c"}'],
  ['{"a":"b"}', '{"b":"c"}', '{"a":"b","b":"c"}'],
  ['{"a":"b"}', '{"a":null}', '{}'],
  ['{"a":"b","b":"c"}', '{"a":null}', '{"b":"c"}'],
  ['{"a":["b"]}', '{"a":"c"}', '{"a":"c"}'],
  ['{"a":"c"}', '{"a":["b"]}', '{"a":["b"]}'],
  ['{"a":{"b":"c"}}', '{"a":{"b":"d","c":null}}', '{"a":{"b":"d"}}'],
  ['{"a":[{"b":"c"}]}', '{"a":[1]}', '{"a":[1]}'],
  ['["a","b"]', '["c","d"]', '["c","d"]'],
  ['{"a":"b"}', '["c"]', '["c"]'],
  ['{"a":"foo"}', 'null', 'null'],
  ['{"a":"foo"}', '"bar"', '"bar"'],
  ['{"e":null}', '{"a":1}', '{"e":null,"a":1}'],
  ['[1,2]', '{"a":"b","c":null}', '{"a":"b"}'],
  ['{}', '{"a":{"bb":{"ccc":null}}}', '{"a":{"bb":{}}}'],
];

test('RFC 7386 appendix examples', () => {
  for (const [target, patch, expected] of RFC_EXAMPLES) {
    assert.deepEqual(applyMergePatch(JSON.parse(target), JSON.parse(patch)), JSON.parse(expected), `${target} + ${patch}`);
  }
});

test('inputs are not mutated and the result shares nothing with them', () => {
  const target = { a: { b: 1, keep: { x: 1 } }, list: [1] };
  const patch = { a: { b: 2, c: { d: 3 } }, n: [{ z: 1 }] };
  const t0 = deepClone(target);
  const p0 = deepClone(patch);
  const out = applyMergePatch(target, patch) as { a: { keep: object; c: object }; list: unknown[]; n: unknown[] };
  assert.deepEqual(target, t0);
  assert.deepEqual(patch, p0);
  assert.deepEqual(out, { a: { b: 2, keep: { x: 1 }, c: { d: 3 } }, list: [1], n: [{ z: 1 }] });
  assert.notEqual(out.a.keep, target.a.keep);
  assert.notEqual(out.list, target.list);
  assert.notEqual(out.a.c, patch.a.c);
  assert.notEqual(out.n, patch.n);
});

test('the sharing variant gives the same results, shares what the patch does not reach, and mutates nothing', () => {
  for (const [target, patch, expected] of RFC_EXAMPLES) {
    assert.deepEqual(applyMergePatchSharing(JSON.parse(target), JSON.parse(patch)), JSON.parse(expected), `${target} + ${patch}`);
  }
  const quirks: [unknown, unknown][] = [
    [{ a: [] }, { a: [{ x: null, y: 1 }, null] }],
    [{ a: 'x' }, { a: { b: null, c: 1 } }],
    [{ a: { o: 1 } }, { a: [{ x: null }] }],
    [{ a: null }, { a: { b: null, c: 2 } }],
  ];
  for (const [target, patch] of quirks) assert.deepEqual(applyMergePatchSharing(target, patch), applyMergePatch(target, patch));
  const target = { spec: { big: { x: 1 } }, status: { phase: 'A', conditions: [{ type: 'Ready' }], deep: { keep: { y: 1 }, n: 1 } } };
  const t0 = deepClone(target);
  const out = applyMergePatchSharing(target, { status: { phase: 'B', deep: { n: 2 } } }) as typeof target;
  assert.deepEqual(target, t0);
  assert.deepEqual(out, { spec: { big: { x: 1 } }, status: { phase: 'B', conditions: [{ type: 'Ready' }], deep: { keep: { y: 1 }, n: 2 } } });
  assert.equal(out.spec, target.spec);
  assert.equal(out.status.conditions, target.status.conditions);
  assert.equal(out.status.deep.keep, target.status.deep.keep);
  assert.notEqual(out.status, target.status);
  assert.notEqual(out.status.deep, target.status.deep);
  const depth = 10000;
  const deep = parseJson('{"a":'.repeat(depth) + '1' + '}'.repeat(depth));
  const deeper = parseJson('{"a":'.repeat(depth) + '2' + '}'.repeat(depth));
  assert.ok(jsonEqual(applyMergePatchSharing(deep, deeper), deeper));
});

test('evanphx quirks the apiserver has: nulls pruned inside arrays replacing non-objects only', () => {
  assert.deepEqual(applyMergePatch({ a: [] }, { a: [{ x: null, y: 1 }, null] }), { a: [{ y: 1 }, null] });
  assert.deepEqual(applyMergePatch({ a: 'x' }, { a: { b: null, c: 1 } }), { a: { c: 1 } });
  // An object replaced by a non-object keeps the patch value verbatim.
  assert.deepEqual(applyMergePatch({ a: { o: 1 } }, { a: [{ x: null }] }), { a: [{ x: null }] });
  // A key present with null in the target is treated as absent.
  assert.deepEqual(applyMergePatch({ a: null }, { a: { b: null, c: 2 } }), { a: { c: 2 } });
});

test('BigInt values survive', () => {
  const target = parseJson('{"spec":{"n":9223372036854775807,"m":1}}');
  const patch = parseJson('{"spec":{"m":9223372036854775806}}');
  assert.equal(stringifyJson(applyMergePatch(target, patch)), '{"spec":{"n":9223372036854775807,"m":9223372036854775806}}');
});

test('mergePatchError flags the bodies the apiserver refuses', () => {
  assert.equal(mergePatchError(null), INVALID_MERGE_PATCH);
  assert.equal(mergePatchError('x'), 'Invalid JSON Patch');
  assert.equal(mergePatchError(1), 'Invalid JSON Patch');
  assert.equal(mergePatchError({}), undefined);
  assert.equal(mergePatchError([]), undefined);
});

test('createMergePatch yields the minimal patch', () => {
  assert.deepEqual(createMergePatch({ a: 1, b: { c: 2, d: 3 }, e: [1] }, { a: 1, b: { c: 2, d: 4 }, e: [1] }), { b: { d: 4 } });
  assert.deepEqual(createMergePatch({ a: 1, b: 2 }, { a: 1 }), { b: null });
  assert.deepEqual(createMergePatch({ a: 1 }, { a: 1, n: { x: 1 } }), { n: { x: 1 } });
  assert.deepEqual(createMergePatch({ a: [1, 2] }, { a: [1] }), { a: [1] });
  assert.deepEqual(createMergePatch({ a: { b: 1 } }, { a: 'x' }), { a: 'x' });
  assert.deepEqual(createMergePatch({ a: { b: { c: 1 } } }, { a: { b: { c: 1 } } }), {});
  assert.deepEqual(createMergePatch({ a: { b: 1 } }, { a: {} }), { a: { b: null } });
  assert.deepEqual(createMergePatch({ a: 1n }, { a: 1n }), {});
  assert.deepEqual(createMergePatch({ a: 1n }, { a: 2n }), { a: 2n });
  // Applying the patch gives back the modified document.
  const original = { metadata: { labels: { a: '1', b: '2' } }, spec: { x: [1, { y: 2 }], z: 'q' } };
  const modified = { metadata: { labels: { a: '1', c: '3' } }, spec: { x: [1, { y: 3 }] }, status: {} };
  assert.deepEqual(applyMergePatch(original, createMergePatch(original, modified)), modified);
});

test('deep documents do not overflow the stack', () => {
  const depth = 10000;
  const deep = parseJson('{"a":'.repeat(depth) + '1' + '}'.repeat(depth));
  const deeper = parseJson('{"a":'.repeat(depth) + '2' + '}'.repeat(depth));
  assert.ok(jsonEqual(applyMergePatch(deep, deeper), deeper));
  assert.ok(jsonEqual(createMergePatch(deep, deeper), deeper));
  assert.deepEqual(createMergePatch(deep, deep), {});
});

test('jsonEqual', () => {
  assert.ok(jsonEqual({ a: [1, { b: 'x' }] }, { a: [1, { b: 'x' }] }));
  assert.ok(!jsonEqual({ a: 1 }, { a: 1, b: undefined }));
  assert.ok(!jsonEqual([1], { 0: 1 }));
  assert.ok(jsonEqual(5n, 5));
  assert.ok(!jsonEqual(5n, 5.5));
});
