/**
 * What reconcilers do again and again, as controller-runtime's controllerutil and apimachinery's meta
 * helpers: finalizers (added while an object lives, cleanup then removal once it is being deleted), owner
 * references (the controlling owner of an object, which garbage collection follows), and status conditions
 * (lastTransitionTime moves only when the status does).
 */
import { StatusError } from '../machinery/status.js';
import type { KObject } from '../api/object.js';
import type { ResourceClient } from './client.js';
import type { KubeObject, OwnerReference } from './resource.js';

/** Whether the object's metadata.finalizers has the finalizer (controllerutil.ContainsFinalizer). */
export function hasFinalizer(obj: KubeObject | KObject, finalizer: string): boolean {
  return Array.isArray(obj.metadata?.finalizers) && obj.metadata.finalizers.includes(finalizer);
}

/** Whether the object is being deleted (its deletionTimestamp is set; finalizers hold it). */
export function isBeingDeleted(obj: KubeObject | KObject): boolean {
  return Boolean(obj.metadata?.deletionTimestamp);
}

/** Writes the object's finalizers as `change` makes them, with the resourceVersion read (a conflict is retried by the reconciler). */
async function writeFinalizers<T extends KObject>(client: ResourceClient<T>, obj: T, change: (finalizers: string[]) => string[]): Promise<T> {
  const current: string[] = Array.isArray(obj.metadata?.finalizers) ? obj.metadata.finalizers : [];
  const finalizers = change([...current]);
  const patch = { metadata: { resourceVersion: obj.metadata.resourceVersion, finalizers } };
  return client.patch(obj.metadata.namespace, obj.metadata.name, patch);
}

/** The object with the finalizer (written when it was missing). */
export async function addFinalizer<T extends KObject>(client: ResourceClient<T>, obj: T, finalizer: string): Promise<T> {
  if (hasFinalizer(obj, finalizer)) return obj;
  return writeFinalizers(client, obj, (f) => [...f, finalizer]);
}

/** The object without the finalizer (written when it had it; gone if it was the last that held a deleted object). */
export async function removeFinalizer<T extends KObject>(client: ResourceClient<T>, obj: T, finalizer: string): Promise<T | undefined> {
  if (!hasFinalizer(obj, finalizer)) return obj;
  try {
    return await writeFinalizers(client, obj, (f) => f.filter((x) => x !== finalizer));
  } catch (err) {
    if (err instanceof StatusError && err.code === 404) return undefined;
    throw err;
  }
}

/**
 * A finalizer's whole life in one call: while the object lives it gets the finalizer (`'live'`, with the
 * object as written); once it is being deleted, `cleanup` runs and then the finalizer goes (`'deleted'`:
 * the reconciler has nothing more to do). A cleanup that throws keeps the finalizer, to be tried again.
 */
export async function handleFinalizer<T extends KObject>(
  client: ResourceClient<T>,
  obj: T,
  finalizer: string,
  cleanup: (obj: T) => Promise<void> | void,
): Promise<{ state: 'live'; object: T } | { state: 'deleted' }> {
  if (!isBeingDeleted(obj)) return { state: 'live', object: await addFinalizer(client, obj, finalizer) };
  if (hasFinalizer(obj, finalizer)) {
    await cleanup(obj);
    await removeFinalizer(client, obj, finalizer);
  }
  return { state: 'deleted' };
}

/** An owner reference to `owner`: the controlling one unless `controller: false`. */
export function ownerReference(owner: KubeObject | KObject, opts: { controller?: boolean; blockOwnerDeletion?: boolean } = {}): OwnerReference {
  const m = owner.metadata;
  if (!owner.apiVersion || !owner.kind || !m?.name || !m?.uid) throw new Error('ownerReference: the owner needs apiVersion, kind, metadata.name and metadata.uid (an object read from the server)');
  const controller = opts.controller ?? true;
  return { apiVersion: owner.apiVersion, kind: owner.kind, name: m.name, uid: m.uid, ...(controller ? { controller: true } : {}), blockOwnerDeletion: opts.blockOwnerDeletion ?? true };
}

/**
 * Makes `owner` the controlling owner of `obj` (controllerutil.SetControllerReference): refused when another
 * object controls it already, or when a namespaced object would be owned across namespaces.
 */
export function setControllerReference(owner: KubeObject | KObject, obj: KubeObject | KObject): void {
  const ref = ownerReference(owner);
  const ownerNs = owner.metadata?.namespace;
  const objNs = obj.metadata?.namespace;
  if (ownerNs && objNs !== ownerNs) throw new Error(`cross-namespace owner references are disallowed, owner's namespace ${ownerNs}, obj's namespace ${objNs ?? ''}`);
  const refs: OwnerReference[] = Array.isArray(obj.metadata.ownerReferences) ? obj.metadata.ownerReferences : [];
  // The same owner is its group, kind and name (an owner made again with the same name replaces its reference).
  const group = (apiVersion: string) => (apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '');
  const same = (r: OwnerReference) => group(r.apiVersion) === group(ref.apiVersion) && r.kind === ref.kind && r.name === ref.name;
  const other = refs.find((r) => r.controller && !same(r));
  if (other) throw new Error(`Object ${objNs ? `${objNs}/` : ''}${obj.metadata.name} is already owned by another ${other.kind} controller ${other.name}`);
  obj.metadata.ownerReferences = [...refs.filter((r) => !same(r)), ref];
}

/** The object whose controller reference names `owner`. */
export function isControlledBy(obj: KubeObject | KObject, owner: KubeObject | KObject): boolean {
  return ((obj.metadata?.ownerReferences ?? []) as OwnerReference[]).some((r) => r.controller && r.uid === owner.metadata?.uid);
}

/** metav1.Condition. */
export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  observedGeneration?: number;
  lastTransitionTime?: string;
}

/** The condition of a type, if any (meta.FindStatusCondition). */
export function findStatusCondition(conditions: readonly Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/** Whether the condition of a type is there with status True (meta.IsStatusConditionTrue). */
export function isStatusConditionTrue(conditions: readonly Condition[] | undefined, type: string): boolean {
  return findStatusCondition(conditions, type)?.status === 'True';
}

/**
 * meta.SetStatusCondition: adds or updates a condition in place; lastTransitionTime is set when the
 * condition is new or its status changes (now, unless given). Returns whether anything changed.
 */
export function setStatusCondition(conditions: Condition[], condition: Condition, now: Date = new Date()): boolean {
  const stamp = condition.lastTransitionTime ?? now.toISOString().replace(/\.\d{3}Z$/, 'Z');
  const existing = findStatusCondition(conditions, condition.type);
  if (!existing) {
    conditions.push({ ...condition, lastTransitionTime: stamp });
    return true;
  }
  let changed = false;
  if (existing.status !== condition.status) {
    existing.status = condition.status;
    existing.lastTransitionTime = stamp;
    changed = true;
  }
  for (const k of ['reason', 'message', 'observedGeneration'] as const) {
    if (existing[k] !== condition[k]) {
      (existing as unknown as Record<string, unknown>)[k] = condition[k];
      changed = true;
    }
  }
  return changed;
}

/** meta.RemoveStatusCondition: removes the condition of a type, in place. Returns whether there was one. */
export function removeStatusCondition(conditions: Condition[], type: string): boolean {
  const i = conditions.findIndex((c) => c.type === type);
  if (i < 0) return false;
  conditions.splice(i, 1);
  return true;
}
