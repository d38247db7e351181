/**
 * The ownership a create records, remembered by the shape of the object.
 *
 * A create without managedFields makes its manager own every field the object
 * sets (less object metadata and the fields the endpoint resets). Which fields
 * those are depends on the object's map keys, on the JSON kind of each scalar
 * and on list items (their values name the items of associative lists), never
 * on scalar values. Objects created alike (10,000 CronTabs that differ in name,
 * labels' values and spec values) share one shape and one computed set.
 */
import type { FieldSet } from './field-set.js';
import type { TypeInfo } from './types.js';
import type { Steps } from '../util/turns.js';

/** Longest shape worth remembering: objects with big lists are computed each time. */
const MAX_SHAPE = 4096;
/** Remembered shapes per type and reset-field set; cleared when full. */
const MAX_SHAPES = 1024;

/**
 * The shape of a value: map keys (length-prefixed, so no escaping is needed)
 * with the shapes of their values, a letter per scalar kind, and lists in full.
 * Equal shapes mean equal field sets and the same outcome of type validation.
 * Undefined when the shape is longer than `limit`.
 */
export function shapeKey(value: unknown, limit = MAX_SHAPE): string | undefined {
  const parts: string[] = [];
  let length = 0;
  const walk = (v: unknown): boolean => {
    let part: string;
    switch (typeof v) {
      case 'string':
        part = 's';
        break;
      case 'number':
        part = 'n';
        break;
      case 'boolean':
        part = 'b';
        break;
      case 'bigint':
        part = 'i';
        break;
      case 'undefined':
        part = 'u';
        break;
      default:
        if (v === null) part = 'z';
        else if (Array.isArray(v)) {
          try {
            part = '[' + JSON.stringify(v) + ']';
          } catch {
            return false; // a bigint in a list: not remembered
          }
        } else {
          parts.push('{');
          for (const k in v as Record<string, unknown>) {
            if (!Object.prototype.hasOwnProperty.call(v, k)) continue;
            parts.push(k.length + ':' + k);
            length += k.length + 4;
            if (length > limit || !walk((v as Record<string, unknown>)[k])) return false;
          }
          part = '}';
        }
    }
    parts.push(part);
    length += part.length;
    return length <= limit;
  };
  return walk(value) ? parts.join('') : undefined;
}

/** Sets by shape, per merge type and per the endpoint's reset fields. */
const remembered = new WeakMap<TypeInfo, Map<FieldSet | undefined, Map<string, FieldSet>>>();

function shapesFor(type: TypeInfo, resetFields: FieldSet | undefined): Map<string, FieldSet> {
  let byReset = remembered.get(type);
  if (!byReset) remembered.set(type, (byReset = new Map()));
  let shapes = byReset.get(resetFields);
  if (!shapes) {
    if (byReset.size >= 8) byReset.clear(); // callers with sets of their own
    byReset.set(resetFields, (shapes = new Map()));
  }
  return shapes;
}

/**
 * The set a create of `obj` records, from memory or from `compute` (which may
 * throw; nothing is remembered then, and which may pause: util/turns.ts).
 * `resetFields` must be one of the shared sets resetFieldsFor returns, as it
 * keys the memory by identity.
 */
export function* creatingSet(obj: unknown, type: TypeInfo, resetFields: FieldSet | undefined, compute: () => Steps<FieldSet>): Steps<FieldSet> {
  const shape = shapeKey(obj);
  if (shape === undefined) return yield* compute();
  const shapes = shapesFor(type, resetFields);
  let set = shapes.get(shape);
  if (set === undefined) {
    set = yield* compute();
    if (shapes.size >= MAX_SHAPES) shapes.clear();
    shapes.set(shape, set);
  }
  return set;
}
