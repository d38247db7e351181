/**
 * The ResourceQuota controller, as kube-controller-manager's: a quota's `status.hard` is its `spec.hard`, and its
 * `status.used` what the objects of its namespace use (apis/core/resource-quota.ts's evaluators, the same the
 * admission plugin charges with). A quota is synced when its spec changes or its usage is missing, when objects of
 * its namespace go (or a pod finishes: replenishment), and every 5 minutes (--resource-quota-sync-period). It works
 * as a client of the API with its own account (`system:serviceaccount:kube-system:resourcequota-controller`); the
 * objects it counts are listed through the API (a page at a time), and the events that bring a quota back come from
 * the watch caches.
 */
import type { KObject } from '../api/object.js';
import { amountsJson, amountsOf, sameAmounts } from '../apis/core/quota-amounts.js';
import { calculateQuotaUsage } from '../apis/core/resource-quota.js';
import type { ApiRegistry } from '../registry/registry.js';
import type { Client } from '../sdk/client.js';
import type { Controller, Manager } from '../sdk/controller.js';
import { deepEqual } from '../util/deep-equal.js';
import { isRecord } from '../util/json-object.js';
import type { ObjectEventHub } from './object-events.js';
import { inPages, METADATA_LIST } from './paging.js';

const RESOURCE_QUOTAS = { group: '', version: 'v1', resource: 'resourcequotas', namespaced: true };
/** upstream's --resource-quota-sync-period. */
const FULL_SYNC_MS = 5 * 60_000;

/** Whether a quota's status lacks a hard name's usage (upstream syncs those first). */
const missingUsage = (quota: KObject) => {
  const used = isRecord(quota.status?.used) ? quota.status.used : {};
  return Object.keys(isRecord(quota.spec?.hard) ? quota.spec.hard : {}).some((n) => !(n in used));
};

/** Adds the controller to `manager` (its quota informer); `client` lists and writes; `hub` tells of objects that go. */
export function addResourceQuotaController(manager: Manager, client: Client, hub: ObjectEventHub, registry: ApiRegistry): Controller {
  const quotas = manager.informer(RESOURCE_QUOTAS);
  const writer = client.resource(RESOURCE_QUOTAS);
  /** The quotas of each namespace, by name (kept from the informer's events). */
  const byNamespace = new Map<string, Set<string>>();
  const track = (q: KObject, on: boolean) => {
    const ns = String(q.metadata?.namespace ?? '');
    let names = byNamespace.get(ns);
    if (on) {
      if (!names) byNamespace.set(ns, (names = new Set()));
      names.add(q.metadata.name);
    } else if (names) {
      names.delete(q.metadata.name);
      if (names.size === 0) byNamespace.delete(ns);
    }
  };
  quotas.addHandlers({ added: (q) => track(q, true), deleted: (q) => track(q, false) });

  const controller = manager.add({
    name: 'resourcequota-controller',
    for: RESOURCE_QUOTAS,
    predicates: [{ update: (q, old) => !deepEqual(q.spec, old.spec) || missingUsage(q), delete: () => false }],
    maxConcurrentReconciles: 5,
    reconcile: async ({ namespace, name }) => {
      const quota = quotas.get(`${namespace}/${name}`);
      if (!quota) return;
      // Read a page at a time, each page's objects measured before the next is asked for (a turn of the loop between).
      const list = async (group: string, resource: string, metadataOnly: boolean): Promise<AsyncIterable<KObject> | undefined> => {
        const ep = registry.all().find((e) => e.group === group && e.names.resource === resource && e.names.namespaced);
        if (!ep) return undefined;
        return inPages(client.resource({ group, version: ep.version, resource }), namespace, metadataOnly ? METADATA_LIST : undefined);
      };
      const hard = amountsOf(quota.spec?.hard);
      const computed = await calculateQuotaUsage(quota, list);
      // Usage of names no evaluator counts is kept as observed; names no longer hard are dropped.
      const used = new Map([...amountsOf(quota.status?.used), ...computed].filter(([n]) => hard.has(n)));
      if (!sameAmounts(hard, amountsOf(quota.status?.hard)) || !sameAmounts(used, amountsOf(quota.status?.used)) || !isRecord(quota.status?.used)) {
        await writer.update(namespace, name, { ...quota, status: { hard: amountsJson(hard), used: amountsJson(used) } }, 'status');
      }
      return { requeueAfterMs: FULL_SYNC_MS };
    },
  });

  // Replenishment: what goes gives usage back; so does a pod that has finished or is being deleted.
  hub.on((_store, type, obj) => {
    const namespace = obj.metadata?.namespace;
    const names = typeof namespace === 'string' ? byNamespace.get(namespace) : undefined;
    if (!names) return;
    const pod = obj.kind === 'Pod' && obj.apiVersion === 'v1';
    const releases = type === 'DELETED' || (type === 'MODIFIED' && pod && (obj.status?.phase === 'Succeeded' || obj.status?.phase === 'Failed' || Boolean(obj.metadata?.deletionTimestamp)));
    if (!releases) return;
    for (const name of names) controller.enqueue({ namespace, name });
  });
  return controller;
}
