/**
 * A built-in object's JSON checked against its Go struct (go-types.ts) as kube-apiserver's decoder
 * reads it (sigs.k8s.io/json, encoding/json's rules): a value of the wrong JSON type is the decoding
 * error Go gives (`json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of
 * type int32`), the special types parse as theirs do, and fields the struct does not declare are
 * found (paths as strict decoding names them, `spec.containers[0].foo`) and removed.
 */
import { goJsonType } from '../../machinery/json.js';
import { quantityError, QUANTITY_FORMAT_ERROR } from '../../machinery/quantity-syntax.js';
import { parseRfc3339 } from '../../machinery/time.js';
import { parseGoDuration } from '../../machinery/time.js';
import { fieldOf, type Type } from '../../api/go-type-expr.js';
import { GO_STRUCTS } from '../../api/go-types.js';

type Json = unknown;
type Obj = Record<string, Json>;

export interface TypedCheck {
  /** The decoder's first error, when the object does not decode. */
  error?: string;
  /** Undeclared fields, removed from the object. */
  unknown: string[];
}

const INT32 = 2 ** 31;

class Checker {
  error?: string;
  readonly unknown: string[] = [];

  /** Check the fields of `obj` as the struct `id`; `stack` is the JSON field path (no indices), `path` the one with them. */
  struct(id: string, obj: Obj, stack: string, path: string): void {
    const goName = id.slice(id.indexOf('.') + 1);
    for (const key of Object.keys(obj)) {
      if (key === 'apiVersion' || key === 'kind') continue;
      const info = fieldOf(id, key);
      const p = path ? `${path}.${key}` : key;
      if (!info) {
        this.unknown.push(p);
        delete obj[key];
        continue;
      }
      const s = stack ? `${stack}.${key}` : key;
      this.value(info.type, obj[key], { struct: goName, stack: s, path: p, goType: info.field.goType ?? typeName(info.type) });
    }
  }

  private value(t: Type, v: Json, at: { struct: string; stack: string; path: string; goType: string }): void {
    if (v === null || v === undefined || this.error) return;
    const mismatch = (what: string, goType = at.goType) => {
      this.error ??= `json: cannot unmarshal ${what} into Go struct field ${at.struct}.${at.stack} of type ${goType}`;
    };
    switch (t.k) {
      case 'ptr':
        return this.value(t.elem, v, at);
      case 'scalar':
        if (t.s === 'string') {
          if (typeof v !== 'string') mismatch(goJsonType(v));
        } else if (t.s === 'bool') {
          if (typeof v !== 'boolean') mismatch(goJsonType(v));
        } else if (t.s === 'float64') {
          if (typeof v !== 'number' && typeof v !== 'bigint') mismatch(goJsonType(v));
        } else if (typeof v === 'number' || typeof v === 'bigint') {
          if (!fitsInteger(t.s, v)) mismatch(`number ${String(v)}`);
        } else {
          mismatch(goJsonType(v));
        }
        return;
      case 'bytes':
        if (typeof v !== 'string') mismatch(goJsonType(v));
        return;
      case 'struct':
        if (!isObj(v)) return mismatch(goJsonType(v));
        // A struct with a JSON form of its own (CRD schemas) decodes as that; not one of the built-ins here.
        if (GO_STRUCTS[t.id]?.jsonForm) return;
        return this.struct(t.id, v, at.stack, at.path);
      case 'slice': {
        if (!Array.isArray(v)) return mismatch(goJsonType(v));
        const elemName = at.goType.startsWith('[]') ? at.goType.slice(2) : typeName(t.elem);
        if (isLeafType(t.elem)) {
          // Leaves need no path of their own (errors name the field): one context for all items.
          const item = { ...at, goType: elemName };
          for (let i = 0; i < v.length && !this.error; i++) this.value(t.elem, v[i], item);
          return;
        }
        v.forEach((e, i) => this.value(t.elem, e, { ...at, path: `${at.path}[${i}]`, goType: elemName }));
        return;
      }
      case 'map': {
        if (!isObj(v)) return mismatch(goJsonType(v));
        const valueName = /^map\[[^\]]*\](.*)$/.exec(at.goType)?.[1] ?? typeName(t.value);
        if (isLeafType(t.value)) {
          // A ConfigMap's data can hold 100,000 strings: one context for all, no entry arrays.
          const item = { ...at, goType: valueName };
          for (const k in v) if (Object.hasOwn(v, k) && !this.error) this.value(t.value, v[k], item);
          return;
        }
        for (const [k, e] of Object.entries(v)) this.value(t.value, e, { ...at, path: `${at.path}[${k}]`, goType: valueName });
        return;
      }
      case 'special':
        return this.special(t.name, v);
    }
  }

  /** The special types' own UnmarshalJSON. */
  private special(name: string, v: Json): void {
    const set = (e: string) => (this.error ??= e);
    switch (name) {
      case 'Time':
      case 'MicroTime':
        if (typeof v !== 'string') return void set(`json: cannot unmarshal ${goJsonType(v)} into Go value of type string`);
        try {
          parseRfc3339(v);
        } catch (err) {
          set((err as Error).message);
        }
        return;
      case 'Duration':
        if (typeof v !== 'string') return void set(`json: cannot unmarshal ${goJsonType(v)} into Go value of type string`);
        if (parseGoDuration(v) === undefined) set(`time: invalid duration ${JSON.stringify(v)}`);
        return;
      case 'Quantity':
        if (typeof v === 'number' || typeof v === 'bigint') return;
        if (typeof v !== 'string') return void set(QUANTITY_FORMAT_ERROR);
        {
          const error = quantityError(v);
          if (error) set(error);
        }
        return;
      case 'IntOrString':
        if (typeof v === 'string') return;
        if ((typeof v === 'number' || typeof v === 'bigint') && fitsInteger('int32', v)) return;
        set(`json: cannot unmarshal ${typeof v === 'number' || typeof v === 'bigint' ? `number ${String(v)}` : goJsonType(v)} into Go value of type int32`);
        return;
      default:
      // RawExtension, FieldsV1, JSON: any JSON.
    }
  }
}

/** Types whose values hold no fields (their errors name the field, not the item). */
function isLeafType(t: Type): boolean {
  while (t.k === 'ptr') t = t.elem;
  return t.k === 'scalar' || t.k === 'bytes' || t.k === 'special';
}

const isObj = (v: Json): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);


function fitsInteger(s: string, v: number | bigint): boolean {
  if (typeof v === 'number' && !Number.isInteger(v)) return false;
  const n = Number(v);
  switch (s) {
    case 'int32':
      return n >= -INT32 && n < INT32;
    case 'uint32':
      return n >= 0 && n < 2 * INT32;
    case 'uint64':
      return n >= 0;
    default:
      return true; // int64: the JSON decoder already refuses what does not fit
  }
}

/** A parsed type's Go name, where the field gave none (scalars, maps and slices of scalars). */
function typeName(t: Type): string {
  switch (t.k) {
    case 'ptr':
      return typeName(t.elem);
    case 'scalar':
      return t.s;
    case 'bytes':
      return '[]uint8';
    case 'slice':
      return `[]${typeName(t.elem)}`;
    case 'map':
      return `map[string]${typeName(t.value)}`;
    case 'struct':
      return `v1.${t.id.slice(t.id.indexOf('.') + 1)}`;
    case 'special':
      return t.name;
  }
}

/** Check (and strip undeclared fields from) a built-in object of the struct `id`. */
export function checkTypedObject(id: string, obj: Obj): TypedCheck {
  const c = new Checker();
  c.struct(id, obj, '', '');
  return { error: c.error, unknown: c.unknown };
}

