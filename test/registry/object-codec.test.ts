import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { encodeObject } from '../../src/registry/object-codec.js';
import type { KObject } from '../../src/api/object.js';

/** What the codec must agree with: JSON.stringify of the object without, then with, its resourceVersion set. */
function expected(obj: KObject, rv: string): { stored: string; served: string } {
  const copy = structuredClone(obj);
  delete copy.metadata.resourceVersion;
  const stored = JSON.stringify(copy);
  const served = structuredClone(obj);
  served.metadata.resourceVersion = rv;
  return { stored, served: JSON.stringify(served) };
}

describe('object codec', () => {
  const cases: Record<string, KObject> = {
    'a create (no resourceVersion: it goes last)': { apiVersion: 'g/v1', kind: 'K', metadata: { name: 'a', labels: { x: 'y' } }, spec: { n: 1 } },
    'an update (resourceVersion keeps its place)': { apiVersion: 'g/v1', kind: 'K', metadata: { name: 'a', resourceVersion: '7', uid: 'u' }, spec: {} },
    'metadata first, members left out as JSON.stringify does': { metadata: { resourceVersion: '', gone: undefined, name: 'b' }, kind: 'K', skipped: undefined, status: { s: 'é"\\' } } as unknown as KObject,
    'empty metadata': { kind: 'K', metadata: {} },
    'resourceVersion as the only metadata member': { kind: 'K', metadata: { resourceVersion: '3' }, spec: { a: [1, null] } },
    // Quotes inside strings are escaped, so only a member of the same name can repeat the marker's text.
    'a member before metadata holding the revision marker itself': {
      kind: 'K',
      extra: { resourceVersion: '\u0000kapi-rv\u0000' },
      metadata: { name: 'm', annotations: { a: '"resourceVersion":"\u0000kapi-rv\u0000"' } },
    } as unknown as KObject,
  };
  cases['frozen metadata'] = { kind: 'K', metadata: Object.freeze({ name: 'f', resourceVersion: '9' }), spec: { x: 1 } };
  for (const [name, obj] of Object.entries(cases)) {
    it(`encodes ${name} as JSON.stringify would, and leaves the object as it was`, () => {
      const before = JSON.stringify(obj);
      const hadRv = Object.prototype.hasOwnProperty.call(obj.metadata, 'resourceVersion');
      const enc = encodeObject(obj);
      assert.equal(JSON.stringify(obj), before);
      assert.equal(Object.prototype.hasOwnProperty.call(obj.metadata, 'resourceVersion'), hadRv);
      const want = expected(obj, '42');
      assert.equal(enc.stored, want.stored);
      assert.equal(enc.served?.('42'), want.served);
      assert.deepEqual(JSON.parse(enc.served!('42')).metadata.resourceVersion, '42');
    });
  }

  it('stores big integers as bare digits and leaves odd metadata to a plain encode', () => {
    const big = { kind: 'K', metadata: { name: 'n' }, spec: { n: 2n ** 62n } } as unknown as KObject;
    assert.equal(encodeObject(big).stored, `{"kind":"K","metadata":{"name":"n"},"spec":{"n":${2n ** 62n}}}`);
    assert.equal(encodeObject(big).served?.('5'), `{"kind":"K","metadata":{"name":"n","resourceVersion":"5"},"spec":{"n":${2n ** 62n}}}`);
    const odd = { kind: 'K', metadata: ['x'] } as unknown as KObject;
    assert.equal(encodeObject(odd).stored, '{"kind":"K","metadata":["x"]}');
    assert.equal(encodeObject(odd).served, undefined);
  });
});
