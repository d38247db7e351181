import assert from 'node:assert/strict';
import { it } from 'node:test';
import { EventRing } from '../../src/cache/event-ring.js';

it('grows on demand, keeps the newest events up to its capacity, and moves its window', () => {
  const ring = new EventRing<{ revision: number }>(32, 0);
  for (let r = 1; r <= 20; r++) ring.push({ revision: r });
  assert.deepEqual(ring.after(0).map((e) => e.revision), Array.from({ length: 20 }, (_, i) => i + 1));
  assert.equal(ring.startRevision, 0);
  for (let r = 21; r <= 40; r++) ring.push({ revision: r });
  assert.deepEqual(ring.after(0).map((e) => e.revision), Array.from({ length: 32 }, (_, i) => i + 9));
  assert.equal(ring.startRevision, 8, 'every event after the start revision is still held');
  assert.deepEqual(ring.after(37).map((e) => e.revision), [38, 39, 40]);
  ring.reset(100);
  assert.deepEqual(ring.after(0), []);
  assert.equal(ring.startRevision, 100);
});
