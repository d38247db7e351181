/** What the console knows of the API: resources from aggregated discovery, and what the user may do (access reviews). */
import { get, request, type Obj } from './api.js';

export interface Resource {
  group: string;
  version: string;
  resource: string;
  kind: string;
  namespaced: boolean;
  verbs: string[];
  shortNames: string[];
  /** The group's preferred version (the first discovery lists). */
  preferred: boolean;
}

const AGGREGATED = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json';

/** Every resource of every served group-version (subresources left out), from /api and /apis. */
export async function loadResources(): Promise<Resource[]> {
  const [core, groups] = await Promise.all([get('/api', AGGREGATED), get('/apis', AGGREGATED)]);
  const out: Resource[] = [];
  for (const doc of [core.json, groups.json]) {
    for (const g of (doc.items ?? []) as Obj[]) {
      const group = g.metadata?.name ?? '';
      (g.versions ?? []).forEach((v: Obj, i: number) => {
        for (const r of (v.resources ?? []) as Obj[]) {
          out.push({
            group,
            version: v.version,
            resource: r.resource,
            kind: r.responseKind?.kind ?? r.resource,
            namespaced: r.scope === 'Namespaced',
            verbs: r.verbs ?? [],
            shortNames: r.shortNames ?? [],
            preferred: i === 0,
          });
        }
      });
    }
  }
  return out;
}

/**
 * `next` with the objects of `previous` wherever a resource is unchanged (the whole of `previous` when nothing
 * changed): pages keyed on a resource do not start again when discovery is read again for another's change.
 */
export function keepUnchanged(previous: Resource[] | undefined, next: Resource[]): Resource[] {
  if (!previous) return next;
  const byKey = new Map(previous.map((r) => [`${r.group}/${r.version}/${r.resource}`, r]));
  let changed = previous.length !== next.length;
  const merged = next.map((r, i) => {
    const old = byKey.get(`${r.group}/${r.version}/${r.resource}`);
    if (old && JSON.stringify(old) === JSON.stringify(r)) {
      if (previous[i] !== old) changed = true;
      return old;
    }
    changed = true;
    return r;
  });
  return changed ? merged : previous;
}

export function gv(r: { group: string; version: string }): string {
  return r.group ? `${r.group}/${r.version}` : r.version;
}

/** The resource of a kind in an apiVersion (an owner reference's, an event's object). */
export function resourceOfKind(resources: Resource[], apiVersion: string, kind: string): Resource | undefined {
  const slash = apiVersion.indexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
  return resources.find((r) => r.group === group && r.version === version && r.kind === kind) ?? resources.find((r) => r.group === group && r.kind === kind && r.preferred);
}

const decisions = new Map<string, Promise<boolean>>();

/** Whether the user may `verb` the resource (in the namespace): a SelfSubjectAccessReview, remembered for the page's life. */
export function can(verb: string, r: { group: string; resource: string }, namespace?: string, name?: string): Promise<boolean> {
  const key = JSON.stringify([verb, r.group, r.resource, namespace ?? '', name ?? '']);
  let known = decisions.get(key);
  if (!known) {
    const body = { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { verb, group: r.group, resource: r.resource, namespace, name } } };
    known = request('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', { body: JSON.stringify(body), contentType: 'application/json' }).then(
      (a) => a.json.status?.allowed === true,
      () => false,
    );
    decisions.set(key, known);
  }
  return known;
}

export function forgetDecisions(): void {
  decisions.clear();
}
