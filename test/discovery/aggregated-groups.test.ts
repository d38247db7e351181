// Discovery's lists with aggregated APIServices: kube-aggregator's group order, never-reached versions.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Discovery, type AggregatedGroupVersion } from '../../src/discovery/documents.js';
import { ApiRegistry, type ProxiedEndpoint } from '../../src/registry/registry.js';

function virtualResource(group: string, version: string, resource: string, extra: Partial<ProxiedEndpoint> = {}): ProxiedEndpoint {
  return {
    virtual: true,
    proxied: true,
    group,
    version,
    names: { group, resource, singular: resource.slice(0, -1), kind: 'Thing', listKind: 'ThingList', namespaced: true },
    verbs: ['get', 'list'],
    custom: true,
    subresources: {},
    backend: () => undefined,
    ...extra,
  } as ProxiedEndpoint;
}

describe('discovery with aggregated APIServices', () => {
  it('orders groups by their highest priority (a local group at 1000, an APIService below it after), and lists never-reached versions', () => {
    const registry = new ApiRegistry();
    // A CRD group (local, 1000) and an aggregated one whose APIService says 100 (metrics.k8s.io's), not yet reached.
    registry.add({ ...virtualResource('zzz.example.com', 'v1', 'things'), proxied: undefined } as never);
    let aggregated: AggregatedGroupVersion[] = [{ group: 'metrics.k8s.io', version: 'v1beta1', groupPriority: 100, versionPriority: 100, available: false }];
    const d = new Discovery(registry, () => aggregated);
    const groups = (d.apiGroupList() as { groups: { name: string }[] }).groups.map((g) => g.name);
    assert.deepEqual(groups, ['zzz.example.com', 'metrics.k8s.io']);
    const agg = d.aggregated(false, 'apidiscovery.k8s.io/v2') as { items: { metadata: { name: string }; versions: unknown[] }[] };
    assert.deepEqual(agg.items.find((g) => g.metadata.name === 'metrics.k8s.io')?.versions, [{ version: 'v1beta1', freshness: 'Stale' }]);
    assert.equal(d.servesLocally('zzz.example.com', 'v1'), true);
    assert.equal(d.servesLocally('metrics.k8s.io', 'v1beta1'), false);
    // Gone (the registry touched): gone from the lists.
    aggregated = [];
    registry.touch();
    assert.deepEqual((d.apiGroupList() as { groups: { name: string }[] }).groups.map((g) => g.name), ['zzz.example.com']);
  });
});
