/**
 * The mandatory API Priority and Fairness configuration kube-apiserver keeps in every cluster
 * (flowcontrol's bootstrap objects): the `exempt` and `catch-all` priority levels and flow schemas.
 * kapi stores them as upstream does; it does not queue requests by them.
 */
import type { KObject } from '../../api/object.js';

const AUTOUPDATE = { 'apf.kubernetes.io/autoupdate-spec': 'true' };
const everything = {
  resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], clusterScope: true, namespaces: ['*'] }],
  nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
};
const groups = (...names: string[]) => names.map((name) => ({ kind: 'Group', group: { name } }));
const object = (kind: string, name: string, spec: Record<string, unknown>): KObject => ({
  apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
  kind,
  metadata: { name, annotations: { ...AUTOUPDATE } },
  spec,
});

export const MANDATORY_PRIORITY_LEVELS: KObject[] = [
  object('PriorityLevelConfiguration', 'exempt', { type: 'Exempt', exempt: { nominalConcurrencyShares: 0, lendablePercent: 0 } }),
  object('PriorityLevelConfiguration', 'catch-all', { type: 'Limited', limited: { nominalConcurrencyShares: 5, lendablePercent: 0, limitResponse: { type: 'Reject' } } }),
];

export const MANDATORY_FLOW_SCHEMAS: KObject[] = [
  object('FlowSchema', 'exempt', { matchingPrecedence: 1, priorityLevelConfiguration: { name: 'exempt' }, rules: [{ subjects: groups('system:masters'), ...everything }] }),
  object('FlowSchema', 'catch-all', {
    matchingPrecedence: 10000,
    priorityLevelConfiguration: { name: 'catch-all' },
    distinguisherMethod: { type: 'ByUser' },
    rules: [{ subjects: groups('system:unauthenticated', 'system:authenticated'), ...everything }],
  }),
];
