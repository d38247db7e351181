/**
 * Type checks of an object's metadata as decoding it into metav1.ObjectMeta
 * (k8s.io/apimachinery/pkg/util/json, i.e. encoding/json) would fail, with
 * Go's messages, e.g. `json: cannot unmarshal number into Go struct field
 * ObjectMeta.labels of type string`. The apiserver turns such failures into
 * 400 `... cannot be handled as a <Kind>: <message>`.
 */
import { parseRfc3339 } from './time.js';

/**
 * Whether a managedFields entry is one the field manager made (apply/managed-fields.ts
 * freezes the entries it makes; parsed ones never are). Those are well formed and never
 * change, so the metadata checks every write runs pass them by.
 */
export function isManagerMadeEntry(e: unknown): boolean {
  return typeof e === 'object' && e !== null && !Array.isArray(e) && Object.isFrozen(e);
}

type Kind = 'string' | 'uid' | 'int64' | 'bool' | 'time' | 'stringMap' | 'stringSlice' | 'ownerRefs' | 'managedFields' | 'operation' | 'any';

const GO_TYPE: Record<Exclude<Kind, 'time' | 'any'>, string> = {
  string: 'string',
  uid: 'types.UID',
  int64: 'int64',
  bool: 'bool',
  stringMap: 'map[string]string',
  stringSlice: '[]string',
  ownerRefs: '[]v1.OwnerReference',
  managedFields: '[]v1.ManagedFieldsEntry',
  operation: 'v1.ManagedFieldsOperationType',
};

const OBJECT_META: Record<string, Kind> = {
  name: 'string',
  generateName: 'string',
  namespace: 'string',
  selfLink: 'string',
  uid: 'uid',
  resourceVersion: 'string',
  generation: 'int64',
  creationTimestamp: 'time',
  deletionTimestamp: 'time',
  deletionGracePeriodSeconds: 'int64',
  labels: 'stringMap',
  annotations: 'stringMap',
  ownerReferences: 'ownerRefs',
  finalizers: 'stringSlice',
  managedFields: 'managedFields',
};

const OWNER_REFERENCE: Record<string, Kind> = {
  apiVersion: 'string',
  kind: 'string',
  name: 'string',
  uid: 'uid',
  controller: 'bool',
  blockOwnerDeletion: 'bool',
};

const MANAGED_FIELDS_ENTRY: Record<string, Kind> = {
  manager: 'string',
  operation: 'operation',
  apiVersion: 'string',
  time: 'time',
  fieldsType: 'string',
  fieldsV1: 'any',
  subresource: 'string',
};

/** Thrown for errors Go returns at once (instead of saving the first type error). */
class Fatal {
  constructor(readonly message: string) {}
}

class Checker {
  /** The first type error, which Go reports once decoding has finished. */
  firstError: string | undefined;
  /** The field path being checked (built into a message only on failure). */
  private readonly stack: string[] = [];

  constructor(private readonly prefix: string[]) {}

  struct(value: Record<string, unknown>, fields: Record<string, Kind>, structName: string): void {
    for (const key in value) {
      // The apiserver decodes case-sensitively: other spellings are unknown fields.
      if (!Object.prototype.hasOwnProperty.call(value, key) || !Object.prototype.hasOwnProperty.call(fields, key)) continue;
      this.stack.push(key);
      this.value(value[key], fields[key], structName);
      this.stack.pop();
    }
  }

  private fieldPath(structName: string): string {
    return `${structName}.${[...this.prefix, ...this.stack].join('.')}`;
  }

  private fail(structName: string, what: string, type: string): void {
    this.firstError ??= `json: cannot unmarshal ${what} into Go struct field ${this.fieldPath(structName)} of type ${type}`;
  }

  private value(v: unknown, kind: Kind, structName: string): void {
    if (v === null || v === undefined || kind === 'any') return;
    switch (kind) {
      case 'string':
      case 'uid':
      case 'operation':
        if (typeof v !== 'string') this.fail(structName, jsonKind(v), GO_TYPE[kind]);
        return;
      case 'bool':
        if (typeof v !== 'boolean') this.fail(structName, jsonKind(v), 'bool');
        return;
      case 'int64':
        if (typeof v === 'number' && Number.isSafeInteger(v)) return;
        if (typeof v === 'number' || typeof v === 'bigint') {
          const lit = String(v);
          if (!/^-?[0-9]+$/.test(lit) || BigInt(lit) > 9223372036854775807n || BigInt(lit) < -9223372036854775808n) this.fail(structName, `number ${lit}`, 'int64');
        } else this.fail(structName, jsonKind(v), 'int64');
        return;
      case 'time':
        // metav1.Time decodes itself: a nested json.Unmarshal into a string, then time.Parse.
        if (typeof v !== 'string') {
          throw new Fatal(`json: cannot unmarshal ${jsonKind(v)} into Go struct field ${this.fieldPath(structName)} of type string`);
        }
        checkTime(v);
        return;
      case 'stringMap':
        if (!isPlainObject(v)) return this.fail(structName, jsonKind(v), GO_TYPE.stringMap);
        for (const k in v) {
          const x = v[k];
          if (x !== null && typeof x !== 'string' && Object.prototype.hasOwnProperty.call(v, k)) this.fail(structName, jsonKind(x), 'string');
        }
        return;
      case 'stringSlice':
        if (!Array.isArray(v)) return this.fail(structName, jsonKind(v), GO_TYPE.stringSlice);
        for (const x of v) if (x !== null && typeof x !== 'string') this.fail(structName, jsonKind(x), 'string');
        return;
      case 'ownerRefs':
      case 'managedFields': {
        if (!Array.isArray(v)) return this.fail(structName, jsonKind(v), GO_TYPE[kind]);
        const [fields, name] = kind === 'ownerRefs' ? [OWNER_REFERENCE, 'OwnerReference'] : [MANAGED_FIELDS_ENTRY, 'ManagedFieldsEntry'];
        for (const x of v) {
          if (x === null || (kind === 'managedFields' && isManagerMadeEntry(x))) continue;
          if (!isPlainObject(x)) this.fail(structName, jsonKind(x), `v1.${name}`);
          else this.struct(x, fields, name);
        }
        return;
      }
    }
  }
}

/**
 * Time strings that parsed (every write of an object carries its creationTimestamp and
 * managedFields times again, and those repeat): a small set, emptied when full.
 */
const parsedTimes = new Set<string>();

function checkTime(v: string): void {
  if (parsedTimes.has(v)) return;
  try {
    parseRfc3339(v);
  } catch (e) {
    throw new Fatal((e as Error).message);
  }
  if (parsedTimes.size >= 4096) parsedTimes.clear();
  parsedTimes.add(v);
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** How encoding/json names a JSON value in UnmarshalTypeError. */
function jsonKind(v: unknown): string {
  if (typeof v === 'string') return 'string';
  if (typeof v === 'number' || typeof v === 'bigint') return 'number';
  if (typeof v === 'boolean') return 'bool';
  return Array.isArray(v) ? 'array' : 'object';
}

/**
 * Go's error for decoding `meta` into metav1.ObjectMeta, or undefined when it decodes.
 * By default field paths are relative to the metadata (`ObjectMeta.labels`), as when the
 * apiserver decodes a custom resource's metadata; pass fieldPrefix ['metadata'] for the
 * texts of a typed object decoded whole (`ObjectMeta.metadata.labels`).
 */
export function checkMetadataTypes(meta: unknown, fieldPrefix: string[] = []): string | undefined {
  if (meta === null || meta === undefined) return undefined;
  if (!isPlainObject(meta)) return `json: cannot unmarshal ${jsonKind(meta)} into Go value of type v1.ObjectMeta`;
  const checker = new Checker(fieldPrefix);
  try {
    checker.struct(meta, OBJECT_META, 'ObjectMeta');
  } catch (e) {
    if (e instanceof Fatal) return e.message;
    throw e;
  }
  return checker.firstError;
}
