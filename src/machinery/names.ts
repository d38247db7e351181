/**
 * generateName as apiserver's storage/names.SimpleNameGenerator does it: the
 * base cut to 58 characters plus five random characters from
 * utilrand's alphabet (no vowels, no confusable digits).
 */

import { randomFillSync } from 'node:crypto';

const ALPHANUMS = 'bcdfghjklmnpqrstvwxz2456789';
const MAX_NAME_LENGTH = 63;
const RANDOM_LENGTH = 5;
export const MAX_GENERATED_NAME_LENGTH = MAX_NAME_LENGTH - RANDOM_LENGTH;

/** `random` returns a float in [0, 1); tests may pass a fixed one. */
export function generateName(base: string, random: () => number = cryptoRandom): string {
  if (base.length > MAX_GENERATED_NAME_LENGTH) base = base.slice(0, MAX_GENERATED_NAME_LENGTH);
  return base + randomString(RANDOM_LENGTH, random);
}

/** utilrand.String: n characters from the generator alphabet. */
export function randomString(n: number, random: () => number = cryptoRandom): string {
  let s = '';
  for (let i = 0; i < n; i++) s += ALPHANUMS[Math.min(ALPHANUMS.length - 1, Math.floor(random() * ALPHANUMS.length))];
  return s;
}

// Random words drawn 1,024 at a time: a call to the system's generator per character
// cost about 4 µs, a fifth of a create with generateName.
const pool = new Uint32Array(1024);
let next = pool.length;

function cryptoRandom(): number {
  if (next === pool.length) {
    randomFillSync(pool);
    next = 0;
  }
  return pool[next++] / 0x100000000;
}
