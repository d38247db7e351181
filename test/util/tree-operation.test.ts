/** treeOperation and renderTree: recursion while shallow, the same results without it when deep. */
import assert from 'node:assert/strict';
import { afterEach, test } from 'node:test';
import { getRecursionLimit, renderTree, setRecursionLimit, treeOperation, type TreeFormat } from '../../src/util/tree-operation.js';

const LIMIT = getRecursionLimit();
afterEach(() => setRecursionLimit(LIMIT));

interface Node {
  v: number;
  kids: Node[];
}

/** A chain `depth` nodes long, each also holding `width - 1` leaves. */
function tree(depth: number, width: number): Node {
  let n: Node = { v: 0, kids: [] };
  for (let i = 1; i < depth; i++) {
    const kids = [n];
    for (let j = 1; j < width; j++) kids.push({ v: j, kids: [] });
    n = { v: i, kids };
  }
  return n;
}

// A result that depends on the order children are asked for and on their results.
const signature = treeOperation<Node, number, undefined, string>((n, scale, _, sub, depth) => {
  let s = `${n.v * scale}(`;
  for (const k of n.kids) s += sub(k, scale, undefined, depth + 1) + ',';
  return s + ')';
}, '');

test('treeOperation gives the same result by recursion and without it', () => {
  const t = tree(50, 3);
  const recursive = signature(t, 2, undefined);
  for (const limit of [0, 1, 7]) {
    setRecursionLimit(limit);
    assert.equal(signature(t, 2, undefined), recursive, `limit ${limit}`);
  }
});

test('treeOperation handles trees far deeper than the stack goes', () => {
  const count = treeOperation<Node, undefined, undefined, number>((n, _y, _z, sub, depth) => {
    let c = 1;
    for (const k of n.kids) c += sub(k, undefined, undefined, depth + 1);
    return c;
  }, 0);
  assert.equal(count(tree(200_000, 2), undefined, undefined), 399_999);
});

test('treeOperation refuses a step that asks for other children once it has their results', () => {
  let calls = 0;
  const fickle = treeOperation<Node, undefined, undefined, number>((n, _y, _z, sub, depth) => {
    calls++;
    // Asks for its children only when it has not been asked before: the second pass differs.
    const kids = calls > 3 ? n.kids.slice().reverse() : n.kids;
    let c = 1;
    for (const k of kids) c += sub(k, undefined, undefined, depth + 1);
    return c;
  }, 0);
  setRecursionLimit(0);
  assert.throws(() => fickle(tree(3, 3), undefined, undefined), /asked for other children/);
});

test('renderTree writes nested values without recursion', () => {
  const format: TreeFormat = {
    leaf: (v) => JSON.stringify(v) ?? 'null',
    list: { open: '[', separator: ',', close: ']' },
    map: { open: '{', separator: ',', close: '}' },
    keys: (m) => Object.keys(m).sort(),
    key: (k) => JSON.stringify(k) + ':',
  };
  assert.equal(renderTree({ b: [1, 'x', null, [], {}], a: { c: true } }, format), '{"a":{"c":true},"b":[1,"x",null,[],{}]}');
  let deep: unknown = 1;
  for (let i = 0; i < 100_000; i++) deep = i % 2 ? [deep] : { a: deep };
  const text = renderTree(deep, format);
  // The leaf, 50,000 lists (`[`, `]`) and 50,000 maps (`{"a":`, `}`).
  assert.equal(text.length, 1 + 50_000 * 2 + 50_000 * 6);
  assert.ok(text.startsWith('[{"a":[{"a":'));
});
