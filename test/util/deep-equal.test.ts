/** deepEqual: JSON equality as updates use it to find a write that changes nothing. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deepEqual, equalExcept } from '../../src/util/deep-equal.js';

test('deepEqual ignores key order and members holding undefined', () => {
  assert.equal(deepEqual({ a: 1, b: { c: [1, 2] } }, { b: { c: [1, 2] }, a: 1 }), true);
  assert.equal(deepEqual({ a: 1, u: undefined }, { a: 1 }), true);
  assert.equal(deepEqual({ a: 1 }, { a: 1, u: undefined }), true);
  assert.equal(deepEqual({ a: 1 }, { a: 1, b: 2 }), false);
  assert.equal(deepEqual({ a: 1, b: 2 }, { a: 1 }), false);
  assert.equal(deepEqual({ a: 1, u: undefined }, { a: 1, b: 2 }), false);
  // same number of members, different names
  assert.equal(deepEqual({ a: 1 }, { b: 1 }), false);
  assert.equal(deepEqual({ a: null }, { a: undefined }), false);
});

test('deepEqual compares arrays by position and bigints with the numbers they hold', () => {
  assert.equal(deepEqual([1, 2], [2, 1]), false);
  assert.equal(deepEqual([1, [2]], [1, [2]]), true);
  assert.equal(deepEqual({ n: 9007199254740993n }, { n: 9007199254740993n }), true);
  assert.equal(deepEqual({ n: 5n }, { n: 5 }), true);
  assert.equal(deepEqual(5.5, 5n), false);
  assert.equal(deepEqual([], {}), false);
  assert.equal(deepEqual({ a: {} }, { a: [] }), false);
});

test('equalExcept skips the named top-level keys', () => {
  assert.equal(equalExcept({ a: 1, metadata: { x: 1 } }, { a: 1, metadata: { x: 2 } }, ['metadata']), true);
  assert.equal(equalExcept({ a: 1, metadata: {} }, { a: 2, metadata: {} }, ['metadata']), false);
});
