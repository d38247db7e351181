/** SortedKeys against a plain sorted array, through block splits and joins. */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { lowerBound, SortedKeys } from '../../src/util/sorted-keys.js';

/** A deterministic pseudo-random sequence (the test's failures reproduce). */
function random(seed: number): () => number {
  let s = seed;
  return () => ((s = (s * 1103515245 + 12345) % 2147483648) / 2147483648);
}

it('adds, deletes, counts and ranges as a sorted array would, across thousands of keys', () => {
  const next = random(42);
  const set = new SortedKeys();
  const reference: string[] = [];
  const key = () => `/registry/things/ns${Math.floor(next() * 7)}/o-${Math.floor(next() * 6000)}`;
  const check = (what: string) => {
    assert.equal(set.size, reference.length, `${what}: size`);
    assert.deepEqual(set.keys(), reference, `${what}: keys`);
    for (let i = 0; i < 20; i++) {
      const [a, b] = [key(), key()].sort();
      const from = lowerBound(reference, a);
      const to = lowerBound(reference, b);
      assert.equal(set.rank(a), from, `${what}: rank of ${a}`);
      assert.equal(set.count(a, b), to - from, `${what}: count in [${a}, ${b})`);
      assert.deepEqual([...set.range(a, b)], reference.slice(from, to), `${what}: range [${a}, ${b})`);
      assert.deepEqual([...set.range(a, '')], reference.slice(from), `${what}: range from ${a}`);
    }
  };
  // Mostly adds (the set grows past many blocks), then mostly deletes (blocks empty and join).
  for (const [phase, addShare, ops] of [['growing', 0.9, 12_000], ['shrinking', 0.1, 14_000]] as const) {
    for (let i = 0; i < ops; i++) {
      const k = key();
      const at = lowerBound(reference, k);
      if (next() < addShare) {
        set.add(k);
        if (reference[at] !== k) reference.splice(at, 0, k);
      } else {
        set.delete(k);
        if (reference[at] === k) reference.splice(at, 1);
      }
      if (i % 3000 === 0) check(`${phase} ${i}`);
    }
    check(phase);
  }
  // Keys in ascending order (as a store loads them) and all removed again.
  const ordered = Array.from({ length: 5000 }, (_, i) => `k${String(i).padStart(5, '0')}`);
  const fresh = new SortedKeys();
  for (const k of ordered) fresh.add(k);
  fresh.add(ordered[10]);
  assert.deepEqual(fresh.keys(), ordered);
  assert.equal(fresh.count('k00100', 'k00200'), 100);
  for (const k of ordered) fresh.delete(k);
  fresh.delete('absent');
  assert.equal(fresh.size, 0);
  assert.deepEqual([...fresh.range('', '')], []);
});
