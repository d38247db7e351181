/**
 * A built-in object's JSON in the shape kube-apiserver gives it: upstream decodes every object into its Go
 * struct and writes it back with encoding/json, so what a client reads (and what managed fields, webhooks and
 * patches see) is the struct's form, whatever the client sent. A struct-valued field is always there
 * (`status: {}`, `resources: {}`, a zero time as `null`); a field without omitempty is there with its zero
 * value (`""`, `0`, `false`, `null` for a nil list, map or pointer); an omitempty field at its zero value
 * (`""`, `0`, `false`, an empty list or map) is gone, and so is an omitzero field at its zero
 * (`creationTimestamp`). The protobuf decoder (machinery/protobuf/codec.ts) writes objects in this shape
 * already; this gives the JSON path the same.
 *
 * The walk follows the Go types, not the data: its depth is the structs' nesting, never the request's.
 */
import { parseType, type Special, type Type } from '../../api/go-type-expr.js';
import { GO_STRUCTS } from '../../api/go-types.js';
import type { JsonRecord } from '../../util/json-object.js';

type Obj = JsonRecord;

/** What to do with one field of a struct. */
interface FieldPlan {
  json: string;
  type: Type;
  omitempty: boolean;
  omitzero: boolean;
  /** Kept when present and empty: the field manager reads `managedFields: []` as "reset". */
  keepEmpty: boolean;
}

interface StructPlan {
  fields: FieldPlan[];
  /** Embedded structs, whose fields are the struct's own in JSON. */
  inline: string[];
  /** A struct with a JSON form of its own, or one that holds itself (CRD schemas): left as it is. */
  opaque: boolean;
}

/** Structs that reach themselves through their fields (JSONSchemaProps): their depth is the data's, so they are not walked. */
const recursive = new Map<string, boolean>();

function reachesItself(id: string): boolean {
  let known = recursive.get(id);
  if (known !== undefined) return known;
  // Iterative search of the structs `id`'s fields lead to (the type graph is small and finite).
  const seen = new Set<string>();
  const stack = [id];
  known = false;
  while (stack.length > 0 && !known) {
    const next = stack.pop()!;
    for (const f of GO_STRUCTS[next]?.fields ?? []) {
      const inner = structIn(parseType(f.type));
      if (inner === undefined) continue;
      if (inner === id) known = true;
      else if (!seen.has(inner)) {
        seen.add(inner);
        stack.push(inner);
      }
    }
  }
  recursive.set(id, known);
  return known;
}

function structIn(t: Type): string | undefined {
  while (t.k === 'ptr' || t.k === 'slice' || t.k === 'map') t = t.k === 'map' ? t.value : t.elem;
  return t.k === 'struct' ? t.id : undefined;
}

const plans = new Map<string, StructPlan>();

function planOf(id: string): StructPlan {
  let plan = plans.get(id);
  if (plan) return plan;
  const struct = GO_STRUCTS[id];
  plan = { fields: [], inline: [], opaque: !struct || struct.jsonForm !== undefined || reachesItself(id) };
  for (const f of struct?.fields ?? []) {
    const type = parseType(f.type);
    if (f.inline) {
      if (type.k === 'struct') plan.inline.push(type.id);
      continue;
    }
    plan.fields.push({ json: f.json, type, omitempty: f.omitempty === true, omitzero: f.omitzero === true, keepEmpty: id === 'meta/v1.ObjectMeta' && f.json === 'managedFields' });
  }
  plans.set(id, plan);
  return plan;
}

/** Give `obj`, a value of the struct `structId`, the shape encoding/json writes it in (in place). */
export function shapeAsGo(structId: string, obj: Obj): void {
  const plan = planOf(structId);
  if (plan.opaque) return;
  for (const id of plan.inline) shapeAsGo(id, obj);
  for (const f of plan.fields) shapeField(obj, f);
}

function shapeField(obj: Obj, f: FieldPlan): void {
  const had = Object.hasOwn(obj, f.json);
  const v = had ? obj[f.json] : undefined;
  const t = f.type;
  switch (t.k) {
    case 'ptr':
    case 'slice':
    case 'map':
    case 'bytes': {
      if (v === undefined || v === null) {
        // nil: null, or nothing when omitempty.
        if (f.omitempty || f.omitzero) {
          if (had) delete obj[f.json];
        } else {
          obj[f.json] = null;
        }
        return;
      }
      if (t.k !== 'ptr' && (f.omitempty || f.omitzero) && !f.keepEmpty && isEmpty(t, v)) {
        delete obj[f.json];
        return;
      }
      shapeValue(t, v, obj, f.json);
      return;
    }
    case 'scalar': {
      if (v === undefined || v === null) {
        if (f.omitempty || f.omitzero) {
          if (had) delete obj[f.json];
        } else {
          obj[f.json] = t.s === 'string' ? '' : t.s === 'bool' ? false : 0;
        }
        return;
      }
      if ((f.omitempty || f.omitzero) && (v === '' || v === 0 || v === false || v === 0n)) delete obj[f.json];
      return;
    }
    case 'struct': {
      // encoding/json never omits a struct (omitempty has no effect on one).
      if (v === undefined || v === null || typeof v !== 'object' || Array.isArray(v)) {
        if (v === undefined || v === null) obj[f.json] = zeroStruct(t.id);
        return;
      }
      shapeAsGo(t.id, v as Obj);
      return;
    }
    case 'special': {
      if (v !== undefined && v !== null) return;
      const zero = zeroSpecial(t.name);
      if (f.omitzero && (t.name === 'Time' || t.name === 'MicroTime')) {
        if (had) delete obj[f.json];
      } else {
        obj[f.json] = zero;
      }
    }
  }
}

/** Shape the elements of a present list, map or pointed-to value (`holder[key]` is `v`). */
function shapeValue(t: Type, v: unknown, holder: Obj | unknown[], key: string | number): void {
  switch (t.k) {
    case 'ptr':
      // A pointer to a struct is the struct; to anything else, the value as it is.
      if (t.elem.k === 'struct' && typeof v === 'object' && v !== null && !Array.isArray(v)) shapeAsGo(t.elem.id, v as Obj);
      else if (t.elem.k === 'slice' || t.elem.k === 'map') shapeValue(t.elem, v, holder, key);
      return;
    case 'slice':
      if (Array.isArray(v) && holdsStructs(t.elem)) for (let i = 0; i < v.length; i++) shapeElement(t.elem, v, i);
      return;
    case 'map':
      if (typeof v === 'object' && v !== null && !Array.isArray(v) && holdsStructs(t.value)) {
        const m = v as Obj;
        for (const k in m) if (Object.hasOwn(m, k)) shapeElement(t.value, m, k);
      }
      return;
    default:
  }
}

/** A list item or map value: a nil struct decodes as the zero struct; a nil pointer stays null. */
function shapeElement(t: Type, holder: Obj | unknown[], key: string | number): void {
  const v = (holder as Record<string | number, unknown>)[key];
  if (t.k === 'struct') {
    if (v === null) (holder as Record<string | number, unknown>)[key] = zeroStruct(t.id);
    else if (typeof v === 'object' && !Array.isArray(v)) shapeAsGo(t.id, v as Obj);
    return;
  }
  if (v !== null && v !== undefined) shapeValue(t, v, holder, key);
}

/** Whether values of `t` hold struct values to shape (lists of strings do not). */
function holdsStructs(t: Type): boolean {
  switch (t.k) {
    case 'struct':
      return true;
    case 'ptr':
      return holdsStructs(t.elem);
    case 'slice':
      return holdsStructs(t.elem);
    case 'map':
      return holdsStructs(t.value);
    default:
      return false;
  }
}

function isEmpty(t: Type, v: unknown): boolean {
  if (t.k === 'bytes') return v === '';
  if (Array.isArray(v)) return v.length === 0;
  if (t.k === 'map' && typeof v === 'object' && v !== null) {
    for (const k in v) if (Object.hasOwn(v, k)) return false;
    return true;
  }
  return false;
}

/** The zero value of a struct as encoding/json writes it (`{ metadata: {}, spec: {...}, status: {} }` for a Deployment). */
export function zeroStruct(id: string): Obj {
  const obj: Obj = {};
  shapeAsGo(id, obj);
  return obj;
}

/** The special types' zero values as their MarshalJSON writes them. */
function zeroSpecial(name: Special): unknown {
  switch (name) {
    case 'Quantity':
      return '0';
    case 'IntOrString':
      return 0;
    case 'Duration':
      return '0s';
    default:
      // Time, MicroTime (a zero time is null), RawExtension, FieldsV1, JSON (no bytes: null).
      return null;
  }
}
