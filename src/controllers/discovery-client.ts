/**
 * What a controller learns from discovery, through its client: the preferred
 * version of every resource the server serves (aggregated discovery of /api
 * and /apis), as client-go's ServerPreferredResources gives it.
 */
import type { KObject } from '../api/object.js';
import type { Client, GroupVersionResource } from '../sdk/client.js';

const AGGREGATED = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';

export interface DiscoveredResource extends GroupVersionResource {
  namespaced: boolean;
  verbs: string[];
}

export async function preferredResources(client: Client): Promise<DiscoveredResource[]> {
  const [core, groups] = await Promise.all([client.request('GET', '/api', { accept: AGGREGATED }), client.request('GET', '/apis', { accept: AGGREGATED })]);
  const out: DiscoveredResource[] = [];
  for (const doc of [core.body, groups.body]) {
    for (const g of (doc.items ?? []) as KObject[]) {
      const preferred = (g.versions ?? [])[0] as KObject | undefined;
      if (!preferred) continue;
      for (const r of (preferred.resources ?? []) as KObject[]) {
        out.push({ group: g.metadata?.name ?? '', version: preferred.version, resource: r.resource, namespaced: r.scope === 'Namespaced', verbs: r.verbs ?? [] });
      }
    }
  }
  return out;
}
