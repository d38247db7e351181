/**
 * ObjectMeta validation as apimachinery's api/validation/objectmeta.go does it
 * for custom resources (ValidateObjectMetaAccessor / ValidateObjectMetaAccessorUpdate),
 * over unstructured metadata read the way Unstructured's accessors read it.
 */
import { childPath, field, indexPath, type FieldError } from './field-errors.js';
import { byteLength, goQuote, isGoPrint } from './go-text.js';
import { validateLabels } from './labels.js';
import { parseRfc3339 } from './time.js';
import { isQualifiedName, nameIsDNSSubdomain, validateNamespaceName, type NameValidator } from './validation.js';

export { checkMetadataTypes, isManagerMadeEntry } from './metadata-types.js';

export const FIELD_IMMUTABLE_ERROR_MSG = 'field is immutable';

/** ObjectMeta's fields, in the order Go encodes them. */
export const OBJECT_META_FIELDS = [
  'name',
  'generateName',
  'namespace',
  'selfLink',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
  'managedFields',
] as const;
export const TOTAL_ANNOTATION_SIZE_LIMIT_B = 256 * 1024;
const FIELD_MANAGER_MAX_LENGTH = 128;
const MAX_SUBRESOURCE_NAME_LENGTH = 256;
const FINALIZER_ORPHAN = 'orphan';
const FINALIZER_FOREGROUND = 'foregroundDeletion';

type Meta = Record<string, unknown>;

export interface ObjectMetaOptions {
  namespaced: boolean;
  /** Validates metadata.name (prefix=false) and metadata.generateName (prefix=true); DNS-1123 subdomain by default. */
  nameFn?: NameValidator;
  /** The field path of the metadata; "metadata" by default. */
  path?: string;
  /** false: leave name, generateName and namespace to the caller (a type with name checks of its own). */
  names?: boolean;
}

// ---- Unstructured-style accessors: a wrongly typed field reads as its zero value. ----

const str = (m: Meta, k: string): string => (typeof m[k] === 'string' ? (m[k] as string) : '');

function int64(m: Meta, k: string): bigint | undefined {
  const v = m[k];
  if (typeof v === 'bigint') return v;
  return typeof v === 'number' && Number.isInteger(v) ? BigInt(v) : undefined;
}

// The accessors hand back the value itself when it is all of the right type (the usual
// case, and every write validates metadata twice), else a filtered copy; read only.
const NO_STRINGS: Record<string, string> = Object.freeze({});
const NONE: never[] = Object.freeze([]) as unknown as never[];

function stringMap(m: Meta, k: string): Record<string, string> {
  const v = m[k];
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return NO_STRINGS;
  const map = v as Record<string, unknown>;
  for (const key of Object.keys(map)) {
    if (typeof map[key] === 'string') continue;
    const out: Record<string, string> = {};
    for (const [key2, x] of Object.entries(map)) if (typeof x === 'string') out[key2] = x;
    return out;
  }
  return map as Record<string, string>;
}

function stringSlice(m: Meta, k: string): string[] {
  const v = m[k];
  if (!Array.isArray(v)) return NONE;
  return v.every((x) => typeof x === 'string') ? (v as string[]) : v.filter((x): x is string => typeof x === 'string');
}

function objects(m: Meta, k: string): Meta[] {
  const v = m[k];
  if (!Array.isArray(v)) return NONE;
  const isObject = (x: unknown): x is Meta => typeof x === 'object' && x !== null && !Array.isArray(x);
  return v.every(isObject) ? (v as Meta[]) : v.filter(isObject);
}

/** A timestamp as metav1.Time's JSON (RFC 3339, UTC, seconds), or null when unset or unparseable. */
function timestamp(m: Meta, k: string): { text: string; ms: number } | null {
  const v = m[k];
  if (typeof v !== 'string') return null;
  try {
    const d = parseRfc3339(v);
    return { text: d.toISOString().slice(0, 19) + 'Z', ms: d.getTime() };
  } catch {
    return null;
  }
}

// ---- create ----

/** ValidateObjectMetaAccessor: metadata of an object being created. */
export function validateObjectMeta(meta: Meta, opts: ObjectMetaOptions): FieldError[] {
  const path = opts.path ?? 'metadata';
  const errs: FieldError[] = opts.names === false ? [] : validateNames(meta, opts, path);
  const generation = int64(meta, 'generation') ?? 0n;
  if (generation < 0n) errs.push(field.invalid(childPath(path, 'generation'), generation, 'must be greater than or equal to 0'));
  errs.push(...validateLabels(stringMap(meta, 'labels'), childPath(path, 'labels')));
  errs.push(...validateAnnotations(stringMap(meta, 'annotations'), childPath(path, 'annotations')));
  errs.push(...validateOwnerReferences(objects(meta, 'ownerReferences'), childPath(path, 'ownerReferences')));
  errs.push(...validateFinalizers(stringSlice(meta, 'finalizers'), childPath(path, 'finalizers')));
  errs.push(...validateManagedFields(objects(meta, 'managedFields'), childPath(path, 'managedFields')));
  return errs;
}

/** ValidateObjectMeta's name, generateName and namespace checks. */
function validateNames(meta: Meta, opts: ObjectMetaOptions, path: string): FieldError[] {
  const nameFn = opts.nameFn ?? nameIsDNSSubdomain;
  const errs: FieldError[] = [];
  const generateName = str(meta, 'generateName');
  if (generateName) {
    for (const msg of nameFn(generateName, true)) errs.push(field.invalid(childPath(path, 'generateName'), generateName, msg));
  }
  const name = str(meta, 'name');
  if (!name) errs.push(field.required(childPath(path, 'name'), 'name or generateName is required'));
  else for (const msg of nameFn(name, false)) errs.push(field.invalid(childPath(path, 'name'), name, msg));

  const namespace = str(meta, 'namespace');
  if (opts.namespaced) {
    if (!namespace) errs.push(field.required(childPath(path, 'namespace'), ''));
    else for (const msg of validateNamespaceName(namespace, false)) errs.push(field.invalid(childPath(path, 'namespace'), namespace, msg));
  } else if (namespace) {
    errs.push(field.forbidden(childPath(path, 'namespace'), 'not allowed on this type'));
  }
  return errs;
}

/** ValidateAnnotations: keys are qualified names (case-insensitively), total size at most 256 KiB. */
export function validateAnnotations(annotations: Record<string, string>, path: string): FieldError[] {
  const errs: FieldError[] = [];
  let total = 0;
  for (const [k, v] of Object.entries(annotations)) {
    for (const msg of isQualifiedName(k.toLowerCase())) errs.push(field.invalid(path, k, msg));
    total += byteLength(k) + byteLength(v);
  }
  if (total > TOTAL_ANNOTATION_SIZE_LIMIT_B) errs.push(field.tooLong(path, '', TOTAL_ANNOTATION_SIZE_LIMIT_B));
  return errs;
}

/** OwnerReference as Go serializes it (for error values). */
function ownerReferenceValue(ref: Meta): Meta {
  const out: Meta = { apiVersion: str(ref, 'apiVersion'), kind: str(ref, 'kind'), name: str(ref, 'name'), uid: str(ref, 'uid') };
  if (typeof ref.controller === 'boolean') out.controller = ref.controller;
  if (typeof ref.blockOwnerDeletion === 'boolean') out.blockOwnerDeletion = ref.blockOwnerDeletion;
  return out;
}

/** ValidateOwnerReferences. Note that upstream reports these without an index in the path. */
export function validateOwnerReferences(refs: Meta[], path: string): FieldError[] {
  const errs: FieldError[] = [];
  let firstController = '';
  for (const ref of refs) {
    const apiVersion = str(ref, 'apiVersion');
    const kind = str(ref, 'kind');
    const { group, version } = parseGroupVersion(apiVersion);
    if (!version) errs.push(field.invalid(childPath(path, 'apiVersion'), apiVersion, 'version must not be empty'));
    if (!kind) errs.push(field.invalid(childPath(path, 'kind'), kind, 'must not be empty'));
    if (!str(ref, 'name')) errs.push(field.invalid(childPath(path, 'name'), '', 'must not be empty'));
    if (!str(ref, 'uid')) errs.push(field.invalid(childPath(path, 'uid'), '', 'must not be empty'));
    if (group === '' && version === 'v1' && kind === 'Event') {
      errs.push(field.invalid(path, ownerReferenceValue(ref), `${group}/${version}, Kind=${kind} is disallowed from being an owner`));
    }
    if (ref.controller === true) {
      const current = `${kind}/${str(ref, 'name')}`;
      if (firstController) {
        errs.push(
          field.invalid(
            path,
            refs.map(ownerReferenceValue),
            `Only one reference can have Controller set to true. Found "true" in references for ${firstController} and ${current}`,
          ),
        );
      } else firstController = current;
    }
  }
  return errs;
}

/** schema.ParseGroupVersion, reading an unparseable value as empty. */
function parseGroupVersion(gv: string): { group: string; version: string } {
  if (gv === '' || gv === '/') return { group: '', version: '' };
  const parts = gv.split('/');
  if (parts.length === 1) return { group: '', version: gv };
  if (parts.length === 2) return { group: parts[0], version: parts[1] };
  return { group: '', version: '' };
}

/** ValidateFinalizers: qualified names, and not both orphan and foregroundDeletion. */
export function validateFinalizers(finalizers: string[], path: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const f of finalizers) for (const msg of isQualifiedName(f)) errs.push(field.invalid(path, f, msg));
  if (finalizers.includes(FINALIZER_ORPHAN) && finalizers.includes(FINALIZER_FOREGROUND)) {
    errs.push(field.invalid(path, finalizers, `finalizer ${FINALIZER_ORPHAN} and ${FINALIZER_FOREGROUND} cannot be both set`));
  }
  return errs;
}

/** ValidateManagedFields */
export function validateManagedFields(entries: Meta[], path: string): FieldError[] {
  const errs: FieldError[] = [];
  entries.forEach((e, i) => {
    const p = indexPath(path, i);
    const operation = str(e, 'operation');
    if (operation !== 'Apply' && operation !== 'Update') errs.push(field.invalid(childPath(p, 'operation'), operation, 'must be `Apply` or `Update`'));
    const fieldsType = str(e, 'fieldsType');
    if (fieldsType && fieldsType !== 'FieldsV1') errs.push(field.invalid(childPath(p, 'fieldsType'), fieldsType, 'must be `FieldsV1`'));
    errs.push(...validateFieldManager(str(e, 'manager'), childPath(p, 'manager')));
    if (byteLength(str(e, 'subresource')) > MAX_SUBRESOURCE_NAME_LENGTH) errs.push(field.tooLong(childPath(p, 'subresource'), '', MAX_SUBRESOURCE_NAME_LENGTH));
  });
  return errs;
}

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/** ValidateFieldManager: at most 128 bytes, printable characters only. */
export function validateFieldManager(manager: string, path: string): FieldError[] {
  // Printable ASCII, within the limit: the usual manager needs no walk by code point.
  if (manager.length <= FIELD_MANAGER_MAX_LENGTH && PRINTABLE_ASCII.test(manager)) return [];
  const errs: FieldError[] = [];
  if (byteLength(manager) > FIELD_MANAGER_MAX_LENGTH) errs.push(field.tooLong(path, '', FIELD_MANAGER_MAX_LENGTH));
  let pos = 0; // byte position, as Go ranges over a string
  for (const ch of manager) {
    const cp = ch.codePointAt(0) ?? 0;
    if (!isGoPrint(cp)) {
      const u = 'U+' + cp.toString(16).toUpperCase().padStart(4, '0');
      errs.push(field.invalid(path, manager, `invalid character ${u} (at position ${pos})`));
    }
    pos += byteLength(ch);
  }
  return errs;
}

// ---- update ----

/** ValidateObjectMetaAccessorUpdate: metadata of an object replacing `oldMeta`. */
export function validateObjectMetaUpdate(newMeta: Meta, oldMeta: Meta, path = 'metadata'): FieldError[] {
  const errs: FieldError[] = [];
  if (timestamp(oldMeta, 'deletionTimestamp')) {
    const old = new Set(stringSlice(oldMeta, 'finalizers'));
    const extra = [...new Set(stringSlice(newMeta, 'finalizers').filter((f) => !old.has(f)))].sort();
    if (extra.length) {
      errs.push(
        field.forbidden(
          childPath(path, 'finalizers'),
          `no new finalizers can be added if the object is being deleted, found new finalizers []string{${extra.map(goQuote).join(', ')}}`,
        ),
      );
    }
  }
  const rv = str(newMeta, 'resourceVersion');
  if (!rv) errs.push(field.invalid(childPath(path, 'resourceVersion'), rv, 'must be specified for an update'));
  const newGen = int64(newMeta, 'generation') ?? 0n;
  if (newGen < (int64(oldMeta, 'generation') ?? 0n)) errs.push(field.invalid(childPath(path, 'generation'), newGen, 'must not be decremented'));

  for (const k of ['name', 'namespace', 'uid']) {
    const v = str(newMeta, k);
    if (v !== str(oldMeta, k)) errs.push(field.invalid(childPath(path, k), v, FIELD_IMMUTABLE_ERROR_MSG));
  }
  for (const k of ['creationTimestamp', 'deletionTimestamp']) {
    if (newMeta[k] === oldMeta[k]) continue;
    const n = timestamp(newMeta, k);
    const o = timestamp(oldMeta, k);
    if (n?.ms !== o?.ms) errs.push(field.invalid(childPath(path, k), n ? n.text : null, FIELD_IMMUTABLE_ERROR_MSG));
  }
  const grace = int64(newMeta, 'deletionGracePeriodSeconds');
  if (grace !== int64(oldMeta, 'deletionGracePeriodSeconds')) {
    errs.push(field.invalid(childPath(path, 'deletionGracePeriodSeconds'), grace ?? null, FIELD_IMMUTABLE_ERROR_MSG));
  }

  errs.push(...validateLabels(stringMap(newMeta, 'labels'), childPath(path, 'labels')));
  errs.push(...validateAnnotations(stringMap(newMeta, 'annotations'), childPath(path, 'annotations')));
  errs.push(...validateOwnerReferences(objects(newMeta, 'ownerReferences'), childPath(path, 'ownerReferences')));
  errs.push(...validateManagedFields(objects(newMeta, 'managedFields'), childPath(path, 'managedFields')));
  return errs;
}

// ---- warnings ----

const STANDARD_FINALIZERS = new Set([FINALIZER_ORPHAN, FINALIZER_FOREGROUND, 'kubernetes']);

/**
 * The warnings the custom resource strategy returns for finalizers added by a create
 * (no oldFinalizers) or an update.
 */
export function finalizerWarnings(finalizers: string[], oldFinalizers: string[] = [], path = 'metadata.finalizers'): string[] {
  const old = new Set(oldFinalizers);
  const added = [...new Set(finalizers.filter((f) => !old.has(f)))].sort();
  const warnings: string[] = [];
  for (const f of added) {
    for (const msg of isQualifiedName(f)) warnings.push(`${path}: ${goQuote(f)}: ${msg}`);
    if (f.split('/').length === 1 && !STANDARD_FINALIZERS.has(f)) {
      warnings.push(
        f.includes('.')
          ? `${path}: ${goQuote(f)}: prefer a domain-qualified finalizer name including a path (/) to avoid accidental conflicts with other finalizer writers`
          : `${path}: ${goQuote(f)}: prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers`,
      );
    }
  }
  return warnings;
}
