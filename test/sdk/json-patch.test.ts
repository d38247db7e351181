/**
 * The JSON patch a manager's mutating webhook answers with (jsonPatch): what changed, member by member and index by
 * index, that the API server's own JSON patch applies back to exactly the hooks' result, at any depth.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyJsonPatch, decodeJsonPatch } from '../../src/machinery/json-patch.js';
import { jsonPatch } from '../../src/sdk/webhooks.js';

type Json = unknown;

const applied = (before: Record<string, Json>, after: Record<string, Json>) => {
  const doc = structuredClone(before);
  applyJsonPatch(doc, decodeJsonPatch(JSON.parse(JSON.stringify(jsonPatch(before, after)))));
  return doc;
};

describe('jsonPatch (mutating webhook answers)', () => {
  it('names only what changed: members, list elements by index, extra elements, escaped keys, other types', () => {
    const before = { a: 1, b: { c: [1, 2, 3], d: 'x' }, 'e/f~g': true, gone: null, list: [{ n: 1 }, { n: 2 }] };
    const after = { a: 1, b: { c: [1, 5], d: { now: 'a map' } }, 'e/f~g': false, list: [{ n: 1, m: 0 }, { n: 2 }, { n: 3 }, 'four'] };
    assert.deepEqual(jsonPatch(before, after), [
      { op: 'remove', path: '/gone' },
      { op: 'remove', path: '/b/c/2' },
      { op: 'replace', path: '/b/c/1', value: 5 },
      { op: 'replace', path: '/b/d', value: { now: 'a map' } },
      { op: 'replace', path: '/e~1f~0g', value: false },
      { op: 'add', path: '/list/2', value: { n: 3 } },
      { op: 'add', path: '/list/3', value: 'four' },
      { op: 'add', path: '/list/0/m', value: 0 },
    ]);
    assert.deepEqual(applied(before, after), after);
    assert.deepEqual(jsonPatch(after, structuredClone(after)), []);
  });

  it('takes a member set to undefined as no member, as JSON does', () => {
    const before = { metadata: { labels: { a: '1', b: '2' } }, spec: {} };
    const after = { metadata: { labels: { a: undefined, b: '2', c: undefined } }, spec: { opt: undefined, list: [undefined] } };
    const patch = jsonPatch(before, after);
    assert.deepEqual(JSON.parse(JSON.stringify(patch)), [
      { op: 'remove', path: '/metadata/labels/a' },
      { op: 'add', path: '/spec/list', value: [null] },
    ]);
    assert.deepEqual(applied(before, after), JSON.parse(JSON.stringify(after)));
  });

  it('removes a list\'s extra elements from the end, so that each index still means what it meant', () => {
    const before = { l: ['a', 'b', 'c', 'd', 'e'] };
    const after = { l: ['a', 'x'] };
    assert.deepEqual(applied(before, after), after);
  });

  it('goes 10,000 levels deep without the stack', () => {
    const nest = (leaf: Json) => {
      let v: Json = leaf;
      for (let i = 0; i < 10_000; i++) v = i % 2 ? { k: v } : [v];
      return { spec: v };
    };
    const patch = jsonPatch(nest('old'), nest('new'));
    assert.equal(patch.length, 1);
    assert.equal(patch[0].op, 'replace');
    assert.equal(patch[0].path.split('/').length, 10_002);
  });
});
