/**
 * Tree operations that cannot overflow the stack. Requests may nest values
 * 10,000 levels deep (encoding/json's limit), and managedFields sets nest as
 * deep as the fields they own: far deeper than the call stack of one event
 * loop goes. Recursion is still the fast path for the shallow values almost
 * every request carries; past RECURSION_LIMIT levels an operation goes on
 * without recursion.
 */

let recursionLimit = 200;

/** How many levels an operation recurses before it goes on without recursion. */
export function getRecursionLimit(): number {
  return recursionLimit;
}

/** For tests: sets the recursion limit (0 runs every operation without recursion) and returns the previous one. */
export function setRecursionLimit(limit: number): number {
  const previous = recursionLimit;
  recursionLimit = limit;
  return previous;
}

/**
 * One node of a tree operation: its result from its inputs (x, y, z), calling `sub` for the
 * result of each child it needs. `sub` must be called with `depth + 1`.
 */
export type Step<X, Y, Z, R> = (x: X, y: Y, z: Z, sub: (x: X, y: Y, z: Z, depth: number) => R, depth: number) => R;

/**
 * A tree operation written as one step per node, run by recursion up to the recursion limit
 * and, deeper, in two passes over the rest of the tree: the first runs each step with
 * `placeholder` standing for the results of its children, to learn which children it asks for
 * (breadth first, so a node's children follow it); the second runs the steps again, children
 * before parents, with the real results. Hence a step must ask for the same children, in the
 * same order, whatever their results are (it may stop asking early), and must have no effects
 * beyond the result it returns.
 */
export function treeOperation<X, Y, Z, R>(step: Step<X, Y, Z, R>, placeholder: R): (x: X, y: Y, z: Z) => R {
  const sub = (x: X, y: Y, z: Z, depth: number): R => (depth > recursionLimit ? runFlat(step, placeholder, x, y, z) : step(x, y, z, sub, depth));
  return (x, y, z) => sub(x, y, z, 0);
}

function runFlat<X, Y, Z, R>(step: Step<X, Y, Z, R>, placeholder: R, x: X, y: Y, z: Z): R {
  const xs: X[] = [x];
  const ys: Y[] = [y];
  const zs: Z[] = [z];
  const first: number[] = [];
  const record = (cx: X, cy: Y, cz: Z): R => {
    xs.push(cx);
    ys.push(cy);
    zs.push(cz);
    return placeholder;
  };
  for (let i = 0; i < xs.length; i++) {
    first.push(xs.length);
    step(xs[i], ys[i], zs[i], record, 0);
  }
  first.push(xs.length);
  const results = new Array<R>(xs.length);
  let next = 0;
  let end = 0;
  const child = (cx: X): R => {
    if (next >= end || !Object.is(xs[next], cx)) throw new Error('tree operation: a step asked for other children than it did before');
    return results[next++];
  };
  for (let i = xs.length - 1; i >= 0; i--) {
    next = first[i];
    end = first[i + 1];
    results[i] = step(xs[i], ys[i], zs[i], child, 0);
  }
  return results[0];
}

/** How renderTree writes a value: its containers as `open`, members joined by `separator`, `close`. */
export interface TreeFormat {
  /** The text of a value that is not an array or object, or that isLeaf takes for a leaf. */
  leaf(v: unknown): string;
  /** Objects written as leaves (wrapped scalars); by default every object is a map. */
  isLeaf?(v: object): boolean;
  list: { open: string; separator: string; close: string };
  map: { open: string; separator: string; close: string };
  /** The keys of a map in the order they are written. */
  keys(m: Record<string, unknown>): string[];
  /** The text before a member's value. */
  key(k: string): string;
}

/** A value as text (Go's %v, json.Marshal and the like), written from an explicit stack. */
export function renderTree(root: unknown, format: TreeFormat): string {
  const out: string[] = [];
  // Parallel stacks: text to write as it is, or a value to render.
  const isText: boolean[] = [false];
  const items: unknown[] = [root];
  while (items.length > 0) {
    const item = items.pop();
    if (isText.pop()) {
      out.push(item as string);
      continue;
    }
    if (typeof item !== 'object' || item === null || format.isLeaf?.(item)) {
      out.push(format.leaf(item));
      continue;
    }
    if (Array.isArray(item)) {
      const { open, separator, close } = format.list;
      out.push(open);
      isText.push(true);
      items.push(close);
      for (let i = item.length - 1; i >= 0; i--) {
        isText.push(false);
        items.push(item[i]);
        if (i > 0) {
          isText.push(true);
          items.push(separator);
        }
      }
      continue;
    }
    const m = item as Record<string, unknown>;
    const { open, separator, close } = format.map;
    const keys = format.keys(m);
    out.push(open);
    isText.push(true);
    items.push(close);
    for (let i = keys.length - 1; i >= 0; i--) {
      isText.push(false, true);
      items.push(m[keys[i]], (i > 0 ? separator : '') + format.key(keys[i]));
    }
  }
  return out.join('');
}
