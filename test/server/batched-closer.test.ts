/** BatchedCloser: sockets whose clients went are destroyed a batch per turn of the loop, all of them in the end. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setImmediate as turn } from 'node:timers/promises';
import { BatchedCloser } from '../../src/server/connections.js';

test('destroys 250 sockets in batches of 100, one batch per turn', async () => {
  const closer = new BatchedCloser();
  let destroyed = 0;
  for (let i = 0; i < 250; i++) closer.add({ destroy: () => destroyed++ });
  assert.equal(destroyed, 0, 'none in the turn that queued them');
  await turn();
  assert.equal(destroyed, 100);
  await turn();
  assert.equal(destroyed, 200);
  await turn();
  assert.equal(destroyed, 250);
  closer.add({ destroy: () => destroyed++ });
  await turn();
  assert.equal(destroyed, 251, 'a later one is destroyed too');
});
