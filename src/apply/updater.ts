/**
 * structured-merge-diff's merge.Updater for one object type: Update records
 * what a write changed as owned by its manager (taking it from others), and
 * Apply merges an applied configuration, removes what the applier owned
 * before and no longer applies (unless someone else owns it), and fails with
 * the conflicts with other managers unless forced. A manager that wrote in
 * another version sees the change in its own version (`versions`: upstream's
 * versionConverter), and one whose version no longer converts is dropped;
 * without `versions` all API versions of a kind share field paths (custom
 * resources, whose versions differ in schema, not in paths).
 */
import { compareGoStrings } from '../machinery/go-text.js';
import { comparing, type Comparison } from './compare.js';
import type { Steps } from '../util/turns.js';
import { FieldSet } from './field-set.js';
import type { Managed, VersionedSet } from './managed-fields.js';
import { merge } from './merge.js';
import type { Path } from './path-element.js';
import { ensureNamedFieldsAreMembers, reconcileFieldSet, removeItems } from './remove.js';
import { toFieldSet } from './typed.js';
import type { TypeInfo } from './types.js';
import { equalValues } from './value.js';

export interface UpdaterOptions {
  type: TypeInfo;
  /** Fields the endpoint resets (e.g. status on the main resource): never owned, never compared. */
  resetFields?: FieldSet;
  /** The request's version's objects in another version of the resource; null when that version does not convert. */
  versions?: VersionConverter;
}

/** Another version of a resource, for the managers that wrote in it: its merge type and how an object reads in it. */
export type VersionConverter = (apiVersion: string) => { type: TypeInfo; convert: (obj: unknown) => unknown } | null;

export interface Conflict {
  manager: string;
  path: Path;
}

/** merge.Conflicts: the fields an apply would take from other managers. */
export class ConflictsError extends Error {
  constructor(readonly conflicts: Conflict[]) {
    super(`${conflicts.length} conflicts`);
    this.name = 'ConflictsError';
  }
}

function filter(set: FieldSet, opts: UpdaterOptions): FieldSet {
  return opts.resetFields ? set.recursiveDifference(opts.resetFields) : set;
}

/** Ownership of fields whose type became atomic collapses to the field. */
function reconcile(fields: Map<string, VersionedSet>, type: TypeInfo): Map<string, VersionedSet> {
  const out = new Map<string, VersionedSet>();
  for (const [m, vs] of fields) {
    const r = reconcileFieldSet(vs.set, type);
    out.set(m, r ? { ...vs, set: r } : vs);
  }
  return out;
}

/**
 * Updater.update: other managers lose what changed (conflicts unless forced) and what was removed; pauses
 * while it compares (util/turns.ts).
 */
function* takingChanges(
  oldObj: unknown,
  newObj: unknown,
  apiVersion: string,
  fields: Map<string, VersionedSet>,
  workflow: string,
  force: boolean,
  opts: UpdaterOptions,
): Steps<Comparison> {
  const raw = yield* comparing(oldObj, newObj, opts.type);
  yield;
  const cmp = { removed: filter(raw.removed, opts), modified: filter(raw.modified, opts), added: filter(raw.added, opts) };
  yield;
  // The comparison (and what it changed) in each version another manager wrote in, each in steps of its own.
  const byVersion = new Map<string, { cmp: Comparison; changed: FieldSet } | null>([[apiVersion, { cmp, changed: cmp.modified.union(cmp.added) }]]);
  yield;
  if (opts.versions) {
    for (const [m, vs] of fields) {
      if (m === workflow || byVersion.has(vs.apiVersion)) continue;
      byVersion.set(vs.apiVersion, yield* comparingIn(opts.versions, vs.apiVersion, oldObj, newObj, opts));
    }
  }
  const inVersion = (v: string) => (opts.versions ? byVersion.get(v)! : byVersion.get(apiVersion)!);
  const conflicts = new Map<string, FieldSet>();
  for (const [m, vs] of fields) {
    if (m === workflow) continue;
    const seen = inVersion(vs.apiVersion);
    if (!seen) {
      // Its version does not convert (another group, a version no longer served): upstream drops the manager.
      fields.delete(m);
      continue;
    }
    const c = vs.set.intersection(seen.changed);
    if (!c.isEmpty()) conflicts.set(m, c);
  }
  if (!force && conflicts.size > 0) throw new ConflictsError(conflictList(conflicts));
  for (const [m, c] of conflicts) {
    const vs = fields.get(m)!;
    fields.set(m, { ...vs, set: vs.set.difference(c) });
  }
  for (const [m, vs] of fields) {
    if (m === workflow) continue;
    const removed = inVersion(vs.apiVersion)!.cmp.removed;
    if (removed.isEmpty()) continue;
    // An unchanged set keeps its versioned set: managed-fields.ts reuses the entry made for it.
    const set = vs.set.difference(removed);
    if (set !== vs.set) fields.set(m, { ...vs, set });
  }
  for (const [m, vs] of fields) if (vs.set.isEmpty()) fields.delete(m);
  return cmp;
}

/**
 * The change from `oldObj` to `newObj` as it reads in version `v`; null when they do not convert to it (no such
 * version, or a conversion that fails: the manager is dropped rather than the write refused).
 */
function* comparingIn(versions: VersionConverter, v: string, oldObj: unknown, newObj: unknown, opts: UpdaterOptions): Steps<{ cmp: Comparison; changed: FieldSet } | null> {
  const target = versions(v);
  if (!target) return null;
  let from: unknown;
  let to: unknown;
  try {
    from = target.convert(oldObj);
    to = target.convert(newObj);
  } catch {
    return null;
  }
  yield;
  const raw = yield* comparing(from, to, target.type);
  const cmp = { removed: filter(raw.removed, opts), modified: filter(raw.modified, opts), added: filter(raw.added, opts) };
  return { cmp, changed: cmp.modified.union(cmp.added) };
}

/** ConflictsFromManagers, managers sorted so the order does not depend on map iteration. */
function conflictList(conflicts: Map<string, FieldSet>): Conflict[] {
  const out: Conflict[] = [];
  for (const m of [...conflicts.keys()].sort(compareGoStrings)) for (const path of conflicts.get(m)!.paths()) out.push({ manager: m, path });
  return out;
}

/** Updater.Update: the new ownership after a non-apply write by `manager` (an identifier); pauses while it compares. */
export function* updatingOwnership(liveObj: unknown, newObj: unknown, apiVersion: string, managed: Managed, manager: string, opts: UpdaterOptions): Steps<Managed> {
  const fields = reconcile(managed.fields, opts.type);
  const cmp = yield* takingChanges(liveObj, newObj, apiVersion, fields, manager, true, opts);
  yield;
  const prev = fields.get(manager)?.set ?? new FieldSet();
  const set = filter(prev.difference(cmp.removed).union(cmp.modified).union(cmp.added), opts);
  yield;
  if (set.isEmpty()) fields.delete(manager);
  else fields.set(manager, { set, apiVersion, applied: false });
  return { fields, times: new Map(managed.times) };
}

export interface ApplyOutcome {
  /** The merged object; undefined when it equals the live object. */
  object: unknown;
  managed: Managed;
}

/** Updater.Apply: merge `config` into `liveObj` for `manager` (an identifier); throws ConflictsError. Pauses between its steps. */
export function* applyingConfig(
  liveObj: unknown,
  config: unknown,
  apiVersion: string,
  managed: Managed,
  manager: string,
  force: boolean,
  opts: UpdaterOptions,
): Steps<ApplyOutcome> {
  const fields = reconcile(managed.fields, opts.type);
  let merged = merge(liveObj, config, opts.type);
  yield;
  const lastSet = fields.get(manager);
  const applying = filter(toFieldSet(config, opts.type), opts);
  fields.set(manager, { set: applying, apiVersion, applied: true });
  yield;
  // Nothing is pruned when every field applied last time is applied again (the applier owns them all):
  // the usual re-apply skips prune's passes over the whole object.
  if (lastSet && !lastSet.set.difference(applying).isEmpty()) merged = prune(merged, fields, lastSet, opts.type);
  yield;
  yield* takingChanges(liveObj, merged, apiVersion, fields, manager, force, opts);
  yield;
  return { object: equalValues(liveObj, merged) ? undefined : merged, managed: { fields, times: new Map(managed.times) } };
}

// Remove what the applier applied last time and not this time, unless another manager
// (or the new configuration) owns it, or it was never the applier's (dangling items).
function prune(merged: unknown, fields: Map<string, VersionedSet>, lastSet: VersionedSet | undefined, type: TypeInfo): unknown {
  if (!lastSet || lastSet.set.isEmpty()) return merged;
  const named = (s: FieldSet) => ensureNamedFieldsAreMembers(s, type);
  let pruned = removeItems(merged, named(lastSet.set), type) ?? {};
  let owned = new FieldSet();
  for (const vs of fields.values()) owned = owned.union(vs.set);
  const mergedSet = named(toFieldSet(merged, type));
  pruned = removeItems(merged, mergedSet.difference(named(toFieldSet(pruned, type)).union(named(owned))), type) ?? {};
  const removed = mergedSet.difference(named(toFieldSet(pruned, type))).intersection(named(lastSet.set));
  return removeItems(merged, removed, type) ?? {};
}
