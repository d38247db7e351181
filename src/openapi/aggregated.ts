/**
 * An aggregated server's part of /openapi/v2, as kube-aggregator takes it: of the backend's document only the
 * paths under `/apis/<group>/<version>/` of the APIService, and the definitions they reach. Its parameters are
 * written in place of their references (the backend's shared parameter names mean nothing here), and a
 * definition whose name the aggregator already publishes with other content is renamed `<name>_v2` (`_v3`, ...)
 * with every reference to it, as kube-openapi's merge does; one with the same content is shared.
 */
import type { Fragment } from './fragments.js';
import type { Schema } from './schema-types.js';
import { isRecord } from '../util/json-object.js';

/** How deep a backend's document may nest: deeper ones are refused rather than risk the stack. */
const MAX_DEPTH = 128;
/** What copies of shared parts may add to a share, in bytes of JSON. */
const MAX_COPIED_BYTES = 16 * 1024 * 1024;
/** Media types a converted operation lists its schemas under (Kubernetes' own use five). */
const MAX_MEDIA_TYPES = 8;
const DEFINITION_REF = '#/definitions/';
const PARAMETER_REF = '#/parameters/';

/** The group-version's paths and the definitions they reach, from a backend's /openapi/v2 document. */
export interface BackendPart {
  paths: Map<string, Schema>;
  definitions: Map<string, Schema>;
  /** The document's title and version (its `info`). */
  info: { title: string; version: string };
}

/** Takes a backend's document apart: throws (with a message to log) when it is no OpenAPI v2 document or nests too deep. */
export function backendPart(doc: unknown, group: string, version: string): BackendPart {
  if (!isRecord(doc) || !isRecord(doc.paths)) throw new Error('not an OpenAPI v2 document');
  const definitions = isRecord(doc.definitions) ? doc.definitions : {};
  const parameters = isRecord(doc.parameters) ? doc.parameters : {};
  const prefix = `/apis/${group}/${version}/`;
  const info = isRecord(doc.info) ? doc.info : {};
  const text = (v: unknown, fallback: string) => (typeof v === 'string' && v.length <= 256 ? v : fallback);
  const part: BackendPart = { paths: new Map(), definitions: new Map(), info: { title: text(info.title, 'Kubernetes'), version: text(info.version, 'unversioned') } };
  const wanted: string[] = [];
  const collect = (value: unknown) =>
    walk(value, 0, (ref) => {
      if (ref.startsWith(DEFINITION_REF)) wanted.push(ref.slice(DEFINITION_REF.length));
    });
  const budget = new OutputBudget();
  for (const [path, item] of Object.entries(doc.paths)) {
    if (!path.startsWith(prefix) || !isRecord(item)) continue;
    const inlined = inlineParameters(item, parameters, budget);
    collect(inlined);
    part.paths.set(path, inlined);
  }
  // The definitions the paths reach, and those they reach in turn (each once, whatever the cycles).
  while (wanted.length > 0) {
    const name = wanted.pop()!;
    if (part.definitions.has(name) || !Object.hasOwn(definitions, name) || !isRecord(definitions[name])) continue;
    const def = definitions[name] as Schema;
    part.definitions.set(name, def);
    collect(def);
  }
  return part;
}

/**
 * The fragment the part contributes, its definitions renamed where `published` (what the aggregator publishes
 * already under a name) holds another schema under the same name.
 */
export function aggregatedFragment(part: BackendPart, published: (name: string) => unknown): Fragment {
  const renamed = new Map<string, string>();
  const given = new Set<string>();
  for (const [name, def] of part.definitions) {
    const local = published(name);
    if (local === undefined || sameJson(local, def)) continue;
    // The first `_vN` free, or one already published with the same content (as kube-openapi reuses it).
    for (let i = 2; ; i++) {
      const candidate = `${name}_v${i}`;
      if (given.has(candidate) || part.definitions.has(candidate)) continue;
      const there = published(candidate);
      if (there === undefined || sameJson(there, def)) {
        renamed.set(name, candidate);
        given.add(candidate);
        break;
      }
    }
  }
  const rename = (value: Schema) => (renamed.size === 0 ? value : (rewriteRefs(value, renamed, 0) as Schema));
  const fragment: Fragment = { v2Definitions: new Map(), v2Paths: new Map(), v3: new Map() };
  for (const [name, def] of part.definitions) fragment.v2Definitions.set(renamed.get(name) ?? name, rename(def));
  for (const [path, item] of part.paths) fragment.v2Paths.set(path, rename(item));
  return fragment;
}

/**
 * What copying may add to a backend's share (inlined parameters, a converted document's media types): past it the
 * share is refused, so that a small document cannot make a large one.
 */
class OutputBudget {
  private left = MAX_COPIED_BYTES;
  private readonly sizes = new Map<unknown, number>();

  /** Counts one more copy of a value; throws when the budget is spent. */
  copy(value: unknown, times = 1): void {
    let size = this.sizes.get(value);
    if (size === undefined) this.sizes.set(value, (size = JSON.stringify(value)?.length ?? 0));
    this.left -= size * times;
    if (this.left < 0) throw new Error(`copies of shared parts would exceed ${MAX_COPIED_BYTES} bytes`);
  }
}

/** A path item with each `$ref` to a shared parameter (path-wide and per operation) replaced by that parameter. */
function inlineParameters(item: Record<string, unknown>, parameters: Record<string, unknown>, budget: OutputBudget): Schema {
  const inline = (list: unknown) =>
    Array.isArray(list)
      ? list.flatMap((p) => {
          if (!isRecord(p) || typeof p.$ref !== 'string') return [p];
          const name = p.$ref.slice(PARAMETER_REF.length);
          const shared = p.$ref.startsWith(PARAMETER_REF) && Object.hasOwn(parameters, name) ? parameters[name] : undefined;
          if (!isRecord(shared)) return [];
          budget.copy(shared);
          return [shared];
        })
      : list;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(item)) {
    if (k === '__proto__') continue;
    if (k === 'parameters') out[k] = inline(v);
    else if (isRecord(v) && Array.isArray(v.parameters)) out[k] = { ...v, parameters: inline(v.parameters) };
    else out[k] = v;
  }
  return out as Schema;
}

/** Calls `onRef` for every `$ref` string in a value; throws past MAX_DEPTH. */
function walk(value: unknown, depth: number, onRef: (ref: string) => void): void {
  if (depth > MAX_DEPTH) throw new Error(`nested more than ${MAX_DEPTH} levels deep`);
  if (Array.isArray(value)) for (const v of value) walk(v, depth + 1, onRef);
  else if (isRecord(value)) {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string') onRef(v);
      else walk(v, depth + 1, onRef);
    }
  }
}

/** A copy with `#/definitions/<old>` references pointing at their new names. */
function rewriteRefs(value: unknown, renamed: Map<string, string>, depth: number): unknown {
  if (depth > MAX_DEPTH) throw new Error(`nested more than ${MAX_DEPTH} levels deep`);
  if (Array.isArray(value)) return value.map((v) => rewriteRefs(v, renamed, depth + 1));
  if (!isRecord(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (k === '__proto__') continue;
    const target = k === '$ref' && typeof v === 'string' && v.startsWith(DEFINITION_REF) ? renamed.get(v.slice(DEFINITION_REF.length)) : undefined;
    out[k] = target ? DEFINITION_REF + target : rewriteRefs(v, renamed, depth + 1);
  }
  return out;
}

/** Deep equality of two JSON values, whatever the order of their members (Go's reflect.DeepEqual on parsed specs). */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((v, i) => sameJson(v, b[i]));
  if (!isRecord(a) || !isRecord(b) || Array.isArray(b)) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => Object.hasOwn(b, k) && sameJson(a[k], b[k]));
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch']);
/** The v2 parameter fields that describe its value: a v3 parameter's schema. */
const PARAMETER_SCHEMA_FIELDS = ['type', 'format', 'items', 'enum', 'default', 'uniqueItems', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'minLength', 'maxLength', 'pattern', 'minItems', 'maxItems', 'multipleOf'];

/**
 * The OpenAPI v3 document of a backend that publishes only v2, made from its share as kube-aggregator converts it
 * (kube-openapi's ConvertV2ToV3): definitions become components' schemas, body parameters a request body and
 * response schemas content, each of the media types the operation consumes or produces.
 */
export function v3FromBackendPart(part: BackendPart): Record<string, unknown> {
  const budget = new OutputBudget();
  const schema = (value: unknown) => v3Refs(value, 0);
  // Each schema converted once, listed under each media type (distinct, and a bounded number of them).
  const content = (types: unknown, value: unknown) => {
    const listed = Array.isArray(types) && types.length > 0 ? [...new Set(types.map(String))].slice(0, MAX_MEDIA_TYPES) : ['application/json'];
    budget.copy(value, listed.length);
    const converted = { schema: schema(value) };
    return Object.fromEntries(listed.map((t) => [t, converted]));
  };
  const parameter = (p: unknown): unknown => {
    if (!isRecord(p)) return p;
    const out: Record<string, unknown> = {};
    const valueSchema: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(p)) {
      if (k === '__proto__' || k === 'collectionFormat') continue;
      if (PARAMETER_SCHEMA_FIELDS.includes(k)) valueSchema[k] = schema(v);
      else out[k] = v;
    }
    if (Object.keys(valueSchema).length > 0) out.schema = valueSchema;
    return out;
  };
  const operation = (op: Record<string, unknown>): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(op)) {
      if (k === '__proto__' || k === 'consumes' || k === 'produces' || k === 'schemes') continue;
      if (k === 'parameters' && Array.isArray(v)) {
        const body = v.find((p) => isRecord(p) && p.in === 'body') as Record<string, unknown> | undefined;
        const others = v.filter((p) => !isRecord(p) || (p.in !== 'body' && p.in !== 'formData')).map(parameter);
        if (others.length > 0) out.parameters = others;
        if (body) out.requestBody = { content: content(op.consumes, body.schema), ...(body.required === true ? { required: true } : {}) };
      } else if (k === 'responses' && isRecord(v)) {
        out.responses = Object.fromEntries(
          Object.entries(v).map(([code, r]) => [
            code,
            isRecord(r) ? { description: typeof r.description === 'string' ? r.description : '', ...(r.schema !== undefined ? { content: content(op.produces, r.schema) } : {}) } : r,
          ]),
        );
      } else out[k] = v;
    }
    return out;
  };
  const paths: Record<string, unknown> = {};
  for (const [path, item] of part.paths) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(item)) {
      if (k === '__proto__') continue;
      if (METHODS.has(k) && isRecord(v)) out[k] = operation(v);
      else if (k === 'parameters' && Array.isArray(v)) {
        const kept = v.filter((p) => !isRecord(p) || p.in !== 'body').map(parameter);
        if (kept.length > 0) out[k] = kept;
      }
      else out[k] = v;
    }
    paths[path] = out;
  }
  const schemas: Record<string, unknown> = {};
  for (const [name, def] of part.definitions) if (name !== '__proto__') schemas[name] = schema(def);
  return { openapi: '3.0.0', info: part.info, paths, components: { schemas } };
}

/**
 * A copy with `#/definitions/<name>` references made `#/components/schemas/<name>`; a reference with fields
 * beside it (which OpenAPI 3.0 ignores) wrapped as `allOf: [{$ref}]` beside them, as kube-openapi's WrapRefs.
 */
function v3Refs(value: unknown, depth: number): unknown {
  if (depth > MAX_DEPTH) throw new Error(`nested more than ${MAX_DEPTH} levels deep`);
  if (Array.isArray(value)) return value.map((v) => v3Refs(v, depth + 1));
  if (!isRecord(value)) return value;
  const out: Record<string, unknown> = {};
  let ref: string | undefined;
  for (const [k, v] of Object.entries(value)) {
    if (k === '__proto__') continue;
    if (k === '$ref' && typeof v === 'string') ref = v.startsWith(DEFINITION_REF) ? `#/components/schemas/${v.slice(DEFINITION_REF.length)}` : v;
    else out[k] = v3Refs(v, depth + 1);
  }
  if (ref === undefined) return out;
  if (Object.keys(out).length === 0) return { $ref: ref };
  const { allOf, ...rest } = out;
  return { allOf: [{ $ref: ref }, ...(Array.isArray(allOf) ? allOf : [])], ...rest };
}
