/**
 * The field manager of kube-apiserver (apimachinery's FieldManager and the
 * managers wrapped around the structured merge): `updateManagedFields` keeps
 * metadata.managedFields for creates, updates and non-apply patches, and
 * `applyObject` performs a server-side apply. Around the merge itself they
 * reproduce upstream's layers: managedFields taken from the request when it
 * sets valid ones, cleared by `[]` (or `[{}]`), and otherwise kept from the
 * live object; tracking started on create or by the first apply (which
 * records existing fields as "before-first-apply"); one entry per manager,
 * operation, apiVersion (for updates) and subresource, timed when it changes
 * something; at most 10 update entries (older ones merged into
 * "ancient-changes"); object metadata fields never owned; kubectl's
 * last-applied annotation honoured.
 */
import { compareGoStrings } from '../machinery/go-text.js';
import { errors } from '../machinery/status.js';
import { toRfc3339 } from '../machinery/time.js';
import { deepClone } from '../machinery/json.js';
import { conflictError } from './conflict.js';
import { creatingSet } from './created-ownership.js';
import { FieldSet } from './field-set.js';
import { allowedConflictsFromLastApplied, KUBECTL_MANAGER, updateLastApplied } from './last-applied.js';
import {
  copyManaged,
  decodeManagedFields,
  emptyManaged,
  encodingManagedFields,
  isResetManagedFields,
  ManagedFieldsError,
  managerIdentifier,
  type Managed,
} from './managed-fields.js';
import { MergeError } from './merge.js';
import { fieldElement } from './path-element.js';
import { applyingConfig, ConflictsError, updatingOwnership, type UpdaterOptions, type VersionConverter } from './updater.js';
import { runSteps, runStepsInTurns, type Steps } from '../util/turns.js';
import { validate, validationMessage } from './typed.js';
import type { TypeInfo } from './types.js';
import type { KObject } from '../api/object.js';
import { isMap, type JsonMap } from './value.js';

export const MAX_UPDATE_MANAGERS = 10;
export const BEFORE_FIRST_APPLY_MANAGER = 'before-first-apply';
export const ANCIENT_CHANGES_MANAGER = 'ancient-changes';
const CURRENT_OPERATION = 'current-operation';

export interface FieldManagerOptions {
  /** The merge type of the object in `apiVersion` (typeFromSchema, BUILTIN_OBJECT, ...). */
  type: TypeInfo;
  /** The request's group/version (`mygroup.example.com/v1`, `v1`): the version entries are recorded in. */
  apiVersion: string;
  /** '' or undefined for the main resource, else `status`, `scale`, ... */
  subresource?: string;
  /** Fields this endpoint resets and nobody owns through it (see resetFieldsFor). */
  resetFields?: FieldSet;
  /** The time recorded in changed entries (default: now). */
  now?: Date;
  /**
   * What a create is compared against (upstream: the kind's zero object, `Creater.New`); `{}` when
   * undefined. A built-in's zero struct has `spec: {}`, so a create owns spec's fields but not spec itself.
   */
  emptyObject?: KObject;
  /** The resource's other versions, for managers that wrote in them (see updater.ts); undefined: versions share paths. */
  versions?: VersionConverter;
}

export interface ApplyOptions extends FieldManagerOptions {
  /** The kind the endpoint serves: the applied object must have this kind and `apiVersion`. */
  kind: string;
  /** ?force=true: take fields other managers own instead of failing with a conflict. */
  force?: boolean;
}


/** Raised when an object does not conform to its type (upstream's typed conversion errors). */
class TypedError extends Error {}

const STRIP = FieldSet.of(
  [fieldElement('apiVersion')],
  [fieldElement('kind')],
  [fieldElement('metadata')],
  ...['name', 'namespace', 'creationTimestamp', 'selfLink', 'uid', 'clusterName', 'generation', 'managedFields', 'resourceVersion'].map((f) => [
    fieldElement('metadata'),
    fieldElement(f),
  ]),
);

/**
 * The fields an endpoint of a resource with a status subresource resets, as the
 * CRD strategies declare them: status on the main resource, metadata and spec on
 * /status. Undefined when nothing is reset.
 */
export function resetFieldsFor(opts: { hasStatusSubresource: boolean; subresource?: string }): FieldSet | undefined {
  if (!opts.hasStatusSubresource) return undefined;
  if (opts.subresource === 'status') return RESET_ON_STATUS;
  if (!opts.subresource) return RESET_ON_MAIN;
  return undefined;
}

// Shared (sets are immutable): creatingSet remembers sets per reset-field set.
const RESET_ON_STATUS = FieldSet.of([fieldElement('metadata')], [fieldElement('spec')]);
const RESET_ON_MAIN = FieldSet.of([fieldElement('status')]);

function metadataOf(obj: unknown): JsonMap | undefined {
  return isMap(obj) && isMap(obj.metadata) ? obj.metadata : undefined;
}

function managedFieldsOf(obj: unknown): unknown {
  return metadataOf(obj)?.managedFields;
}

function hasUid(obj: unknown): boolean {
  const uid = metadataOf(obj)?.uid;
  return typeof uid === 'string' && uid !== '';
}

function decodeOrEmpty(entries: unknown): Managed {
  try {
    return decodeManagedFields(entries);
  } catch (e) {
    if (e instanceof ManagedFieldsError) return emptyManaged();
    throw e;
  }
}

function setManagedFields(obj: KObject, entries: unknown): void {
  const meta = isMap(obj.metadata) ? obj.metadata : (obj.metadata = {});
  if (entries === undefined) delete meta.managedFields;
  else meta.managedFields = entries;
}

/** GroupVersionKind.String() of an object: `group/version, Kind=kind`. */
export function gvkString(apiVersion: unknown, kind: unknown): string {
  const k = typeof kind === 'string' ? kind : '';
  const av = typeof apiVersion === 'string' ? apiVersion : '';
  const parts = av.split('/');
  if (parts.length > 2) return `/, Kind=${k}`;
  const [group, version] = parts.length === 2 ? parts : ['', parts[0]];
  return `${group}/${version}, Kind=${k}`;
}

/** objectGVKNN: `namespace/name; group/version, Kind=kind`. */
function describe(obj: unknown): string {
  const meta = metadataOf(obj);
  const s = (v: unknown) => (typeof v === 'string' ? v : '');
  return `${s(meta?.namespace)}/${s(meta?.name)}; ${gvkString(isMap(obj) ? obj.apiVersion : '', isMap(obj) ? obj.kind : '')}`;
}

function checkTyped(obj: unknown, type: TypeInfo, which: 'new' | 'live'): void {
  const errs = validate(obj, type, true);
  if (errs.length) throw new TypedError(`failed to convert ${which} object (${describe(obj)}) to smd typed: ${validationMessage(errs)}`);
}

// stripMetaManager: object metadata and type fields are never owned.
function strip(managed: Managed, manager: string): void {
  const vs = managed.fields.get(manager);
  if (!vs) return;
  const set = vs.set.difference(STRIP);
  if (set.isEmpty()) managed.fields.delete(manager);
  else managed.fields.set(manager, { ...vs, set });
}

// capManagersManager: merge the oldest update entries, per apiVersion, into "ancient-changes".
function capUpdateManagers(managed: Managed): void {
  let count = 0;
  for (const vs of managed.fields.values()) if (!vs.applied) count++;
  if (count <= MAX_UPDATE_MANAGERS) return;
  const updaters = [...managed.fields.entries()].filter(([, vs]) => !vs.applied).map(([m]) => m);
  const secs = (m: string) => {
    const t = managed.times.get(m);
    return t ? Math.floor(Date.parse(t) / 1000) : 0;
  };
  updaters.sort((a, b) => secs(a) - secs(b) || compareGoStrings(a, b));
  const firstOfVersion = new Map<string, string>();
  let length = updaters.length;
  for (let i = 0; i < updaters.length && length > MAX_UPDATE_MANAGERS; i++) {
    const m = updaters[i];
    const vs = managed.fields.get(m)!;
    const time = managed.times.get(m);
    const bucket = managerIdentifier({ manager: ANCIENT_CHANGES_MANAGER, operation: 'Update', apiVersion: vs.apiVersion });
    const first = firstOfVersion.get(vs.apiVersion);
    if (first === undefined) {
      firstOfVersion.set(vs.apiVersion, m);
      continue;
    }
    if (!managed.fields.has(bucket)) {
      managed.fields.set(bucket, managed.fields.get(first)!);
      managed.fields.delete(first);
    }
    managed.fields.set(bucket, { set: vs.set.union(managed.fields.get(bucket)!.set), apiVersion: vs.apiVersion, applied: vs.applied });
    managed.fields.delete(m);
    length--;
    managed.times.set(bucket, time);
  }
}

/**
 * The update path below the request layer (capManagers → buildManagerInfo →
 * managedFieldsUpdater → stripMeta → structured merge): who owns what after `newObj`
 * replaced `liveObj`, written by `manager` (a name). In steps: the type checks and the
 * comparison (in slices) each take their own.
 */
function* trackingUpdate(liveObj: unknown, newObj: unknown, managed: Managed, manager: string, opts: FieldManagerOptions): Steps<Managed> {
  const id = updaterIdentifier(manager, opts);
  checkTyped(newObj, opts.type, 'new');
  yield;
  checkTyped(liveObj, opts.type, 'live');
  yield;
  const next = yield* updatingOwnership(liveObj, newObj, opts.apiVersion, managed, CURRENT_OPERATION, updaterOptions(opts));
  strip(next, CURRENT_OPERATION);
  const current = next.fields.get(CURRENT_OPERATION);
  if (current) {
    // The write changed fields: they join the manager's entry, which is timed now.
    next.fields.delete(CURRENT_OPERATION);
    const prev = next.fields.get(id);
    let set = prev ? prev.set.union(current.set) : current.set;
    // The manager lost the fields it changed to the current operation and takes them back:
    // most often its set is what it was, and that set (already encoded) is kept.
    const before = managed.fields.get(id);
    if (before && set !== before.set && set.equals(before.set)) set = before.set;
    const unchanged = before && set === before.set && before.apiVersion === current.apiVersion && before.applied === current.applied;
    next.fields.set(id, unchanged ? before : { ...current, set });
    if (recordsTime(opts)) next.times.set(id, toRfc3339(opts.now ?? new Date()));
  }
  capUpdateManagers(next);
  return next;
}

/**
 * trackUpdate for a create that brings no managedFields: the manager owns what the
 * object sets, a set remembered by the object's shape (see created-ownership.ts).
 */
function* trackingCreate(newObj: unknown, manager: string, opts: FieldManagerOptions): Steps<Managed> {
  const id = updaterIdentifier(manager, opts);
  let computed: Managed | undefined;
  const set = yield* creatingSet(newObj, opts.type, opts.resetFields, function* () {
    computed = yield* trackingUpdate(opts.emptyObject ?? {}, newObj, emptyManaged(), manager, opts);
    return computed.fields.get(id)?.set ?? new FieldSet();
  });
  if (computed) return computed;
  const managed = emptyManaged();
  if (set.isEmpty()) return managed;
  managed.fields.set(id, { set, apiVersion: opts.apiVersion, applied: false });
  if (recordsTime(opts)) managed.times.set(id, toRfc3339(opts.now ?? new Date()));
  return managed;
}

/** Update identifiers by manager, version and subresource (a write makes one; they repeat). */
const updaterIds = new Map<string, string>();

function updaterIdentifier(manager: string, opts: FieldManagerOptions): string {
  const key = `${manager}\0${opts.apiVersion}\0${opts.subresource ?? ''}`;
  let id = updaterIds.get(key);
  if (id === undefined) {
    id = managerIdentifier({ manager: manager || 'unknown', operation: 'Update', apiVersion: opts.apiVersion, subresource: opts.subresource });
    if (manager.includes('\0')) return id; // the key would be ambiguous
    if (updaterIds.size >= 1024) updaterIds.clear();
    updaterIds.set(key, id);
  }
  return id;
}

/**
 * Upstream maps /scale entries onto the parent through its ScaleHandler, which carries
 * no time over: entries written through /scale have none (and sort first among updates).
 */
function recordsTime(opts: FieldManagerOptions): boolean {
  return opts.subresource !== 'scale';
}

function updaterOptions(opts: FieldManagerOptions): UpdaterOptions {
  return { type: opts.type, resetFields: opts.resetFields, versions: opts.versions };
}

/**
 * FieldManager.UpdateNoErrors for a create (`liveObj` undefined), update or non-apply
 * patch by `manager` (use managerOrUserAgent for requests without ?fieldManager):
 * sets `newObj.metadata.managedFields` and returns `newObj`. Both objects must be in
 * `opts.apiVersion`. `newObj` is modified in place; `liveObj` is not.
 */
export function updateManagedFields(liveObj: KObject | undefined, newObj: KObject, manager: string, opts: FieldManagerOptions): KObject {
  return runSteps(updatingManagedFields(liveObj, newObj, manager, opts));
}

/**
 * updateManagedFields for a large object: the same steps, with a turn of the event loop between
 * them (util/turns.ts): type checks, slices of the comparison, and the encoding each take their own.
 */
export function updateManagedFieldsInTurns(liveObj: KObject | undefined, newObj: KObject, manager: string, opts: FieldManagerOptions): Promise<KObject> {
  return runStepsInTurns(updatingManagedFields(liveObj, newObj, manager, opts));
}

function* updatingManagedFields(liveObj: KObject | undefined, newObj: KObject, manager: string, opts: FieldManagerOptions): Steps<KObject> {
  const live: KObject = liveObj ?? opts.emptyObject ?? {};
  const liveManaged = () => decodeOrEmpty(managedFieldsOf(live));
  let managed: Managed;
  const requested = managedFieldsOf(newObj);
  if (opts.subresource) managed = liveManaged();
  else if (isResetManagedFields(requested)) managed = emptyManaged();
  else {
    try {
      managed = decodeManagedFields(requested);
      if (managed.fields.size === 0) managed = liveManaged();
    } catch (e) {
      if (!(e instanceof ManagedFieldsError)) throw e;
      managed = liveManaged();
    }
  }
  setManagedFields(newObj, undefined);
  try {
    // skipNonAppliedManager: an existing object without managedFields is not tracked until applied to.
    if (managed.fields.size === 0 && hasUid(live)) return newObj;
    const creating = liveObj === undefined && managed.fields.size === 0;
    const next = creating ? yield* trackingCreate(newObj, manager, opts) : yield* trackingUpdate(live, newObj, managed, manager, opts);
    setManagedFields(newObj, yield* encodingManagedFields(next, managedFieldsOf(live)));
  } catch (e) {
    if (!(e instanceof TypedError) && !(e instanceof RangeError)) throw e;
    // As upstream, a write is never refused for managedFields: the live object's are kept.
    setManagedFields(newObj, managedFieldsOf(live));
  }
  return newObj;
}

/**
 * A server-side apply of `applied` by `manager` onto `liveObj` (undefined: the object
 * does not exist yet and is created). Returns the new object, managedFields included,
 * as a fresh value (no structure shared with the inputs). Throws StatusError: 409 on
 * conflicts (unless opts.force), 400 for an applied object of another kind or version,
 * with managedFields, or not matching the type.
 */
export function applyObject(liveObj: KObject | undefined, applied: KObject, manager: string, opts: ApplyOptions): KObject {
  return runSteps(applyingObject(liveObj, applied, manager, opts));
}

/** applyObject for a large object: the same steps, with a turn of the event loop between them (util/turns.ts). */
export function applyObjectInTurns(liveObj: KObject | undefined, applied: KObject, manager: string, opts: ApplyOptions): Promise<KObject> {
  return runStepsInTurns(applyingObject(liveObj, applied, manager, opts));
}

function* applyingObject(liveObj: KObject | undefined, applied: KObject, manager: string, opts: ApplyOptions): Steps<KObject> {
  const live: KObject = liveObj ?? { apiVersion: opts.apiVersion, kind: opts.kind };
  let managed: Managed;
  try {
    managed = decodeManagedFields(managedFieldsOf(live));
  } catch (e) {
    if (e instanceof ManagedFieldsError) throw errors.internal(`failed to decode managed fields: ${e.message}`);
    throw e;
  }
  if (applied.apiVersion !== opts.apiVersion || applied.kind !== opts.kind) {
    throw errors.badRequest(`invalid object type: ${gvkString(applied.apiVersion, applied.kind)}`);
  }
  let result: { object: KObject; managed: Managed };
  try {
    try {
      result = yield* applyingTracked(live, applied, managed, manager, !!opts.force, opts);
    } catch (e) {
      if (!(e instanceof ConflictsError) || manager !== KUBECTL_MANAGER) throw e;
      // Fields kubectl applied client-side (per its annotation) may be taken over without force.
      const allowed = allowedConflictsFromLastApplied(live, opts.type, opts.apiVersion);
      if (!allowed) throw e;
      const remaining = e.conflicts.filter((c) => !allowed.has(c.path));
      if (remaining.length > 0) throw new ConflictsError(remaining);
      result = yield* applyingTracked(live, applied, managed, manager, true, opts);
    }
  } catch (e) {
    if (e instanceof ConflictsError) throw conflictError(e.conflicts);
    if (e instanceof RangeError) throw errors.badRequest(`failed to apply: the object nests too deeply`);
    throw e;
  }
  if (manager === KUBECTL_MANAGER) updateLastApplied(result.object, applied);
  yield;
  setManagedFields(result.object, yield* encodingManagedFields(result.managed, managedFieldsOf(live)));
  return result.object;
}

// skipNonApplied → buildManagerInfo → managedFieldsUpdater → stripMeta → structured merge, for Apply; pauses between its steps.
function* applyingTracked(
  live: KObject,
  applied: KObject,
  managed: Managed,
  manager: string,
  force: boolean,
  opts: ApplyOptions,
): Steps<{ object: KObject; managed: Managed }> {
  let current = managed;
  if (current.fields.size === 0) {
    // Fields set before the first apply belong to "before-first-apply".
    try {
      current = yield* trackingUpdate({ apiVersion: applied.apiVersion, kind: applied.kind }, live, current, BEFORE_FIRST_APPLY_MANAGER, opts);
    } catch (e) {
      if (e instanceof TypedError) throw errors.internal(`failed to create manager for existing fields: ${e.message}`);
      throw e;
    }
  }
  const id = managerIdentifier({ manager, operation: 'Apply', subresource: opts.subresource });
  const managedFields = managedFieldsOf(applied);
  if (Array.isArray(managedFields)) throw errors.badRequest('metadata.managedFields must be nil');
  const invalid = validate(applied, opts.type, false);
  // Upstream answers 500 for this client mistake; kapi answers 400 with the same message.
  if (invalid.length) throw errors.badRequest(`failed to create typed patch object (${describe(applied)}): ${validationMessage(invalid)}`);
  yield;
  const liveInvalid = validate(live, opts.type, true);
  if (liveInvalid.length) throw errors.internal(`failed to create typed live object (${describe(live)}): ${validationMessage(liveInvalid)}`);
  yield;
  let outcome;
  try {
    outcome = yield* applyingConfig(live, applied, opts.apiVersion, copyManaged(current), id, force, updaterOptions(opts));
  } catch (e) {
    if (e instanceof MergeError) throw errors.internal(`failed to merge config: ${e.message}`);
    throw e;
  }
  strip(outcome.managed, id);
  let object: KObject;
  if (outcome.object !== undefined) {
    if (recordsTime(opts)) outcome.managed.times.set(id, toRfc3339(opts.now ?? new Date()));
    yield;
    object = deepClone(outcome.object as KObject);
    dropNullMetadata(object);
  } else object = deepClone(live);
  return { object, managed: outcome.managed };
}

// Null metadata members of an applied configuration mean unset, as when a request body is decoded.
function dropNullMetadata(obj: KObject): void {
  const meta = metadataOf(obj);
  if (!meta) return;
  for (const k of Object.keys(meta)) if (meta[k] === null) delete meta[k];
}

