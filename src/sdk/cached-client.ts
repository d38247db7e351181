/**
 * A resource client whose reads come from a Manager's shared informer, as controller-runtime's default client
 * reads from its cache: `get` and `list` (by namespace, label selector, and `metadata.name`/`metadata.namespace`
 * field selectors) answer from memory, as copies the caller may change; writes go to the API server. A read the
 * cache cannot answer (a subresource, another format, paging, a resourceVersion, other field selectors) is sent
 * to the API server, as an APIReader's would be.
 */
import type { KObject } from '../api/object.js';
import { deepCloneMutable } from '../machinery/json.js';
import { parseLabelSelector } from '../machinery/labels.js';
import { errors } from '../machinery/status.js';
import { ResourceClient, type Client, type GroupVersionResource } from './client.js';
import type { Informer } from './informer.js';

/** The field selectors a cache can answer (controller-runtime needs an index for any other). */
const CACHED_FIELD = /^metadata\.(name|namespace)(==?|!=)(.*)$/;

/** How long a read waits for the informer's first list before it fails (controller-runtime blocks on WaitForCacheSync). */
const SYNC_WAIT_MS = 5_000;

export class CachedResourceClient<T extends KObject = KObject, In extends KObject = T> extends ResourceClient<T, In> {
  constructor(
    client: Client,
    gvr: GroupVersionResource,
    /** The informer, started. */
    private readonly cache: () => Promise<Informer>,
    /** The only namespace the informer holds (the manager's), if it holds one only. */
    private readonly cacheNamespace?: string,
    /** Whether reads may use the cache (false once the manager stopped: its informers are gone, none is started again). */
    private readonly caching: () => boolean = () => true,
  ) {
    super(client, gvr);
  }

  /** Whether the cache holds what a read of `namespace` asks for (all namespaces, for a cluster-wide read). */
  private covers(namespace: string | undefined): boolean {
    return this.caching() && (this.cacheNamespace === undefined || namespace === this.cacheNamespace);
  }

  /**
   * The informer once it has listed. A cache that cannot list (RBAC without list and watch, a server that is down)
   * answers nothing rather than a false 404 or an empty list: after SYNC_WAIT_MS the read fails with 503.
   */
  private async synced(): Promise<Informer> {
    const informer = await this.cache();
    const deadline = Date.now() + SYNC_WAIT_MS;
    while (!informer.hasSynced) {
      if (Date.now() > deadline) {
        throw errors.serviceUnavailable(`the cache of ${this.gvr.resource}${this.gvr.group ? `.${this.gvr.group}` : ''} has not synced: ${informer.lastError ?? 'no list yet'} (it needs list and watch)`);
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    return informer;
  }

  /** From the cache (a copy); 404 NotFound, as the API server's, when the informer has no such object. */
  override async get(namespace: string | undefined, name: string, opts: { accept?: string; subresource?: string } = {}): Promise<T> {
    if (opts.accept !== undefined || opts.subresource !== undefined || !this.covers(namespace)) return super.get(namespace, name, opts);
    const informer = await this.synced();
    const obj = informer.get(namespace ? `${namespace}/${name}` : name);
    if (!obj) throw errors.notFound({ group: this.gvr.group, resource: this.gvr.resource }, name);
    return this.copy(obj, informer);
  }

  /** From the cache (copies), filtered by namespace, labelSelector and a metadata.name/namespace fieldSelector. */
  override async list(namespace: string | undefined, query: Record<string, string | undefined> = {}, accept?: string): Promise<KObject & { items: T[] }> {
    const fieldSelector = query.fieldSelector ?? '';
    const fields = fieldSelector === '' ? [] : fieldSelector.split(',').map((f) => CACHED_FIELD.exec(f.trim()));
    const other = Object.entries(query).some(([k, v]) => v !== undefined && k !== 'labelSelector' && k !== 'fieldSelector');
    if (accept !== undefined || other || fields.some((f) => f === null) || !this.covers(namespace)) return super.list(namespace, query, accept);
    // A selector that does not parse is the API server's 400 to give.
    const labels = query.labelSelector ? parseLabelSelectorOrUndefined(query.labelSelector) : undefined;
    if (labels === null) return super.list(namespace, query, accept);
    const informer = await this.synced();
    const items: T[] = [];
    for (const obj of informer.list()) {
      const meta = obj.metadata;
      if (namespace && meta.namespace !== namespace) continue;
      if (labels && !labels.matches((meta.labels ?? {}) as Record<string, string>)) continue;
      if (!fields.every((f) => ((f![1] === 'name' ? meta.name : (meta.namespace ?? '')) === f![3]) === (f![2] !== '!='))) continue;
      items.push(this.copy(obj, informer));
    }
    return { apiVersion: this.apiVersion, kind: informer.kind ? `${informer.kind}List` : 'List', metadata: { resourceVersion: informer.lastResourceVersion }, items };
  }

  private get apiVersion(): string {
    return this.gvr.group ? `${this.gvr.group}/${this.gvr.version}` : this.gvr.version;
  }

  /** A copy of a cached object with its apiVersion and kind (a list's items come without them), as controller-runtime's cache gives. */
  private copy(obj: KObject, informer: Informer): T {
    const c = deepCloneMutable(obj);
    c.apiVersion ??= this.apiVersion;
    if (!c.kind && informer.kind) c.kind = informer.kind;
    return c as T;
  }
}

function parseLabelSelectorOrUndefined(s: string) {
  try {
    return parseLabelSelector(s);
  } catch {
    return null;
  }
}
