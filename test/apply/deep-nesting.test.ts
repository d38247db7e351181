/**
 * Server-side apply machinery on values and field sets nested as deep as a request may
 * (10,000 levels) and deeper: nothing overflows the stack, costs stay linear in the depth,
 * and the iterative paths give what the recursive ones give.
 */
import assert from 'node:assert/strict';
import { bestTimes } from '../util/timing.js';
import { afterEach, describe, it } from 'node:test';
import { compare } from '../../src/apply/compare.js';
import { applyObject, updateManagedFields } from '../../src/apply/field-manager.js';
import { FieldSet, FieldsV1Error, MAX_FIELDS_V1_DEPTH } from '../../src/apply/field-set.js';
import { decodeManagedFields, ManagedFieldsError } from '../../src/apply/managed-fields.js';
import { merge } from '../../src/apply/merge.js';
import { fieldElement, pathString } from '../../src/apply/path-element.js';
import { ensureNamedFieldsAreMembers, reconcileFieldSet, removeItems } from '../../src/apply/remove.js';
import { typeFromSchema } from '../../src/apply/schema-types.js';
import { toFieldSet, validate } from '../../src/apply/typed.js';
import { BUILTIN_OBJECT, DEDUCED } from '../../src/apply/types.js';
import { compareValues, equalValues, goFormatV, goJson } from '../../src/apply/value.js';
import { deepCloneMutable } from '../../src/machinery/json.js';
import { getRecursionLimit, setRecursionLimit } from '../../src/util/tree-operation.js';
import { SCHEMA } from './harness.js';

const LIMIT = getRecursionLimit();
afterEach(() => setRecursionLimit(LIMIT));

type Obj = Record<string, any>;

/** `{key: {key: ... leaf}}`, `depth` objects deep. */
function nest(depth: number, leaf: unknown = 1, key = 'a'): Obj {
  let v: unknown = leaf;
  for (let i = 0; i < depth; i++) v = { [key]: v };
  return v as Obj;
}

/** How many objects nest along the first member of each (the chain nest() makes). */
function chainDepth(v: unknown, skip?: string): number {
  let n = 0;
  for (let x = v; typeof x === 'object' && x !== null && !Array.isArray(x); n++) {
    const keys = Object.keys(x).filter((k) => k !== skip);
    if (keys.length === 0) return n + 1;
    x = (x as Obj)[keys[keys.length - 1]];
  }
  return n;
}

const TYPE = typeFromSchema(SCHEMA);
const opts = (extra: Obj = {}) => ({ type: TYPE, apiVersion: 'example.com/v1', now: new Date(Date.UTC(2024, 0, 1)), ...extra });
const widget = (extra: unknown) => ({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'default' }, spec: { extra } });

describe('server-side apply on objects nested 10,000 levels deep', () => {
  // An object as deep as a request may be: root, spec, extra, then the chain.
  const DEPTH = 10_000 - 3;

  it('records, updates and applies ownership of the deepest fields', () => {
    const created = updateManagedFields(undefined, widget(nest(DEPTH)), 'creator', opts());
    created.metadata.uid = 'u';
    const [entry] = created.metadata.managedFields;
    assert.equal(entry.manager, 'creator');
    // f:spec, f:extra, then an f:a for each level (each also a member: ".").
    assert.equal(chainDepth(entry.fieldsV1, '.'), DEPTH + 3);

    const next = deepCloneMutable(created);
    let leafParent = next.spec.extra;
    for (let i = 1; i < DEPTH; i++) leafParent = leafParent.a;
    leafParent.a = 2;
    const updated = updateManagedFields(created, next, 'updater', opts());
    const managers = updated.metadata.managedFields.map((e: Obj) => e.manager);
    assert.deepEqual(managers, ['creator', 'updater']);
    // The updater owns the changed leaf, all the way down.
    assert.equal(chainDepth(updated.metadata.managedFields[1].fieldsV1), DEPTH + 3);

    const applied = applyObject(updated, { ...widget(nest(DEPTH, 3, 'b')) }, 'applier', { ...opts(), kind: 'Widget' });
    assert.equal(chainDepth(applied.spec.extra.b), DEPTH - 1);
    assert.equal(chainDepth(applied.spec.extra.a), DEPTH - 1);
    assert.deepEqual(
      applied.metadata.managedFields.map((e: Obj) => e.manager),
      ['applier', 'creator', 'updater'],
    );
  });

  it('compares, merges, removes and validates deep values', () => {
    const a = nest(DEPTH, 1);
    const b = nest(DEPTH, 2);
    const c = compare(a, b, DEDUCED);
    assert.equal(c.modified.size(), 1);
    assert.equal(c.added.isEmpty() && c.removed.isEmpty(), true);
    assert.equal(c.modified.paths()[0].length, DEPTH);
    assert.equal(chainDepth(merge(a, nest(DEPTH, 5, 'b'), DEDUCED)), DEPTH);
    const owned = toFieldSet(a, DEDUCED);
    assert.equal(removeItems(a, owned, DEDUCED), undefined);
    assert.deepEqual(validate(a, BUILTIN_OBJECT, false), []);
    const wrong = nest(DEPTH - 2, 'x');
    assert.equal(validate({ apiVersion: 'v1', kind: 'K', metadata: { name: nest(DEPTH) }, spec: wrong }, BUILTIN_OBJECT, false).length, 1);
    assert.equal(ensureNamedFieldsAreMembers(owned, DEDUCED).size(), owned.size());
    assert.equal(reconcileFieldSet(owned, DEDUCED), undefined);
  });

  it('keeps costs linear in the depth', () => {
    // A quadratic step shows as a ratio near 64 between these depths; linear ones near 8.
    const cost = (depth: number) => {
      const v = nest(depth);
      const w = nest(depth, 2);
      let best = Infinity;
      for (let i = 0; i < 5; i++) {
        const t0 = performance.now();
        const set = toFieldSet(v, DEDUCED);
        compare(v, w, DEDUCED);
        // A copy: the set's own (frozen) fieldsV1 object would be known already.
        FieldSet.fromFieldsV1(deepCloneMutable(set.union(toFieldSet(w, DEDUCED)).toFieldsV1()));
        best = Math.min(best, performance.now() - t0);
      }
      return best;
    };
    cost(1_000); // warm up
    // The steps are linear (about 8 with a young generation the chains fit in, --max-semi-space-size=64), but V8
    // copies a long chain of new objects at each scavenge while its young generation is small: 8 to 36 measured.
    const [small, big] = bestTimes(() => [cost(1_200), cost(8 * 1_200)], ([a, b]) => b / a < 40);
    const ratio = big / small;
    assert.ok(ratio < 40, `cost ratio ${ratio.toFixed(1)} for 8x the depth`);
  });
});

describe('field sets nested deeper than a request may', () => {
  const chain = (depth: number, leaf: string) => {
    const s = new FieldSet();
    const path = [];
    for (let i = 0; i < depth; i++) path.push(fieldElement('a'));
    path.push(fieldElement(leaf));
    s.insert(path);
    return s;
  };

  it('takes unions, intersections and differences without recursion', () => {
    const x = chain(20_000, 'x');
    const y = chain(20_000, 'y');
    const u = x.union(y);
    assert.equal(u.size(), 2);
    assert.equal(u.intersection(x).equals(x), true);
    assert.equal(u.difference(y).equals(x), true);
    assert.equal(u.recursiveDifference(FieldSet.of([fieldElement('a')])).isEmpty(), true);
    assert.equal(x.intersection(y).isEmpty(), true);
    assert.deepEqual(
      u.paths().map((p) => pathString(p).slice(-4)),
      ['.a.x', '.a.y'],
    );
  });

  it('reads fieldsV1 as deep as json-iterator does, and refuses deeper', () => {
    // A fieldsV1 value MAX_FIELDS_V1_DEPTH objects deep reads; one more level does not.
    const fields = (depth: number) => nest(depth - 1, {}, 'f:a');
    const set = FieldSet.fromFieldsV1(fields(MAX_FIELDS_V1_DEPTH));
    assert.equal(set.size(), 1);
    assert.equal(chainDepth(set.toFieldsV1()), MAX_FIELDS_V1_DEPTH);
    assert.throws(() => FieldSet.fromFieldsV1(fields(MAX_FIELDS_V1_DEPTH + 1)), (e) => e instanceof FieldsV1Error && /exceeded max depth/.test(e.message));
    // Levels json-iterator skips count too (the "." of a member).
    const dotted = nest(MAX_FIELDS_V1_DEPTH - 1, { '.': {} }, 'f:a');
    assert.throws(() => FieldSet.fromFieldsV1(dotted), FieldsV1Error);
    const entry = { manager: 'm', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: fields(MAX_FIELDS_V1_DEPTH + 1) };
    assert.throws(() => decodeManagedFields([entry]), (e) => e instanceof ManagedFieldsError && /error decoding set: incrementDepth: exceeded max depth/.test(e.message));
  });
});

describe('JSON values nested 10,000 levels deep', () => {
  it('compares, prints and encodes them', () => {
    const a = nest(10_000, [1, 'x']);
    const b = nest(10_000, [1, 'y']);
    assert.equal(equalValues(a, deepCloneMutable(a)), true);
    assert.equal(equalValues(a, b), false);
    assert.equal(compareValues(a, b), -1);
    assert.equal(compareValues(b, a), 1);
    assert.equal(compareValues(nest(10_000, 1), { a: nest(9_999, 1), b: 1 }), -1);
    assert.equal(goJson(a), '{"a":'.repeat(10_000) + '[1,"x"]' + '}'.repeat(10_000));
    assert.equal(goFormatV(a), 'map[a:'.repeat(10_000) + '[1 x]' + ']'.repeat(10_000));
  });

  it('gives the same answers with recursion as without', () => {
    // Random values and sets through every operation, once recursive and once with the iterative paths only.
    let seed = 7;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
    const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)];
    const keys = ['a', 'b', 'name', 'extra', 'containers', 'ports', 'containerPort', 'protocol', 'tags', 'config', 'spec'];
    const value = (d: number): unknown => {
      const r = rnd();
      if (d > 6 || r < 0.3) return pick([1, 2, 'a', 'TCP', true, null, 80, 2n]);
      if (r < 0.5) return Array.from({ length: Math.floor(rnd() * 3) }, () => value(d + 1));
      const o: Obj = {};
      for (let i = Math.floor(rnd() * 4); i > 0; i--) o[pick(keys)] = value(d + 1);
      return o;
    };
    const safe = (f: () => unknown): unknown => {
      try {
        return f();
      } catch (e) {
        return `threw ${(e as Error).message}`;
      }
    };
    const run = () => {
      const out: string[] = [];
      for (let i = 0; i < 300; i++) {
        const x = { spec: value(0) };
        const y = { spec: value(0) };
        for (const t of [DEDUCED, TYPE]) {
          const fx = toFieldSet(x, t);
          const fy = toFieldSet(y, t);
          const c = compare(x, y, t);
          out.push(
            JSON.stringify([
              validate(x, t, false),
              fx.toFieldsV1(),
              fx.union(fy).toFieldsV1(),
              fx.intersection(fy).toFieldsV1(),
              fx.difference(fy).toFieldsV1(),
              fx.recursiveDifference(fy).toFieldsV1(),
              [c.added.toFieldsV1(), c.modified.toFieldsV1(), c.removed.toFieldsV1()],
              safe(() => merge(x, y, t) ?? null),
              safe(() => removeItems(x, fy, t) ?? null),
              ensureNamedFieldsAreMembers(fx, t).toFieldsV1(),
              compareValues(x, y),
              goJson(x),
            ], (_k, v) => (typeof v === 'bigint' ? `${v}n` : v)),
          );
        }
      }
      return out;
    };
    const recursive = run();
    seed = 7;
    setRecursionLimit(0);
    assert.deepEqual(run(), recursive);
  });
});
