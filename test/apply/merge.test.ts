import { test } from 'node:test';
import assert from 'node:assert/strict';
import { merge } from '../../src/apply/merge.js';
import { ATOMIC_ANY, BOOLEAN, NUMERIC, STRING, listType, mapType } from '../../src/apply/types.js';

// Merge triplets (live, applied, result) in the style of structured-merge-diff's typed merge tests.
const GRAB_BAG = mapType({
  numeric: NUMERIC,
  string: STRING,
  bool: BOOLEAN,
  setStr: listType('set', STRING),
  setBool: listType('set', BOOLEAN),
  setNumeric: listType('set', NUMERIC),
});

function check(type: Parameters<typeof merge>[2], cases: [string, string, string][]) {
  for (const [lhs, rhs, out] of cases) {
    assert.deepEqual(merge(JSON.parse(lhs), JSON.parse(rhs), type), JSON.parse(out), `${lhs} + ${rhs}`);
  }
}

test('scalars and sets: applied items in applied order, live-only items where they were', () => {
  check(GRAB_BAG, [
    ['{"numeric":1}', '{"numeric":3.14159}', '{"numeric":3.14159}'],
    ['{"string":"aoeu"}', '{"bool":true}', '{"string":"aoeu","bool":true}'],
    ['{"setStr":["a","b","c"]}', '{"setStr":["a","b"]}', '{"setStr":["a","b","c"]}'],
    ['{"setStr":["a","b"]}', '{"setStr":["a","b","c"]}', '{"setStr":["a","b","c"]}'],
    ['{"setStr":["a","b","c"]}', '{"setStr":[]}', '{"setStr":["a","b","c"]}'],
    ['{"setStr":["a","b"]}', '{"setStr":["b","a"]}', '{"setStr":["b","a"]}'],
    ['{"setStr":["a","b","c","g","f"]}', '{"setStr":["c","d","e","f"]}', '{"setStr":["a","b","c","g","d","e","f"]}'],
    ['{"setStr":["c","d","e","f"]}', '{"setStr":["a","c","e"]}', '{"setStr":["a","c","d","e","f"]}'],
    ['{"setStr":["a","b","c","x","y","z"]}', '{"setStr":["d","e","f","x","y","z"]}', '{"setStr":["a","b","c","d","e","f","x","y","z"]}'],
    ['{"setStr":["a","b","c","d"]}', '{"setStr":["d","e","f","a"]}', '{"setStr":["b","c","d","e","f","a"]}'],
    [
      '{"setStr":["a","b","c","d","e","f","g","h","i","j"]}',
      '{"setStr":["1","b","2","h","3","e","4","k","l"]}',
      '{"setStr":["a","1","b","c","d","f","g","2","h","i","j","3","e","4","k","l"]}',
    ],
    ['{"setStr":["a","b","b"]}', '{"setStr":["b"]}', '{"setStr":["a","b"]}'],
    ['{"setStr":["a","b","b"]}', '{"setStr":["a"]}', '{"setStr":["a","b","b"]}'],
    ['{"setStr":["a","b","c","d","e","c"]}', '{"setStr":["1","b","2","c","e","d"]}', '{"setStr":["a","1","b","2","c","e","d"]}'],
    ['{"setStr":["a","a","b","b"]}', '{"setStr":["b","c","d"]}', '{"setStr":["a","a","b","c","d"]}'],
    ['{"setBool":[true]}', '{"setBool":[false]}', '{"setBool":[true,false]}'],
    ['{"setNumeric":[1,2,3.14159]}', '{"setNumeric":[1,2,3]}', '{"setNumeric":[1,2,3.14159,3]}'],
  ]);
});

test('map lists merge items by key; atomic lists and null are replaced', () => {
  const element = mapType({ key: STRING, id: NUMERIC, value: mapType(undefined, { elements: STRING }), bv: BOOLEAN, nv: NUMERIC });
  const root = mapType({ list: listType('map', element, ['key', 'id']), atomicList: listType('atomic', STRING) });
  check(root, [
    ['{"list":[{"key":"a","id":1,"value":{"a":"a"}}]}', '{"list":[{"key":"a","id":2,"value":{"a":"a"}}]}', '{"list":[{"key":"a","id":1,"value":{"a":"a"}},{"key":"a","id":2,"value":{"a":"a"}}]}'],
    ['{"list":[{"key":"b","id":2}]}', '{"list":[{"key":"a","id":1},{"key":"b","id":2},{"key":"c","id":3}]}', '{"list":[{"key":"a","id":1},{"key":"b","id":2},{"key":"c","id":3}]}'],
    ['{"list":[{"key":"a","id":1},{"key":"b","id":2},{"key":"c","id":3}]}', '{"list":[{"key":"c","id":3},{"key":"a","id":1}]}', '{"list":[{"key":"b","id":2},{"key":"c","id":3},{"key":"a","id":1}]}'],
    ['{"atomicList":["a","b","c"]}', '{"atomicList":[]}', '{"atomicList":[]}'],
    ['{"atomicList":["a","a","a"]}', '{"atomicList":null}', '{"atomicList":null}'],
    [
      '{"list":[{"key":"a","id":1,"bv":true},{"key":"b","id":2},{"key":"a","id":1,"bv":false,"nv":2}]}',
      '{"list":[{"key":"a","id":1,"nv":3},{"key":"c","id":3},{"key":"b","id":2}]}',
      '{"list":[{"key":"a","id":1,"nv":3},{"key":"c","id":3},{"key":"b","id":2}]}',
    ],
    ['{"list":[{"key":"a","id":1,"nv":1},{"key":"a","id":1,"nv":2}]}', '{}', '{"list":[{"key":"a","id":1,"nv":1},{"key":"a","id":1,"nv":2}]}'],
  ]);
});

test('granular maps merge by key, atomic maps are replaced, empty and null are leaves', () => {
  const root = mapType({
    granular: mapType(undefined, { elements: STRING }),
    atomic: mapType(undefined, { elements: STRING, atomic: true }),
    inner: mapType(undefined, { elements: ATOMIC_ANY }),
  });
  check(root, [
    ['{"granular":{"a":"1","b":"2"}}', '{"granular":{"b":"3","c":"4"}}', '{"granular":{"a":"1","b":"3","c":"4"}}'],
    ['{"atomic":{"a":"1","b":"2"}}', '{"atomic":{"b":"3"}}', '{"atomic":{"b":"3"}}'],
    ['{}', '{"inner":{}}', '{"inner":{}}'],
    ['{"inner":{}}', '{"inner":null}', '{"inner":null}'],
    ['{"inner":null}', '{"inner":{}}', '{"inner":{}}'],
  ]);
});

test('big integers merge as values', () => {
  const root = mapType({ n: NUMERIC, s: listType('set', NUMERIC) });
  assert.deepEqual(merge({ n: 1, s: [1n << 60n] }, { n: 9223372036854775807n, s: [2] }, root), { n: 9223372036854775807n, s: [1n << 60n, 2] });
});
