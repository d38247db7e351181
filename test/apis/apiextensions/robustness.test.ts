import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as api from '../../../src/apis/apiextensions/index.js';
import type { AnyCRD, CustomResourceDefinitionV1 } from '../../../src/api/apiextensions.js';
import { cronTabV1beta1, noxu, noxuWithSubresources } from './fixtures.js';

/** mulberry32: a small deterministic PRNG. */
function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const JUNK: unknown[] = [null, 'x', '', 0, -1, 1.5, true, false, [], {}, ['a', 1], { a: null }, [null], 2n ** 70n];

/** Replaces a few random nodes of `obj` with values of the wrong type. */
function corrupt(obj: unknown, rand: () => number): unknown {
  const copy = structuredClone(obj) as Record<string, unknown>;
  for (let n = 0; n < 3; n++) {
    let node: Record<string, unknown> | unknown[] = copy;
    for (let depth = 0; depth < 8; depth++) {
      const keys = Object.keys(node);
      if (!keys.length) break;
      const key = keys[Math.floor(rand() * keys.length)];
      const child = (node as Record<string, unknown>)[key];
      if (child && typeof child === 'object' && rand() < 0.7) {
        node = child as Record<string, unknown>;
        continue;
      }
      (node as Record<string, unknown>)[key] = structuredClone(JUNK[Math.floor(rand() * JUNK.length)]);
      break;
    }
  }
  return copy;
}

describe('robustness against ill-typed input', () => {
  it('no function throws on 600 corrupted CRDs', () => {
    const rand = prng(42);
    const bases: AnyCRD[] = [noxu(), noxuWithSubresources(), cronTabV1beta1()];
    const stored = api.prepareCRDForCreate(api.defaultV1(noxu()));
    for (let i = 0; i < 600; i++) {
      const input = corrupt(bases[i % bases.length], rand) as AnyCRD;
      const version = api.isV1beta1Object(input) ? 'v1beta1' : 'v1';
      assert.doesNotThrow(() => {
        const defaulted = api.defaultCRD(input, version);
        const prepared = api.prepareCRDForCreate(defaulted);
        api.validateCRD(prepared, version);
        api.validateCRD(input, version);
        api.validateCRDUpdate(api.prepareCRDForUpdate(defaulted, stored), stored, version);
        api.validateCRDUpdate(stored, input, 'v1');
        api.validateCRDStatusUpdate(input, stored);
        api.specChanged(input, stored);
        const v1 = (version === 'v1beta1' ? api.v1beta1ToV1(input) : api.defaultV1(input as CustomResourceDefinitionV1)) as CustomResourceDefinitionV1;
        api.v1ToV1beta1(v1);
        api.v1beta1ToV1(api.v1ToV1beta1(v1));
        const named = api.reconcileNames(v1, [stored]) ?? v1;
        api.establish(named);
        api.reconcileAPIApproval(named);
        api.storageVersion(input);
        api.servedVersions(input);
      }, `case ${i}: ${JSON.stringify(input, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v))}`);
    }
  });
});
