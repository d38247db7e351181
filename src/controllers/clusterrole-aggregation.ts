/**
 * The ClusterRole aggregation controller, as kube-controller-manager's: a ClusterRole with an
 * aggregationRule holds the rules of every other ClusterRole its selectors match, taken in name order,
 * each rule once. Any ClusterRole change re-examines every aggregated role (a label may have started or
 * stopped matching). It works as a client of the API with its own account
 * (`system:serviceaccount:kube-system:clusterrole-aggregation-controller`).
 */
import { selectorFromLabelSelector, type LabelSelectorSpec } from '../machinery/labels.js';
import type { KObject } from '../api/object.js';
import type { Client, ResourceClient } from '../sdk/client.js';
import { informerQueue, type InformerQueue } from './informer-queue.js';
import { deepEqual } from '../util/deep-equal.js';
import { isRecord, records } from '../util/json-object.js';

export class ClusterRoleAggregation {
  private readonly loop: InformerQueue;
  private readonly roles: ResourceClient;

  constructor(client: Client, log: (message: string) => void) {
    this.roles = client.resource({ group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterroles' });
    this.loop = informerQueue(this.roles, 'clusterrole aggregation', log, (name) => this.reconcile(name), (enqueue) => {
      const changed = () => {
        for (const role of this.loop.informer.list()) if (isRecord(role.aggregationRule)) enqueue(role.metadata.name);
      };
      return { added: changed, updated: changed, deleted: changed };
    });
  }

  start(): Promise<void> {
    return this.loop.start();
  }

  stop(): void {
    this.loop.stop();
  }

  private async reconcile(name: string): Promise<void> {
    const role = this.loop.informer.get(name);
    if (!role || !isRecord(role.aggregationRule)) return;
    const selectors = records(role.aggregationRule.clusterRoleSelectors).flatMap((s) => {
      try {
        return [selectorFromLabelSelector(s as LabelSelectorSpec)];
      } catch {
        return [];
      }
    });
    const sources = this.loop.informer
      .list()
      .filter((r) => r.metadata.name !== name && selectors.some((s) => s.matches((r.metadata.labels ?? {}) as Record<string, string>)))
      .sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0));
    const rules: unknown[] = [];
    for (const source of sources) for (const rule of records(source.rules)) if (!rules.some((r) => deepEqual(r, rule))) rules.push(rule);
    if (deepEqual(records(role.rules), rules)) return;
    await this.roles.update(undefined, name, { ...role, rules } as KObject);
  }
}
