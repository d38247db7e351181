/**
 * Discovery documents built from the served endpoints: /api, /api/v1, /apis,
 * /apis/<group>, /apis/<group>/<version>, and the aggregated form
 * (apidiscovery.k8s.io v2 and v2beta1) that newer kubectl fetches in one round trip.
 * Documents are memoized per registry generation, so a CRD change shows at once.
 */
import { createHash } from 'node:crypto';
import type { ApiRegistry, ProxiedEndpoint, ServedResource, SubresourceInfo } from '../registry/registry.js';
import { compareKubeAwareVersionStrings } from '../machinery/version-priority.js';

/** Built-in groups in the order kube-apiserver lists them; other groups follow, sorted. */
const BUILTIN_GROUP_ORDER = [
  '',
  'apiregistration.k8s.io',
  'apps',
  'events.k8s.io',
  'authentication.k8s.io',
  'authorization.k8s.io',
  'autoscaling',
  'batch',
  'certificates.k8s.io',
  'networking.k8s.io',
  'policy',
  'rbac.authorization.k8s.io',
  'storage.k8s.io',
  'admissionregistration.k8s.io',
  'apiextensions.k8s.io',
  'scheduling.k8s.io',
  'coordination.k8s.io',
  'node.k8s.io',
  'discovery.k8s.io',
  'flowcontrol.apiserver.k8s.io',
];

interface GroupInfo {
  name: string;
  versions: string[];
  endpoints: Map<string, ServedResource[]>;
  /** The APIService's groupPriorityMinimum (an aggregated group's; CRDs' is 1000). */
  priority: number;
  /** Per version, its APIService's versionPriority (aggregated versions only). */
  versionPriority: Map<string, number>;
  /** Per aggregated version, whether its backend is available now. */
  available: Map<string, boolean>;
}

/** An aggregated APIService's group-version and priorities. */
export interface AggregatedGroupVersion {
  group: string;
  version: string;
  groupPriority?: number;
  versionPriority?: number;
  /** Whether its backend is available now. */
  available: boolean;
}

export class Discovery {
  private cacheGeneration = -1;
  private groupsCache: GroupInfo[] = [];
  private readonly memo = new Map<string, unknown>();
  /** `<group>/<version>` of the group-versions with local endpoints, as of the cached generation. */
  private readonly local = new Set<string>();

  constructor(
    private readonly registry: ApiRegistry,
    /**
     * The group-versions of APIServices with a service: listed in /apis and /apis/<group> even before their
     * backend was ever reached (as kube-aggregator lists every APIService; their documents answer 503 then).
     * A change to them touches the registry.
     */
    private readonly aggregatedGroupVersions: () => readonly AggregatedGroupVersion[] = () => [],
  ) {}

  groups(): GroupInfo[] {
    if (this.cacheGeneration !== this.registry.generation) {
      this.cacheGeneration = this.registry.generation;
      this.memo.clear();
      const byGroup = new Map<string, GroupInfo>();
      this.local.clear();
      // A group's priority: the highest of its sources' (an APIService's groupPriorityMinimum; a local one's 1000).
      const versionOf = (group: string, version: string, groupPriority: number | undefined, versionPriority: number | undefined) => {
        let g = byGroup.get(group);
        if (!g) byGroup.set(group, (g = { name: group, versions: [], endpoints: new Map(), priority: -Infinity, versionPriority: new Map(), available: new Map() }));
        g.priority = Math.max(g.priority, groupPriority ?? 1000);
        if (versionPriority !== undefined) g.versionPriority.set(version, versionPriority);
        let list = g.endpoints.get(version);
        if (!list) {
          g.endpoints.set(version, (list = []));
          g.versions.push(version);
        }
        return list;
      };
      for (const ep of this.registry.served()) {
        versionOf(ep.group, ep.version, ep.groupPriority, ep.versionPriority).push(ep);
        if (!(ep as { proxied?: boolean }).proxied) this.local.add(`${ep.group}/${ep.version}`);
      }
      for (const gv of this.aggregatedGroupVersions()) {
        if (gv.group === '') continue;
        versionOf(gv.group, gv.version, gv.groupPriority, gv.versionPriority);
        byGroup.get(gv.group)!.available.set(gv.version, gv.available);
      }
      // Highest priority first: an APIService's versionPriority where both versions have one, then the version string.
      for (const g of byGroup.values()) g.versions.sort((a, b) => compareVersions(g, a, b));
      this.groupsCache = [...byGroup.values()].sort(compareGroups);
    }
    return this.groupsCache;
  }

  /** Whether kapi serves resources of its own in the group-version (which no APIService takes over). */
  servesLocally(group: string, version: string): boolean {
    this.groups();
    return this.local.has(`${group}/${version}`);
  }

  private memoized<T>(key: string, build: () => T): T {
    this.groups();
    if (!this.memo.has(key)) this.memo.set(key, build());
    return this.memo.get(key) as T;
  }

  apiVersions(serverAddress: string): unknown {
    return {
      kind: 'APIVersions',
      versions: ['v1'],
      serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
    };
  }

  apiGroupList(): unknown {
    return this.memoized('groups', () => ({
      kind: 'APIGroupList',
      apiVersion: 'v1',
      groups: this.groups()
        .filter((g) => g.name !== '')
        .map((g) => groupDoc(g, false)),
    }));
  }

  apiGroup(group: string): unknown | undefined {
    const g = this.groups().find((x) => x.name === group && group !== '');
    return g && this.memoized(`group/${group}`, () => groupDoc(g, true));
  }

  resourceList(group: string, version: string): unknown | undefined {
    const eps = this.groups().find((x) => x.name === group)?.endpoints.get(version);
    if (!eps) return undefined;
    return this.memoized(`gv/${group}/${version}`, () => ({
      kind: 'APIResourceList',
      apiVersion: 'v1',
      groupVersion: group ? `${group}/${version}` : version,
      resources: eps.flatMap(resourceEntries),
    }));
  }

  /** The aggregated document for /api (core only) or /apis (every other group). */
  aggregated(core: boolean, apiVersion: 'apidiscovery.k8s.io/v2' | 'apidiscovery.k8s.io/v2beta1'): unknown {
    return this.memoized(`agg/${core}/${apiVersion}`, () => ({
      kind: 'APIGroupDiscoveryList',
      apiVersion,
      metadata: {},
      items: this.groups()
        .filter((g) => (g.name === '') === core)
        .map((g) => ({
          metadata: { name: g.name, creationTimestamp: null },
          versions: g.versions.map((v) => g.endpoints.get(v)!.length === 0
            // An aggregated version whose backend never answered: listed without resources, as upstream does.
            ? { version: v, freshness: g.available.get(v) ? 'Current' : 'Stale' }
            : ({
            version: v,
            resources: g.endpoints.get(v)!.map(aggregatedResource),
            // An aggregated version whose backend is not available: what it last listed, marked as such.
            freshness: g.endpoints.get(v)!.some((ep) => isProxied(ep) && !ep.backend()) ? 'Stale' : 'Current',
          })),
        })),
    }));
  }

  /** The aggregated document in one encoding (`mediaType` names it), encoded once per document. */
  aggregatedEncoded<T>(core: boolean, apiVersion: 'apidiscovery.k8s.io/v2' | 'apidiscovery.k8s.io/v2beta1', mediaType: string, encode: (doc: unknown) => T): T {
    return this.memoized(`encoded/${core}/${apiVersion}/${mediaType}`, () => encode(this.aggregated(core, apiVersion)));
  }

  /**
   * The ETag of aggregated discovery (upstream's: a SHA-512 of the document's JSON, in hex, quoted), made once per
   * document: the same for every encoding of it.
   */
  aggregatedETag(core: boolean, apiVersion: 'apidiscovery.k8s.io/v2' | 'apidiscovery.k8s.io/v2beta1'): string {
    return this.memoized(`etag/${core}/${apiVersion}`, () => `"${createHash('sha512').update(JSON.stringify(this.aggregated(core, apiVersion))).digest('hex').toUpperCase()}"`);
  }
}

function isProxied(ep: ServedResource): ep is ProxiedEndpoint {
  return (ep as ProxiedEndpoint).proxied === true;
}

/** A local version beside aggregated ones: the versionPriority of its local APIService (a CRD's, 100). */
const LOCAL_VERSION_PRIORITY = 100;

function compareVersions(g: GroupInfo, a: string, b: string): number {
  if (g.versionPriority.size > 0) {
    const pa = g.versionPriority.get(a) ?? LOCAL_VERSION_PRIORITY;
    const pb = g.versionPriority.get(b) ?? LOCAL_VERSION_PRIORITY;
    if (pa !== pb) return pb - pa;
  }
  return compareKubeAwareVersionStrings(b, a);
}

function compareGroups(a: GroupInfo, b: GroupInfo): number {
  const ia = BUILTIN_GROUP_ORDER.indexOf(a.name);
  const ib = BUILTIN_GROUP_ORDER.indexOf(b.name);
  if (ia >= 0 || ib >= 0) return (ia < 0 ? Infinity : ia) - (ib < 0 ? Infinity : ib);
  // Others as the aggregator orders them: by their APIService's groupPriorityMinimum, then by name.
  if (a.priority !== b.priority) return b.priority - a.priority;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

function groupDoc(g: GroupInfo, withTypeMeta: boolean): unknown {
  const versions = g.versions.map((v) => ({ groupVersion: `${g.name}/${v}`, version: v }));
  const doc: Record<string, unknown> = withTypeMeta ? { kind: 'APIGroup', apiVersion: 'v1' } : {};
  doc.name = g.name;
  doc.versions = versions;
  doc.preferredVersion = versions[0];
  return doc;
}

function verbsOf(ep: ServedResource): string[] {
  return ep.terminating ? ep.verbs.filter((v) => ['delete', 'deletecollection', 'get', 'list', 'watch'].includes(v)) : ep.verbs;
}

function resourceEntries(ep: ServedResource): unknown[] {
  const n = ep.names;
  const main: Record<string, unknown> = { name: n.resource, singularName: n.singular, namespaced: n.namespaced, kind: n.kind, verbs: verbsOf(ep) };
  if (n.shortNames?.length) main.shortNames = n.shortNames;
  if (n.categories?.length) main.categories = n.categories;
  if (ep.storageVersionHash) main.storageVersionHash = ep.storageVersionHash;
  const subresources = subresourcesOf(ep).map((s) => {
    const entry: Record<string, unknown> = { name: `${n.resource}/${s.name}`, singularName: '', namespaced: n.namespaced };
    if (s.group !== undefined) Object.assign(entry, { group: s.group, version: s.version });
    return Object.assign(entry, { kind: s.kind, verbs: s.verbs });
  });
  return [main, ...subresources];
}

/**
 * A resource's subresources as discovery lists them: a built-in's in name order (as upstream's
 * installer sorts its paths), a custom resource's status then scale (as the CRD discovery controller appends them).
 */
function subresourcesOf(ep: ServedResource): SubresourceInfo[] {
  const kind = ep.names.kind;
  const list: SubresourceInfo[] = [...(ep.subresources.others ?? [])];
  if (ep.subresources.finalize) list.push({ name: 'finalize', kind, verbs: ['update'] });
  if (ep.subresources.status) list.push({ name: 'status', kind, verbs: ['get', 'patch', 'update'] });
  if (ep.subresources.scale) list.push({ name: 'scale', group: 'autoscaling', version: 'v1', kind: 'Scale', verbs: ['get', 'patch', 'update'] });
  return ep.custom ? list : list.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function aggregatedResource(ep: ServedResource): unknown {
  const n = ep.names;
  const r: Record<string, unknown> = {
    resource: n.resource,
    responseKind: { group: ep.group, version: ep.version, kind: n.kind },
    scope: n.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: n.singular,
    verbs: verbsOf(ep),
  };
  if (n.shortNames?.length) r.shortNames = n.shortNames;
  if (n.categories?.length) r.categories = n.categories;
  const subresources = subresourcesOf(ep).map((s) => ({ subresource: s.name, responseKind: { group: s.group ?? ep.group, version: s.version ?? ep.version, kind: s.kind }, verbs: s.verbs }));
  if (subresources.length > 0) r.subresources = subresources;
  return r;
}
