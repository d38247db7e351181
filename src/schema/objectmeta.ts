/**
 * ObjectMeta and TypeMeta of custom resources and of embedded resources
 * (x-kubernetes-embedded-resource): coercion as a round trip through
 * metav1.ObjectMeta does it (unknown keys dropped and reported, empty values
 * dropped, timestamps normalized; type errors reported with Go's decoding texts, or
 * the malformed fields dropped when reading from storage), and the validation of
 * embedded resources (apiVersion, kind, metadata) of schema/objectmeta.
 */
import { checkMetadataTypes, isManagerMadeEntry, validateObjectMeta } from '../machinery/object-meta.js';
import { parseRfc3339 } from '../machinery/time.js';
import { isDNS1035Label, validatePathSegmentName } from '../machinery/validation.js';
import { childPath, fe, keyPath, type FieldError } from './errors.js';
import { HAS_EMBEDDED, type Structural } from './types.js';
import { append, isObject, setOwn, type JsonObject } from './values.js';

type Kind = 'str' | 'int' | 'time' | 'map' | 'list' | 'refs' | 'managed';

const OBJECT_META: Record<string, Kind> = {
  name: 'str',
  generateName: 'str',
  namespace: 'str',
  selfLink: 'str',
  uid: 'str',
  resourceVersion: 'str',
  generation: 'int',
  creationTimestamp: 'time',
  deletionTimestamp: 'time',
  deletionGracePeriodSeconds: 'int',
  labels: 'map',
  annotations: 'map',
  ownerReferences: 'refs',
  finalizers: 'list',
  managedFields: 'managed',
};
const OWNER_REF_REQUIRED = ['apiVersion', 'kind', 'name', 'uid'];
const OWNER_REF_OPTIONAL = ['controller', 'blockOwnerDeletion'];
const MANAGED_FIELDS = ['manager', 'operation', 'apiVersion', 'time', 'fieldsType', 'fieldsV1', 'subresource'];

const has = (o: JsonObject, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);

const CANONICAL_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

function normalizeTime(v: unknown): string | undefined {
  if (typeof v !== 'string') return undefined;
  if (CANONICAL_TIME.test(v) && !Number.isNaN(Date.parse(v))) return v;
  try {
    return parseRfc3339(v).toISOString().slice(0, 19) + 'Z';
  } catch {
    return undefined;
  }
}

/**
 * metadata as metav1.ObjectMeta writes it back: known fields only, empty ones
 * omitted. Unknown keys are reported (as `<prefix>.<key>`) into unknown.
 */
export function normalizeObjectMeta(meta: JsonObject, prefix: string, unknown: string[] | undefined): JsonObject {
  const out: JsonObject = {};
  for (const k of Object.keys(meta)) {
    const v = meta[k];
    const kind = has(OBJECT_META, k) ? OBJECT_META[k] : undefined;
    if (!kind) {
      unknown?.push(`${prefix}.${k}`);
      continue;
    }
    if (v === null || v === undefined) continue;
    switch (kind) {
      case 'str':
        if (v !== '') out[k] = v;
        break;
      case 'int':
        if (k === 'deletionGracePeriodSeconds' || v !== 0) out[k] = v;
        break;
      case 'time': {
        const t = normalizeTime(v);
        if (t && t !== '0001-01-01T00:00:00Z') out[k] = t;
        break;
      }
      case 'map':
        if (isObject(v) && Object.keys(v).length) {
          if (!Object.values(v).some(isNullish)) {
            out[k] = v;
            break;
          }
          const m: JsonObject = {};
          for (const [mk, mv] of Object.entries(v)) setOwn(m, mk, mv ?? '');
          out[k] = m;
        }
        break;
      case 'list':
        if (Array.isArray(v) && v.length) out[k] = v.some(isNullish) ? v.map((x) => x ?? '') : v;
        break;
      case 'refs':
        if (Array.isArray(v) && v.length) out[k] = unchangedOr(v, v.map((r, i) => normalizeStruct(r, OWNER_REF_REQUIRED, OWNER_REF_OPTIONAL, `${prefix}.${k}[${i}]`, unknown)));
        break;
      case 'managed':
        // The field manager's own entries are already in their normal form.
        if (Array.isArray(v) && v.length) out[k] = unchangedOr(v, v.map((r, i) => (isManagerMadeEntry(r) ? r : normalizeStruct(r, [], MANAGED_FIELDS, `${prefix}.${k}[${i}]`, unknown))));
        break;
    }
  }
  // Metadata already in its normal form stays the same object (and so do its parts): the field manager
  // and the stores compare and share unchanged objects by identity.
  return sameFields(meta, out) ? meta : out;
}

const isNullish = (x: unknown): boolean => x === null || x === undefined;

/** `a` and `b` have the same fields in the same order, with identical values. */
function sameFields(a: JsonObject, b: JsonObject): boolean {
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i] || a[ka[i]] !== b[kb[i]]) return false;
  return true;
}

/** The list of structs as it was, when normalizing changed none of them; else the normalized list. */
function unchangedOr(list: unknown[], normalized: JsonObject[]): unknown[] {
  for (let i = 0; i < list.length; i++) {
    const x = list[i];
    if (x !== normalized[i] && !(isObject(x) && sameFields(x, normalized[i]))) return normalized;
  }
  return list;
}

function normalizeStruct(v: unknown, required: string[], optional: string[], prefix: string, unknown: string[] | undefined): JsonObject {
  const src = isObject(v) ? v : {};
  const out: JsonObject = {};
  for (const k of required) out[k] = typeof src[k] === 'string' ? src[k] : '';
  for (const k of Object.keys(src)) {
    if (required.includes(k)) continue;
    if (!optional.includes(k)) {
      unknown?.push(`${prefix}.${k}`);
      continue;
    }
    const x = src[k];
    if (x === null || x === undefined || x === '') continue;
    out[k] = k === 'time' ? (normalizeTime(x) ?? x) : x;
  }
  return out;
}

const isStr = (v: unknown): boolean => v === null || typeof v === 'string';
const isStrMap = (v: unknown): boolean => v === null || (isObject(v) && Object.values(v).every(isStr));
const isStrList = (v: unknown): boolean => v === null || (Array.isArray(v) && v.every(isStr));
const isTime = (v: unknown): boolean => v === null || (typeof v === 'string' && CANONICAL_TIME.test(v) && !Number.isNaN(Date.parse(v)));
const isInt = (v: unknown): boolean => v === null || typeof v === 'bigint' || Number.isSafeInteger(v);
const isStructEntry = (e: unknown, fields: Record<string, (x: unknown) => boolean>): boolean =>
  e === null || (isObject(e) && Object.keys(e).every((k) => !has(fields, k) || fields[k](e[k])));
const isStruct = (v: unknown, fields: Record<string, (x: unknown) => boolean>): boolean =>
  v === null || (Array.isArray(v) && v.every((e) => isStructEntry(e, fields)));
const OWNER_REF_CHECKS = { apiVersion: isStr, kind: isStr, name: isStr, uid: isStr, controller: (v: unknown) => v === null || typeof v === 'boolean', blockOwnerDeletion: (v: unknown) => v === null || typeof v === 'boolean' };
const MANAGED_CHECKS = { manager: isStr, operation: isStr, apiVersion: isStr, time: isTime, fieldsType: isStr, fieldsV1: () => true, subresource: isStr };
const QUICK: Record<Kind, (v: unknown) => boolean> = {
  str: isStr,
  int: isInt,
  time: isTime,
  map: isStrMap,
  list: isStrList,
  refs: (v) => isStruct(v, OWNER_REF_CHECKS),
  managed: (v) => v === null || (Array.isArray(v) && v.every((e) => isManagerMadeEntry(e) || isStructEntry(e, MANAGED_CHECKS))),
};

/** A fast "surely decodes" test; when it says no, checkMetadataTypes gives Go's error (or none). */
function quickWellTyped(meta: unknown): boolean {
  if (!isObject(meta)) return false;
  for (const k of Object.keys(meta)) if (has(OBJECT_META, k) && !QUICK[OBJECT_META[k]](meta[k])) return false;
  return true;
}

/** Drops the fields of metadata that fail to decode (GetObjectMeta with dropMalformedFields). */
function dropMalformed(meta: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(meta)) if (!checkMetadataTypes({ [k]: v })) setOwn(out, k, v);
  return out;
}

/**
 * Coerces the metadata at obj.metadata in place. Returns Go's decoding error text when
 * the metadata does not decode (and dropInvalid is false).
 */
export function coerceMetadata(obj: JsonObject, prefix: string, unknown: string[] | undefined, dropInvalid: boolean, keepZeroCreation: boolean): string | undefined {
  if (!has(obj, 'metadata')) return undefined;
  let meta = obj.metadata;
  if (meta === null) {
    delete obj.metadata;
    return undefined;
  }
  const err = quickWellTyped(meta) ? undefined : checkMetadataTypes(meta);
  if (err) {
    if (!dropInvalid) return err;
    if (!isObject(meta)) return undefined;
    meta = dropMalformed(meta);
  }
  const m = normalizeObjectMeta(meta as JsonObject, prefix ? `${prefix}.metadata` : 'metadata', unknown);
  if (keepZeroCreation && !has(m, 'creationTimestamp') && has(meta as JsonObject, 'creationTimestamp')) m.creationTimestamp = null;
  obj.metadata = m;
  return undefined;
}

/**
 * Coerce of schema/objectmeta (not at the root): apiVersion/kind of embedded resources
 * must be strings, their metadata is an ObjectMeta. Returns the first error.
 */
export function coerceEmbedded(path: string, x: unknown, s: Structural | undefined, unknown: string[] | undefined, dropInvalid: boolean): FieldError | undefined {
  if (!s || !(s.subtree & HAS_EMBEDDED)) return undefined;
  if (Array.isArray(x)) {
    for (let i = 0; i < x.length; i++) {
      const e = coerceEmbedded(`${path}[${i}]`, x[i], s.items, unknown, dropInvalid);
      if (e) return e;
    }
    return undefined;
  }
  if (!isObject(x)) return undefined;
  for (const k of Object.keys(x)) {
    if (s.embeddedResource) {
      if (k === 'apiVersion' || k === 'kind') {
        if (typeof x[k] !== 'string') {
          if (dropInvalid) delete x[k];
          else return fe.invalid(childPath(path, k), x[k], 'must be a string');
        }
      } else if (k === 'metadata') {
        const v = x[k];
        const err = coerceMetadata(x, path, unknown, dropInvalid, false);
        if (err) return fe.invalid(childPath(path, 'metadata'), v, err);
      }
    }
    const prop = s.properties?.get(k);
    if (prop) {
      const e = coerceEmbedded(childPath(path, k), x[k], prop, unknown, dropInvalid);
      if (e) return e;
    } else if (s.additionalProperties) {
      const e = coerceEmbedded(keyPath(path, k), x[k], s.additionalProperties.schema, unknown, dropInvalid);
      if (e) return e;
    }
  }
  return undefined;
}

/** schemaobjectmeta.Validate with isResourceRoot=false: every embedded resource below the root. */
export function validateEmbeddedResources(path: string, x: unknown, s: Structural | undefined): FieldError[] {
  const errs: FieldError[] = [];
  walk(path, x, s, errs);
  return errs;
}

function walk(path: string, x: unknown, s: Structural | undefined, errs: FieldError[]): void {
  if (!s || !(s.subtree & HAS_EMBEDDED)) return;
  if (Array.isArray(x)) {
    for (let i = 0; i < x.length; i++) walk(`${path}[${i}]`, x[i], s.items, errs);
    return;
  }
  if (!isObject(x)) return;
  if (s.embeddedResource) append(errs, validateEmbeddedResource(path, x));
  for (const k of Object.keys(x)) {
    const prop = s.properties?.get(k);
    if (prop) walk(childPath(path, k), x[k], prop, errs);
    else if (s.additionalProperties) walk(keyPath(path, k), x[k], s.additionalProperties.schema, errs);
  }
}

function parseGroupVersionError(gv: string): string | undefined {
  if (gv === '' || gv === '/') return undefined;
  return gv.split('/').length > 2 ? `unexpected GroupVersion string: ${gv}` : undefined;
}

export function validateEmbeddedResource(path: string, x: JsonObject): FieldError[] {
  const errs: FieldError[] = [];
  if (!has(x, 'apiVersion')) errs.push(fe.required(childPath(path, 'apiVersion'), ''));
  if (!has(x, 'kind')) errs.push(fe.required(childPath(path, 'kind'), ''));
  for (const k of Object.keys(x)) {
    const v = x[k];
    if (k === 'apiVersion') {
      const p = childPath(path, k);
      if (typeof v !== 'string') errs.push(fe.invalid(p, v, 'must be a string'));
      else if (v === '') errs.push(fe.invalid(p, v, 'must not be empty'));
      else {
        const e = parseGroupVersionError(v);
        if (e) errs.push(fe.invalid(p, v, e));
      }
    } else if (k === 'kind') {
      const p = childPath(path, k);
      if (typeof v !== 'string') errs.push(fe.invalid(p, v, 'must be a string'));
      else if (v === '') errs.push(fe.invalid(p, v, 'must not be empty'));
      else {
        const e = isDNS1035Label(v.toLowerCase());
        if (e.length) errs.push(fe.invalid(p, v, 'may have mixed case, but should otherwise match: ' + e.join(',')));
      }
    } else if (k === 'metadata') {
      const p = childPath(path, 'metadata');
      const err = checkMetadataTypes(v);
      if (err) errs.push(fe.invalid(p, v, err));
      else {
        const meta: JsonObject = isObject(v) ? { ...v } : {};
        if (typeof meta.name !== 'string' || meta.name === '') meta.name = 'fakename';
        const namespaced = typeof meta.namespace === 'string' && meta.namespace !== '';
        append(errs, validateObjectMeta(meta, { namespaced, nameFn: validatePathSegmentName, path: p }));
      }
    }
  }
  return errs;
}
