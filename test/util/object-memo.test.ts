import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ObjectMemo } from '../../src/util/object-memo.js';

describe('ObjectMemo', () => {
  it('remembers a value per object, unseen by JSON, spreads, keys, clones and deep comparisons', () => {
    const memo = new ObjectMemo<object, string>('test');
    const obj = { a: 1, nested: { b: 2 } };
    assert.equal(memo.get(obj), undefined);
    memo.set(obj, 'one');
    memo.set(obj, 'two');
    assert.equal(memo.get(obj), 'two');
    assert.equal(JSON.stringify(obj), '{"a":1,"nested":{"b":2}}');
    assert.deepEqual(Object.keys(obj), ['a', 'nested']);
    assert.equal(memo.get({ ...obj }), undefined, 'a spread copy has none');
    assert.equal(memo.get(structuredClone(obj)), undefined, 'a clone has none');
    assert.deepStrictEqual(obj, { a: 1, nested: { b: 2 } });
    assert.equal(new ObjectMemo<object, string>('test').get(obj), undefined, 'another memo of the same name has its own');
  });

  it('keeps a frozen object\'s value aside', () => {
    const memo = new ObjectMemo<object, number>('frozen');
    const frozen = Object.freeze({ a: 1 });
    memo.set(frozen, 7);
    assert.equal(memo.get(frozen), 7);
    assert.equal(memo.get(Object.freeze({ a: 1 })), undefined);
    const later = { a: 1 };
    memo.set(later, 1);
    Object.freeze(later);
    memo.set(later, 2);
    assert.equal(memo.get(later), 2, 'frozen after it had one');
  });
});
