/**
 * Defaulting of built-in objects along their Go structs, as upstream's generated SetObjectDefaults_*
 * functions do: at every value of a struct type, that struct's defaulter (a hook: upstream's hand-written
 * SetDefaults_<Struct>) runs first, then the `+default=` markers of its fields (go-types.ts) fill fields
 * left at their zero value, then the walk goes on into its fields, list items and map values. Quantities are
 * written in canonical form on the way (resource.Quantity decodes and encodes them so: `1000m` reads back `1`).
 */
import { deref, parseType, type Type } from '../../api/go-type-expr.js';
import { GO_STRUCTS } from '../../api/go-types.js';
import { isRecord as isObject, type JsonRecord } from '../../util/json-object.js';
import { canonicalQuantity } from '../cel/quantity-format.js';

type Obj = JsonRecord;

/** A struct's defaulter: changes the JSON object of one value of that struct in place. */
export type StructDefaulter = (value: Obj) => void;

/** Defaulters by struct id (`core/v1.Container`). */
export type StructDefaulters = Readonly<Record<string, StructDefaulter>>;


/** A `+default=` marker's value; markers naming a Go constant (`ref(...)`) are not data and are skipped. */
function markerValue(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

interface Marked {
  json: string;
  value: unknown;
  pointer: boolean;
}

/** How to default one struct: its hook, its marked fields, and the fields worth walking into. */
interface Plan {
  hook?: StructDefaulter;
  marked: Marked[];
  /** Fields holding a quantity, or a map of them (a ResourceList). */
  quantities: Array<{ json: string; map: boolean }>;
  children: Array<{ json: string; type: Type } | { inline: string }>;
}

export class TypedDefaulter {
  private readonly plans = new Map<string, Plan | null>();

  constructor(private readonly hooks: StructDefaulters) {}

  /** Default `obj`, a value of the struct `structId`. */
  apply(structId: string, obj: Obj): void {
    const plan = this.plan(structId);
    if (plan) this.struct(plan, obj);
  }

  private struct(plan: Plan, obj: Obj): void {
    plan.hook?.(obj);
    for (const m of plan.marked) {
      const cur = obj[m.json];
      const zero = cur === undefined || cur === null || (!m.pointer && (cur === '' || cur === 0 || cur === false));
      if (zero) obj[m.json] = structuredClone(m.value);
    }
    for (const q of plan.quantities) {
      const v = obj[q.json];
      if (!q.map) {
        if (v !== undefined) obj[q.json] = canonical(v);
      }
      else if (isObject(v)) for (const k of Object.keys(v)) v[k] = canonical(v[k]);
    }
    for (const c of plan.children) {
      if ('inline' in c) this.apply(c.inline, obj);
      else this.value(c.type, obj[c.json]);
    }
  }

  private value(t: Type, v: unknown): void {
    t = deref(t);
    if (t.k === 'struct') {
      if (isObject(v)) this.apply(t.id, v);
    } else if (t.k === 'slice') {
      if (Array.isArray(v)) for (const item of v) this.value(t.elem, item);
    } else if (t.k === 'map') {
      if (isObject(v)) for (const item of Object.values(v)) this.value(t.value, item);
    }
  }

  /** The plan of a struct, or null when nothing in it or under it is defaulted (memoized; cycles count as nothing). */
  private plan(structId: string): Plan | null {
    if (this.plans.has(structId)) return this.plans.get(structId)!;
    this.plans.set(structId, null);
    const plan: Plan = { hook: this.hooks[structId], marked: [], quantities: [], children: [] };
    for (const f of GO_STRUCTS[structId]?.fields ?? []) {
      const type = parseType(f.type);
      if (f.default !== undefined) {
        const value = markerValue(f.default);
        // A default equal to the zero value changes nothing in JSON, but for a pointer (absent and zero differ).
        const zero = value === '' || value === 0 || value === false;
        if (value !== undefined && (!zero || type.k === 'ptr')) plan.marked.push({ json: f.json, value, pointer: type.k === 'ptr' });
      }
      const held = deref(type);
      if (held.k === 'special' && held.name === 'Quantity') plan.quantities.push({ json: f.json, map: false });
      if (held.k === 'map' && deref(held.value).k === 'special' && (deref(held.value) as { name: string }).name === 'Quantity') plan.quantities.push({ json: f.json, map: true });
      const inner = innermostStruct(type);
      if (inner === undefined || this.plan(inner) === null) continue;
      plan.children.push(f.inline ? { inline: inner } : { json: f.json, type });
    }
    const useful = plan.hook !== undefined || plan.marked.length > 0 || plan.quantities.length > 0 || plan.children.length > 0;
    this.plans.set(structId, useful ? plan : null);
    return useful ? plan : null;
  }
}

/** The struct a field's values are, or hold (through pointers, lists and maps). */
function innermostStruct(t: Type): string | undefined {
  t = deref(t);
  if (t.k === 'struct') return t.id;
  if (t.k === 'slice') return innermostStruct(t.elem);
  if (t.k === 'map') return innermostStruct(t.value);
  return undefined;
}

/** A quantity in canonical form (anything else, e.g. absent, as it is). */
function canonical(v: unknown): unknown {
  if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'bigint') return v;
  return canonicalQuantity(v) ?? v;
}
