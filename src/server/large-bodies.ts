/**
 * Large request bodies take their turns: a body of 256 KiB or more (apiserver's
 * 99th percentile of object sizes) is decoded, stored and answered while no
 * other large one is, and each turn starts after the event loop has polled, so
 * that the small requests of other clients are served between two large ones.
 * Without it, a hundred 1 MiB uploads that end together are worked through in
 * one stretch of seconds while a plain GET waits.
 *
 * A turn ends when its response is done, or once it has lasted HOLD_MS and its
 * request waits on I/O (a timer cannot fire while it computes), whichever is
 * first: a request waiting on a webhook does not hold up the others.
 */
import type { Response } from './exchange.js';

export { LARGE_BODY_BYTES } from '../util/turns.js';
const HOLD_MS = 50;

let busy = false;
const waiting: Array<() => void> = [];

function handOver(): void {
  const next = waiting.shift();
  if (next) setImmediate(next);
  else busy = false;
}

/** Wait for the turn of a large body; it ends with the response (or as said above). */
export async function largeBodyTurn(res: Response): Promise<void> {
  if (busy) await new Promise<void>((resolve) => waiting.push(resolve));
  busy = true;
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    clearTimeout(timer);
    handOver();
  };
  const timer = setTimeout(end, HOLD_MS);
  if (res.writableEnded || res.destroyed) end();
  else res.once('close', end);
}
