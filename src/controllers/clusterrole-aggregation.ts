/**
 * The ClusterRole aggregation controller, as kube-controller-manager's: a ClusterRole with an
 * aggregationRule holds the rules of every other ClusterRole its selectors match, taken in name order,
 * each rule once. Any ClusterRole change re-examines every aggregated role (a label may have started or
 * stopped matching). It works as a client of the API with its own account
 * (`system:serviceaccount:kube-system:clusterrole-aggregation-controller`).
 */
import { selectorFromLabelSelector, type LabelSelectorSpec } from '../machinery/labels.js';
import type { KObject } from '../api/object.js';
import type { Client } from '../sdk/client.js';
import type { Controller, Manager } from '../sdk/controller.js';
import { deepEqual } from '../util/deep-equal.js';
import { isRecord, records } from '../util/json-object.js';

const CLUSTER_ROLES = { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterroles', namespaced: false };

/** Adds the controller to `manager` (whose informer it reads); `client` writes. */
export function addClusterRoleAggregation(manager: Manager, client: Client): Controller {
  const roles = manager.informer(CLUSTER_ROLES);
  const writer = client.resource(CLUSTER_ROLES);
  const aggregating = () => roles.list().filter((role) => isRecord(role.aggregationRule)).map((role) => ({ name: role.metadata.name }));
  return manager.add({
    name: 'clusterrole-aggregation-controller',
    for: CLUSTER_ROLES,
    watches: [{ resource: CLUSTER_ROLES, map: aggregating }],
    reconcile: async ({ name }) => {
      const role = roles.get(name);
      if (!role || !isRecord(role.aggregationRule)) return;
      const selectors = records(role.aggregationRule.clusterRoleSelectors).flatMap((s) => {
        try {
          return [selectorFromLabelSelector(s as LabelSelectorSpec)];
        } catch {
          return [];
        }
      });
      const sources = roles
        .list()
        .filter((r) => r.metadata.name !== name && selectors.some((s) => s.matches((r.metadata.labels ?? {}) as Record<string, string>)))
        .sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0));
      const rules: unknown[] = [];
      for (const source of sources) for (const rule of records(source.rules)) if (!rules.some((r) => deepEqual(r, rule))) rules.push(rule);
      if (deepEqual(records(role.rules), rules)) return;
      await writer.update(undefined, name, { ...role, rules } as KObject);
    },
  });
}
