/**
 * The bootstrap policy reconciled at every start, as kube-apiserver's RBAC post-start hook does: a
 * missing role or binding is created; an existing one annotated `rbac.authorization.kubernetes.io/
 * autoupdate: "false"` is left as its owner made it; any other gets back the bootstrap labels and
 * annotations, the rules it lost (the aggregated roles' selectors), and the subjects it lost. A binding
 * whose roleRef differs is recreated (a roleRef cannot change). Nothing users added is taken away.
 */
import { deepEqual } from '../../util/deep-equal.js';
import type { RestStore } from '../../registry/store.js';
import type { KObject } from '../../api/object.js';
import { isRecord, records } from '../../util/json-object.js';
import type { RbacStores } from './authorizer.js';
import { bootstrapPolicy } from './bootstrap-policy.js';
import { rulesOf, uncovered, type PolicyRule } from './rules.js';

const AUTOUPDATE = 'rbac.authorization.kubernetes.io/autoupdate';
const API_VERSION = 'rbac.authorization.k8s.io/v1';

type Reconcile = (existing: KObject, expected: KObject) => KObject;

/** The existing object with the expected labels and annotations added (the existing ones win). */
function withMeta(existing: KObject, expected: KObject): KObject {
  return {
    ...existing,
    metadata: {
      ...existing.metadata,
      labels: { ...(expected.metadata.labels ?? {}), ...(existing.metadata.labels ?? {}) },
      annotations: { ...(expected.metadata.annotations ?? {}), ...(existing.metadata.annotations ?? {}) },
    },
  };
}

const reconcileRole: Reconcile = (existing, expected) => {
  const out = withMeta(existing, expected);
  if (isRecord(expected.aggregationRule)) {
    const have = records(isRecord(existing.aggregationRule) ? existing.aggregationRule.clusterRoleSelectors : undefined);
    const want = records(expected.aggregationRule.clusterRoleSelectors);
    out.aggregationRule = { clusterRoleSelectors: [...have, ...want.filter((w) => !have.some((h) => deepEqual(h, w)))] };
    return out;
  }
  const have = records(existing.rules);
  let held: PolicyRule[] | undefined;
  // A rule kept as it was is held (most starts find each where the policy puts it); only others need breaking down to tell.
  const kept = (r: Record<string, unknown>, i: number) => (i < have.length && deepEqual(have[i], r)) || have.some((h) => deepEqual(h, r));
  const lost = records(expected.rules).filter((r, i) => !kept(r, i) && uncovered((held ??= rulesOf(existing)), rulesOf({ rules: [r] })).length > 0);
  if (lost.length > 0) out.rules = [...have, ...lost];
  return out;
};

const reconcileBinding: Reconcile = (existing, expected) => {
  const out = withMeta(existing, expected);
  const have = records(existing.subjects);
  const lost = records(expected.subjects).filter((s) => !have.some((h) => h.kind === s.kind && h.name === s.name && (h.namespace ?? '') === (s.namespace ?? '')));
  if (lost.length > 0) out.subjects = [...have, ...lost];
  return out;
};

const RECREATE = Symbol('recreate');

/** What a start makes of the stored object: nothing to write, the object to write, or a recreation (another roleRef). */
function wanted(existing: KObject | undefined, expected: KObject, reconcile: Reconcile): KObject | undefined | typeof RECREATE {
  if (!existing) return structuredClone(expected);
  if (existing.metadata.annotations?.[AUTOUPDATE] === 'false') return undefined;
  if (expected.roleRef !== undefined && !deepEqual(existing.roleRef, expected.roleRef)) return RECREATE;
  const next = reconcile(existing, expected);
  return deepEqual(next, existing) ? undefined : next;
}

async function ensure(store: RestStore, expected: KObject, reconcile: Reconcile): Promise<void> {
  const namespace = expected.metadata.namespace;
  const name = expected.metadata.name;
  // Most starts find everything in place: the watch cache tells without a read of each object.
  const cached = store.cache.get(store.key(namespace, name))?.object;
  if (cached && wanted(cached, expected, reconcile) === undefined) return;
  let recreate = false;
  await store.update(
    namespace,
    name,
    (existing) => {
      const next = wanted(existing, expected, reconcile);
      recreate = next === RECREATE;
      return next === undefined || next === RECREATE ? existing! : next;
    },
    { allowCreate: true },
  );
  if (recreate) {
    await store.delete(namespace, name);
    await store.create(namespace, structuredClone(expected));
  }
}

/** Reconcile the bootstrap roles, then the bindings (which name them). */
export async function reconcileBootstrapPolicy(stores: RbacStores): Promise<void> {
  await Promise.all(Object.values(stores).map((store) => store.start()));
  const policy = bootstrapPolicy();
  const object = (kind: string, { name, namespace, labels, annotations, ...rest }: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> }) =>
    ({ apiVersion: API_VERSION, kind, metadata: { name, ...(namespace ? { namespace } : {}), labels, annotations }, ...rest }) as KObject;
  await Promise.all([
    ...policy.clusterRoles.map((r) => ensure(stores.clusterRoles, object('ClusterRole', r), reconcileRole)),
    ...policy.roles.map((r) => ensure(stores.roles, object('Role', r), reconcileRole)),
  ]);
  await Promise.all([
    ...policy.clusterRoleBindings.map((b) => ensure(stores.clusterRoleBindings, object('ClusterRoleBinding', b), reconcileBinding)),
    ...policy.roleBindings.map((b) => ensure(stores.roleBindings, object('RoleBinding', b), reconcileBinding)),
  ]);
}
