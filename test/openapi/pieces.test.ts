import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sortingEntries } from '../../src/openapi/pieces.js';
import { runSteps } from '../../src/util/turns.js';

describe('OpenAPI pieces', () => {
  it('sorts entries by key in runs merged in steps, the first of a key winning, as one sort does', () => {
    // 100,000 entries over 60,000 keys (some thrice): several runs of 16,384 and merges of odd counts.
    const entries: [string, number][] = [];
    for (let i = 0; i < 100_000; i++) entries.push([`/apis/g${(i * 7919) % 60_000}/v1/things`, i]);
    const first = new Map<string, number>();
    for (const [k, v] of entries) if (!first.has(k)) first.set(k, v);
    const expected = [...first].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const steps = sortingEntries(entries);
    let pauses = 0;
    let r = steps.next();
    for (; !r.done; r = steps.next()) pauses++;
    assert.equal(expected.length, 60_000);
    assert.deepEqual(r.value, expected);
    assert.ok(pauses >= 10, `paused ${pauses} times`);
    assert.deepEqual(runSteps(sortingEntries(entries.slice(0, 5))), [...new Map(entries.slice(0, 5))].sort(([a], [b]) => (a < b ? -1 : 1)));
  });
});
