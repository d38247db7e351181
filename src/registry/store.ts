/**
 * The generic REST store of one resource: get, list, watch, create, update,
 * delete and deletecollection over the storage layer and the resource's watch
 * cache, running the resource's strategy hooks (apiserver-builder's model).
 * Objects come in and go out in the storage version; the HTTP layer converts.
 */
import { randomUUID } from 'node:crypto';
import { objectForScan, packedText, WatchCache, type CacheEntry, type CacheListResult, type CacheWatchSink, type CacheWatcher } from '../cache/watch-cache.js';
import { field, type FieldError } from '../machinery/field-errors.js';
import { deepClone, parseStoredJson, stringifyJson } from '../machinery/json.js';
import { generateName } from '../machinery/names.js';
import { validateObjectMeta, validateObjectMetaUpdate } from '../machinery/object-meta.js';
import { errors, StatusError, type GroupResource } from '../machinery/status.js';
import { plainLabels } from '../machinery/labels.js';
import { toRfc3339 } from '../machinery/time.js';
import { ConflictError, KeyExistsError, KeyNotFoundError } from '../storage/errors.js';
import type { KeyValue, Storage } from '../storage/types.js';
import { equalExcept } from '../util/deep-equal.js';
import { rememberedJson, rememberJson } from './json-memo.js';
import { shareUnchanged } from './share-unchanged.js';
import { decodeFromStorage, encodeObject, type EncodedObject } from './object-codec.js';
import { MODIFIED_CONFLICT, toStatusError } from './storage-errors.js';
import type { DeleteOptions, ResourceNames, Strategy, TryUpdate, WriteOptions } from './types.js';
import type { KObject } from '../api/object.js';
import { DEFAULT_SUBRESOURCE_STRATEGIES, type SubresourceStrategy } from './subresources.js';
import { ListAbortedError, TooOldRevisionError } from '../cache/errors.js';
import { ObjectMemo } from '../util/object-memo.js';
import { isLarge, KeyedTurns, nextTurn, runStepsInTurns } from '../util/turns.js';

const MAX_ATTEMPTS = 32;
/** etcd's default --max-request-bytes (1.5 MiB): the largest write of one object. */
export const MAX_OBJECT_BYTES = 1.5 * 1024 * 1024;
export const ORPHAN_FINALIZER = 'orphan';
export const FOREGROUND_FINALIZER = 'foregroundDeletion';

/**
 * The garbage collector's finalizers for a propagation policy: Orphan adds `orphan`,
 * Foreground adds `foregroundDeletion`, Background removes both; no policy keeps
 * whichever the object already has. Returns whether the finalizers changed.
 */
function applyPropagationFinalizers(obj: KObject, policy: string | undefined): boolean {
  if (policy === undefined) return false;
  const before: string[] = Array.isArray(obj.metadata.finalizers) ? obj.metadata.finalizers : [];
  const after = before.filter((f) => f !== ORPHAN_FINALIZER && f !== FOREGROUND_FINALIZER);
  if (policy === 'Orphan') after.push(ORPHAN_FINALIZER);
  if (policy === 'Foreground') after.push(FOREGROUND_FINALIZER);
  if (after.length === before.length && after.every((f, i) => f === before[i])) return false;
  if (after.length > 0) obj.metadata.finalizers = after;
  else delete obj.metadata.finalizers;
  return true;
}
const GENERATE_NAME_ATTEMPTS = 8;

export interface StoreListOptions {
  namespace?: string;
  filter?: (obj: KObject) => boolean;
  /** The label selector of `filter` (which must refuse what it refuses), for the watch cache to match without decoding. */
  labels?: (labels: Readonly<Record<string, string>> | undefined) => boolean;
  limit?: number;
  /**
   * The one name `filter` accepts (a field selector `metadata.name=`): in a namespace (or of a cluster-scoped
   * resource), only that object's key is read, as the cacher reads one key for a selector that matches a single object.
   */
  name?: string;
  /** Inclusive start key, from a continue token. */
  startKey?: string;
  /** Whether the client is gone (or answered): a list in steps then ends at its next pause. */
  aborted?: () => boolean;
  /** Exact revision to list at (a continue token's, or resourceVersionMatch=Exact). */
  revision?: number;
  /** Serve the latest state once the cache has reached this revision. */
  minRevision?: number;
  /** Read the latest committed state (resourceVersion unset). */
  consistent?: boolean;
  /**
   * A second, asynchronous selection of the objects `filter` kept (a field selector on a version the
   * objects must first be converted to). Pages are read on until `limit` objects are selected.
   */
  select?: (objects: KObject[]) => Promise<KObject[]>;
}

/**
 * Objects the watch cache decoded again from its text, by their store's state tag: with their uid and
 * resourceVersion it names their content, so what is derived from them (a conversion) may be shared by every copy
 * decoded of the same state. Objects decoded while their store changes how it reads have none.
 */
const storedStates = new ObjectMemo<KObject, number>('kapi.storedState');
let nextStateTag = 1;

/** The tag of an object decoded again from the watch cache's text (undefined for any other object). */
export function storedStateOf(obj: KObject): number | undefined {
  return storedStates.get(obj);
}

/** A list's items one at a time: each object, or its JSON as served in an API version when known without decoding. */
export interface ListedItems {
  readonly length: number;
  object(index: number): KObject;
  /** The item's JSON text in `apiVersion` (a `kind` typed object's starts with its kind), if kept so; else undefined. */
  servedJson(index: number, apiVersion: string, kind: string): string | undefined;
}

/** The served JSON of a cached entry kept as text, when it is in `apiVersion` (read from how the text starts). */
function packedJson(entry: CacheEntry<KObject>, apiVersion: string, kind: string): string | undefined {
  let text = packedText(entry);
  if (text === undefined) return undefined;
  if (text.startsWith(CHANGED_ON_READ)) text = text.slice(CHANGED_ON_READ.length);
  // Custom resources start with their apiVersion, typed objects with their kind then apiVersion.
  const [own, typed] = prefixesOf(apiVersion, kind);
  return text.startsWith(own) || text.startsWith(typed) ? text : undefined;
}

let lastPrefixes: { apiVersion: string; kind: string; prefixes: [string, string] } | undefined;

/** How an object's JSON in `apiVersion` starts (made once per list's version and kind, not per item). */
function prefixesOf(apiVersion: string, kind: string): [string, string] {
  if (lastPrefixes?.apiVersion !== apiVersion || lastPrefixes.kind !== kind) {
    const version = `"apiVersion":${JSON.stringify(apiVersion)},`;
    lastPrefixes = { apiVersion, kind, prefixes: [`{${version}`, `{"kind":${JSON.stringify(kind)},${version}`] };
  }
  return lastPrefixes.prefixes;
}

/** How a packed object's text starts when the object reads differently from its stored form (no JSON text starts so). */
const CHANGED_ON_READ = '!';

/** Objects read at a time for an asynchronous selection, whatever the limit. */
const SELECT_CHUNK = 100;

export interface StoreListResult {
  /** The objects (decoded when first read: a list answered from `listed` as JSON may never read them). */
  items: KObject[];
  /** The items one at a time, and the JSON of those the cache keeps as text (a list's plain JSON answer decodes none of them). */
  listed?: ListedItems;
  revision: number;
  /** Key to continue from, when more remain. */
  continueKey?: string;
  remainingItemCount?: number;
}

export interface UpdateResult {
  object: KObject;
  created: boolean;
}

export interface DeleteResult {
  object: KObject;
  /** False when finalizers kept the object (it was only marked for deletion). */
  deleted: boolean;
}

export class RestStore {
  readonly prefix: string;
  readonly cache: WatchCache<KObject>;
  readonly resource: GroupResource;
  /** Group-qualified kind, for Invalid errors. */
  readonly groupKind: GroupResource;

  constructor(
    readonly storage: Storage,
    /** Names and strategy may change while serving (a CRD update); the key prefix never does. */
    public names: ResourceNames,
    strategy: Strategy,
    keyRoot?: string,
  ) {
    this.currentStrategy = strategy;
    this.stateTag = nextStateTag++;
    this.prefix = keyRoot ?? (names.group ? `/registry/${names.group}/${names.resource}/` : `/registry/${names.resource}/`);
    this.cache = new WatchCache<KObject>(storage, this.prefix, (kv) => this.decodeWritten(kv), {
      restamp: (obj, revision) => ({ ...obj, metadata: { ...obj.metadata, resourceVersion: String(revision) } }),
      compact: { pack: (obj) => this.pack(obj), unpack: (text) => this.unpack(text), unpackStored: (kv) => this.unpackStored(kv), labels: (obj) => plainLabels(obj.metadata?.labels) },
    });
    this.resource = { group: names.group, resource: names.resource };
    this.groupKind = { group: names.group, resource: names.kind };
  }

  private currentStrategy: Strategy;

  /**
   * What objects this store decodes are tagged with (storedStateOf): it changes with the strategy, which decides how
   * stored objects read (a CRD's schema), and is none while the cache decodes its objects again for a new one.
   */
  private stateTag: number | undefined;
  private redecoding = 0;

  get strategy(): Strategy {
    return this.currentStrategy;
  }

  set strategy(strategy: Strategy) {
    this.currentStrategy = strategy;
    this.stateTag = this.redecoding > 0 ? undefined : nextStateTag++;
  }

  /** The cached objects decoded again, for a strategy that reads them otherwise (a CRD's new schema). */
  async redecode(): Promise<void> {
    this.redecoding++;
    this.stateTag = undefined;
    try {
      await this.cache.redecode();
    } finally {
      if (--this.redecoding === 0) this.stateTag = nextStateTag++;
    }
  }

  start(): Promise<void> {
    return this.cache.start();
  }

  stop(): void {
    this.cache.stop();
  }

  key(namespace: string | undefined, name: string): string {
    return this.names.namespaced ? `${this.prefix}${namespace}/${name}` : `${this.prefix}${name}`;
  }

  namespacePrefix(namespace: string | undefined): string {
    return this.names.namespaced && namespace ? `${this.prefix}${namespace}/` : this.prefix;
  }

  /** The one key a list or watch of `name` reads (undefined: no name, or every namespace's). */
  private nameKey(namespace: string | undefined, name: string | undefined): string | undefined {
    return name !== undefined && (!this.names.namespaced || namespace) ? this.key(namespace, name) : undefined;
  }

  /** The current object. It may be shared with the cache and other readers: copy before changing it. */
  async get(namespace: string | undefined, name: string): Promise<KObject> {
    const cur = await this.current(this.key(namespace, name), name);
    if (!cur) throw errors.notFound(this.resource, name);
    return cur.object;
  }

  async list(opts: StoreListOptions): Promise<StoreListResult> {
    const select = opts.select;
    if (!select) return this.listPage(opts);
    const limit = opts.limit ?? 0;
    const items: KObject[] = [];
    let page: StoreListResult = await this.listPage({ ...opts, limit: limit > 0 ? Math.max(limit, SELECT_CHUNK) : undefined });
    for (;;) {
      const chosen = await select(page.items);
      if (limit > 0 && items.length + chosen.length >= limit) {
        items.push(...chosen.slice(0, limit - items.length));
        const last = items[items.length - 1];
        // Continue right after the last object kept; where the page ends when that was its last one.
        const continueKey = last === page.items[page.items.length - 1] ? page.continueKey : this.key(last.metadata.namespace, last.metadata.name) + '\x00';
        return { items, revision: page.revision, continueKey };
      }
      items.push(...chosen);
      if (page.continueKey === undefined) return { items, revision: page.revision };
      page = await this.listPage({ namespace: opts.namespace, name: opts.name, filter: opts.filter, labels: opts.labels, revision: page.revision, startKey: page.continueKey, limit: limit > 0 ? SELECT_CHUNK : undefined, aborted: opts.aborted });
    }
  }

  private async listPage(opts: StoreListOptions): Promise<StoreListResult> {
    await this.cache.start();
    try {
      if (opts.consistent) await this.cache.sync();
      else if (opts.minRevision) await this.cache.waitUntilFresh(opts.minRevision);
      const prefix = this.namespacePrefix(opts.namespace);
      // The cache began listing the store again after the waits above: storage answers.
      if (this.cache.relisting) return await this.listFromStorage(prefix, opts);
      let page: CacheListResult<KObject>;
      try {
        // In steps: a list of many objects (or a field selector over them) takes turns with other requests.
        const key = this.nameKey(opts.namespace, opts.name);
        page = await runStepsInTurns(
          this.cache.listing({ prefix, key, revision: opts.revision, startKey: opts.startKey, limit: opts.limit, filter: opts.filter, labels: opts.labels, aborted: opts.aborted }),
        );
      } catch (err) {
        if (err instanceof ListAbortedError) throw err;
        if (opts.revision !== undefined) return await this.listFromStorage(prefix, opts);
        // A long list at the latest revision while writes went past the cache's window meanwhile, or while the cache
        // lists the store again: listed from storage, at its latest revision.
        if (!(err instanceof TooOldRevisionError)) throw err;
        return await this.listFromStorage(prefix, opts);
      }
      const entries = page.items;
      let items: KObject[] | undefined;
      return {
        get items() {
          return (items ??= entries.map(objectForScan));
        },
        listed: {
          length: entries.length,
          object: (i) => items?.[i] ?? objectForScan(entries[i]),
          servedJson: (i, apiVersion, kind) => (items ? undefined : packedJson(entries[i], apiVersion, kind)),
        },
        revision: page.revision,
        continueKey: page.more && page.lastKey !== undefined ? page.lastKey + '\x00' : undefined,
        remainingItemCount: page.more ? page.remaining : undefined,
      };
    } catch (err) {
      throw toStatusError(err, this.resource, '');
    }
  }

  /**
   * Watch from a revision (undefined: the current objects as ADDED, then changes). Watch-list:
   * `initialEventsEnd` marks the end of the current objects with a bookmark, after the state is at
   * least `minRevision` (or the latest committed, `consistent`); `fromNow` starts with no objects.
   */
  async watch(
    opts: {
      namespace?: string;
      /** StoreListOptions.name */
      name?: string;
      afterRevision?: number;
      filter?: (obj: KObject) => boolean;
      /** The label selector of `filter` (StoreListOptions.labels). */
      labels?: StoreListOptions['labels'];
      bookmarks?: boolean;
      consistent?: boolean;
      minRevision?: number;
      initialEventsEnd?: boolean;
      fromNow?: boolean;
    },
    sink: CacheWatchSink<KObject>,
  ): Promise<CacheWatcher> {
    await this.cache.start();
    try {
      if (opts.consistent) await this.cache.sync();
      else if (opts.minRevision !== undefined && opts.minRevision > this.cache.currentRevision) await this.cache.waitUntilFresh(opts.minRevision);
      if (opts.afterRevision !== undefined && opts.afterRevision > this.cache.currentRevision) {
        await this.cache.waitUntilFresh(opts.afterRevision);
      }
      // Begun listing the store again after the waits above: watched once it has.
      if (this.cache.relisting) await this.cache.start();
      const afterRevision = opts.fromNow ? this.cache.currentRevision : opts.afterRevision;
      return this.cache.watch(
        {
          afterRevision,
          prefix: this.namespacePrefix(opts.namespace),
          key: this.nameKey(opts.namespace, opts.name),
          filter: opts.filter,
          labels: opts.filter && opts.labels,
          bookmarks: opts.bookmarks,
          initialEventsEnd: opts.initialEventsEnd,
          // A client's watch of many objects takes turns with other requests while its first events go out.
          inSteps: true,
        },
        sink,
      );
    } catch (err) {
      throw toStatusError(err, this.resource, '');
    }
  }

  async create(namespace: string | undefined, obj: KObject, opts: WriteOptions = {}): Promise<KObject> {
    const sent = (obj.metadata ??= {});
    if (sent.resourceVersion !== undefined && sent.resourceVersion !== '') {
      throw errors.badRequest('resourceVersion should not be set on objects to be created');
    }
    const admission = opts.admission;
    const large = isLarge(opts.bodyBytes);
    const mutation = this.mutationWatch();
    if (admission?.chain.mutating.length) await admission.chain.admit({ ...admission.request, name: sent.name ?? '', operation: 'CREATE', object: obj, defaulter: mutation.defaulter });
    if (large) await nextTurn();
    this.beforeCreate(namespace, obj, opts, this.asDecoded(opts, mutation.changed));
    const meta = obj.metadata; // the hooks may have replaced it
    const generated = !meta.name && meta.generateName;
    for (let attempt = 0; ; attempt++) {
      if (generated) meta.name = generateName(meta.generateName);
      if (large) await nextTurn();
      this.validateCreate(obj, opts);
      if (admission?.chain.validating.length && attempt === 0) await admission.chain.validate({ ...admission.request, name: meta.name ?? '', operation: 'CREATE', object: obj });
      const key = this.key(namespace, meta.name);
      try {
        if (large) await nextTurn();
        const stored = await this.toStorage(obj, opts);
        if (opts.dryRun) {
          if (await this.storage.get(key)) throw new KeyExistsError(key);
          return stored;
        }
        return this.decode(await this.storage.create(key, this.encode(key, stored)));
      } catch (err) {
        this.written.delete(key);
        if (err instanceof KeyExistsError && generated && attempt < GENERATE_NAME_ATTEMPTS) continue;
        if (err instanceof KeyExistsError) throw await this.alreadyExists(key, meta.name);
        throw toStatusError(err, this.resource, meta.name);
      }
    }
  }

  /**
   * A compare-and-swap update loop (GuaranteedUpdate): read the current object, let
   * `tryUpdate` build the new one, run the strategy, and write on the read revision;
   * on a lost race, read again and build again: only a resourceVersion
   * the client sent and that is not the current one ends in 409.
   */
  async update(
    namespace: string | undefined,
    name: string,
    tryUpdate: TryUpdate,
    opts: WriteOptions = {},
  ): Promise<UpdateResult> {
    const key = this.key(namespace, name);
    // Large writes to one object take turns with each other: worked in steps, each would otherwise lose the
    // compare-and-swap to the others, again and again.
    let release: (() => void) | undefined;
    try {
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        const kv = await this.current(key, name);
        if (!kv) {
          if (opts.subresource !== undefined || (!this.strategy.allowCreateOnUpdate && !opts.allowCreate)) throw errors.notFound(this.resource, name);
          const fresh = await tryUpdate(undefined, isLarge(opts.bodyBytes));
          if (fresh.metadata?.resourceVersion) throw errors.notFound(this.resource, name);
          try {
            return { object: await this.create(namespace, fresh, opts), created: true };
          } catch (err) {
            if ((err as { reason?: string }).reason === 'AlreadyExists') continue;
            throw err;
          }
        }
        // A small patch of a large object is as much work as a large body.
        const large = isLarge(opts.bodyBytes) || isLarge(kv.bytes);
        if (large && !release) {
          release = await this.largeWrites.take(key);
          attempt--;
          continue; // read again, now that it is this write's turn
        }
        const old = kv.object;
        // The stored object as the strategy sees it (with a codec, in the request's version): `base` is
        // shared and never changed; tryUpdate gets a copy of its own, which it may change.
        const codec = opts.codec;
        if (codec?.prepare) await codec.prepare([old]);
        const base = codec ? codec.toVersion(old) : old;
        const prior = deepClone(base);
        if (large) await nextTurn();
        let obj = await tryUpdate(prior, large);
        if (large) await nextTurn();
        const sub = opts.subresource === undefined ? undefined : this.subresourceStrategy(opts.subresource);
        if (sub) obj = sub.prepareForUpdate(obj, prior);
        const clientRV = (obj.metadata ??= {}).resourceVersion;
        if (clientRV !== undefined && clientRV !== '' && clientRV !== old.metadata.resourceVersion) {
          throw errors.conflict(this.resource, name, MODIFIED_CONFLICT);
        }
        if (clientRV === undefined || clientRV === '') {
          if (!this.strategy.allowUnconditionalUpdate) throw errors.invalid(this.resource, name, [field.invalid('metadata.resourceVersion', 0, 'must be specified for an update')]);
          // An unconditional update is made against the stored object (upstream's Versioner().UpdateObject).
          obj.metadata.resourceVersion = old.metadata.resourceVersion;
        }
        const admission = opts.admission;
        const mutation = this.mutationWatch();
        if (admission?.chain.mutating.length) {
          await admission.chain.admit({ ...admission.request, operation: 'UPDATE', object: obj, oldObject: base, defaulter: mutation.defaulter });
          // A write through a subresource keeps only its part, whatever admission changed (upstream resets after it too).
          if (sub) obj = sub.prepareForUpdate(obj, prior);
        }
        if (large) await nextTurn();
        this.beforeUpdate(namespace, obj, base, opts, this.asDecoded(opts, mutation.changed));
        if (admission?.chain.validating.length) await admission.chain.validate({ ...admission.request, operation: 'UPDATE', object: obj, oldObject: base });
        if (large) await nextTurn();
        obj = await this.toStorage(obj, opts);
        const meta = obj.metadata;
        meta.resourceVersion = old.metadata.resourceVersion;
        // Also points obj's unchanged members at old's, so the cache shares them.
        // A no-op when nothing changed from the stored form (an object that read differently is written).
        if (shareUnchanged(obj, old) && !this.changedOnRead.has(old) && !this.storage.isStale?.(key, kv.modRevision)) return { object: old, created: false };
        if (meta.deletionTimestamp && !this.hasPendingFinalizers(obj)) {
          // The last finalizer is gone from an object being deleted: delete it now.
          if (opts.dryRun) return { object: obj, created: false };
          try {
            await this.storage.delete(key, kv.modRevision);
            return { object: obj, created: false };
          } catch (err) {
            if (err instanceof ConflictError) continue;
            throw toStatusError(err, this.resource, name);
          }
        }
        if (opts.dryRun) return { object: obj, created: false };
        try {
          return { object: this.decode(await this.storage.update(key, this.encode(key, obj), kv.modRevision)), created: false };
        } catch (err) {
          this.written.delete(key);
          // A lost race: build the object again on the new revision (a resourceVersion the
          // client sent then no longer matches, and that attempt answers 409).
          if (err instanceof ConflictError || err instanceof KeyNotFoundError) continue;
          throw toStatusError(err, this.resource, name);
        }
      }
      throw errors.conflict(this.resource, name, MODIFIED_CONFLICT);
    } finally {
      release?.();
    }
  }

  /** Large writes by key: each waits for the one before it on the same key. */
  private readonly largeWrites = new KeyedTurns();

  /**
   * Delete, as the generic store does: the strategy's first-delete hook, then the
   * garbage collector's finalizers for the propagation policy; an object left with
   * finalizers is only marked (deletionTimestamp), otherwise it goes now.
   */
  async delete(namespace: string | undefined, name: string, opts: DeleteOptions = {}): Promise<DeleteResult> {
    const key = this.key(namespace, name);
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const kv = await this.current(key, name);
      if (!kv) throw errors.notFound(this.resource, name);
      const old = kv.object;
      this.checkPreconditions(old, name, opts);
      const admission = opts.admission;
      if (admission) {
        const attributes = { ...admission.request, name, operation: 'DELETE' as const, oldObject: old };
        await admission.chain.admit(attributes);
        await admission.chain.validate(attributes);
      }
      const next = deepClone(old);
      let changed = !old.metadata.deletionTimestamp && this.strategy.prepareForDelete?.(next) === true;
      changed = applyPropagationFinalizers(next, opts.propagationPolicy) || changed;
      try {
        if (this.hasPendingFinalizers(next)) {
          if (!next.metadata.deletionTimestamp) {
            next.metadata.deletionTimestamp = toRfc3339(new Date());
            next.metadata.deletionGracePeriodSeconds = 0;
            if (typeof next.metadata.generation === 'number') next.metadata.generation++;
            changed = true;
          }
          if (!changed) return { object: old, deleted: false };
          if (opts.dryRun) return { object: next, deleted: false };
          return { object: this.decode(await this.storage.update(key, this.encode(key, next), kv.modRevision)), deleted: false };
        }
        if (opts.dryRun) return { object: old, deleted: true };
        await this.storage.delete(key, kv.modRevision);
        return { object: old, deleted: true };
      } catch (err) {
        this.written.delete(key);
        if (err instanceof ConflictError) continue;
        if (err instanceof KeyNotFoundError) throw errors.notFound(this.resource, name);
        throw toStatusError(err, this.resource, name);
      }
    }
    throw errors.conflict(this.resource, name, MODIFIED_CONFLICT);
  }

  /**
   * Delete every object the list options select; answers with them as they were listed, before
   * deletion (upstream's DeleteCollection returns its list, not what each delete returned).
   */
  async deleteCollection(list: StoreListOptions, opts: DeleteOptions = {}): Promise<StoreListResult> {
    const selected = await this.list({ ...list, limit: undefined, startKey: undefined, consistent: true });
    // One object decoded at a time, as its turn comes (decoding a million at once would hold the loop for seconds).
    const { listed } = selected;
    const count = listed ? listed.length : selected.items.length;
    for (let i = 0; i < count; i++) {
      // A request answered meanwhile (its timeout's 504) or given up by its client deletes no more, as upstream's
      // deletions stop with the request's context.
      if (list.aborted?.()) throw new ListAbortedError();
      const item = listed ? listed.object(i) : selected.items[i];
      try {
        await this.delete(item.metadata.namespace, item.metadata.name, opts);
      } catch (err) {
        if ((err as { reason?: string }).reason !== 'NotFound') throw err;
      }
    }
    const revision = await this.storage.currentRevision();
    // The objects as listed; answered from `listed` as JSON, they are not all decoded.
    return {
      get items() {
        return selected.items;
      },
      listed,
      revision,
    };
  }

  /** A written object in the storage version: converted from the request's (then pruned and defaulted in the storage version). */
  private async toStorage(obj: KObject, opts: WriteOptions): Promise<KObject> {
    if (!opts.codec) return obj;
    const stored = await opts.codec.toStorage(obj);
    if (stored.apiVersion !== obj.apiVersion) this.strategy.prepareForStorage?.(stored);
    return stored;
  }

  /**
   * The defaulter admission runs on what a mutating plugin changed (the strategy's defaultMutated), and
   * whether one did: an object nothing changed since the handler decoded it need not be decoded again.
   */
  private mutationWatch(): { defaulter: (obj: KObject) => void; readonly changed: boolean } {
    const strategy = this.strategy;
    const watch = {
      changed: false,
      defaulter: (obj: KObject) => {
        watch.changed = true;
        strategy.defaultMutated?.(obj);
      },
    };
    return watch;
  }

  /** Whether the object is as the handler decoded it: no admission plugin changed it, or could have without saying. */
  private asDecoded(opts: WriteOptions, changed: boolean): boolean {
    const chain = opts.admission?.chain;
    return opts.decoded === true && !changed && (chain === undefined || chain.mutating.length === 0 || chain.changesReported);
  }

  private subresourceStrategy(subresource: string): SubresourceStrategy | undefined {
    return this.strategy.subresourceStrategies?.[subresource] ?? DEFAULT_SUBRESOURCE_STRATEGIES[subresource];
  }

  private hasPendingFinalizers(obj: KObject): boolean {
    if (this.strategy.hasPendingFinalizers) return this.strategy.hasPendingFinalizers(obj);
    return Array.isArray(obj.metadata.finalizers) && obj.metadata.finalizers.length > 0;
  }

  /**
   * The key's current object and revision. When the store can tell the current
   * revision without reading the value and the cache holds that revision, it is
   * the cache's object: nothing to read or decode.
   */
  private async current(key: string, name: string): Promise<{ modRevision: number; object: KObject; bytes?: number } | undefined> {
    const rev = this.storage.modRevisionOf?.(key);
    if (rev === 0) return undefined;
    if (rev !== undefined) {
      const cached = this.cache.get(key);
      if (cached && cached.revision === rev) return { modRevision: rev, object: cached.object, bytes: cached.bytes };
    }
    const kv = await this.read(key, name);
    return kv && { modRevision: kv.modRevision, object: this.decode(kv), bytes: kv.value.length };
  }

  private async read(key: string, name: string): Promise<KeyValue | undefined> {
    try {
      return await this.storage.get(key);
    } catch (err) {
      throw toStatusError(err, this.resource, name);
    }
  }

  /** Objects this store just encoded for a write, by key, so the cache can take them instead of parsing their JSON again. */
  private readonly written = new Map<string, { encoded: EncodedObject; obj: KObject }>();

  private encode(key: string, obj: KObject): string {
    const encoded = encodeObject(obj);
    const stored = encoded.stored;
    // etcd refuses requests over 1.5 MiB; every backend keeps that bound, with kapi's 4xx for upstream's 500.
    if (stored.length * 3 > MAX_OBJECT_BYTES && Buffer.byteLength(stored) + Buffer.byteLength(key) > MAX_OBJECT_BYTES) {
      throw new StatusError(413, 'RequestEntityTooLarge', 'etcdserver: request is too large');
    }
    this.written.set(key, { encoded, obj });
    return stored;
  }

  /** The cache's decoder: the object just written when the stored bytes are its own, else a parse. */
  private decodeWritten(kv: KeyValue): KObject {
    const w = this.written.get(kv.key);
    if (w) {
      this.written.delete(kv.key);
      if (w.encoded.stored === kv.value) {
        const rv = String(kv.modRevision);
        w.obj.metadata.resourceVersion = rv;
        if (w.encoded.served) rememberJson(w.obj, w.encoded.served(rv));
        return w.obj;
      }
    }
    return this.decodeRead(kv);
  }

  /** The decoded object for a stored revision, shared with the cache when it holds the same revision: never mutate it. */
  private decode(kv: KeyValue): KObject {
    const cached = this.cache.get(kv.key);
    return cached && cached.revision === kv.modRevision ? cached.object : this.decodeRead(kv);
  }

  /** Decode a stored value and let the strategy default and prune it (as served, not as stored). */
  private decodeRead(kv: KeyValue): KObject {
    const obj = decodeFromStorage(kv);
    if (this.strategy.onRead?.(obj) === true) this.changedOnRead.add(obj);
    return obj;
  }

  /**
   * An object the cache has not read lately, as text: its JSON as served (remembered since a write or a GET, else
   * made), marked when it reads differently from its stored form.
   */
  private pack(obj: KObject): string {
    const json = rememberedJson(obj) ?? stringifyJson(obj);
    return this.changedOnRead.has(obj) ? CHANGED_ON_READ + json : json;
  }

  /** The object again from `pack`'s text, its JSON remembered (what reads it next serves it). */
  private unpack(text: string): KObject {
    const changed = text.startsWith(CHANGED_ON_READ);
    const json = changed ? text.slice(CHANGED_ON_READ.length) : text;
    const obj = parseStoredJson(json) as KObject;
    if (this.stateTag !== undefined) storedStates.set(obj, this.stateTag);
    if (changed) this.changedOnRead.add(obj);
    rememberJson(obj, json);
    return obj;
  }

  /** An object kept as its stored value since a load, decoded (by the strategy of now). */
  private unpackStored(kv: KeyValue): KObject {
    const obj = this.decodeRead(kv);
    if (this.stateTag !== undefined) storedStates.set(obj, this.stateTag);
    return obj;
  }

  /** Decoded objects that read differently from their stored form (a default added since, a field pruned). */
  private readonly changedOnRead = new WeakSet<KObject>();

  private async listFromStorage(prefix: string, opts: StoreListOptions): Promise<StoreListResult> {
    const items: KObject[] = [];
    let startKey = opts.startKey;
    const limit = opts.limit ?? 0;
    for (;;) {
      const page = await this.storage.range(prefix, { revision: opts.revision, startKey, limit: limit > 0 ? limit : 0 });
      let lastKey: string | undefined;
      for (const kv of page.kvs) {
        lastKey = kv.key;
        const obj = this.decodeRead(kv);
        if (!opts.filter || opts.filter(obj)) items.push(obj);
        if (limit > 0 && items.length >= limit) break;
      }
      const more = page.more || (lastKey !== undefined && lastKey !== page.kvs[page.kvs.length - 1]?.key);
      if (!more || lastKey === undefined) return { items, revision: page.revision };
      if (limit > 0 && items.length >= limit) {
        return { items, revision: page.revision, continueKey: lastKey + '\x00', remainingItemCount: opts.filter ? undefined : page.count - page.kvs.length };
      }
      startKey = lastKey + '\x00';
    }
  }

  private beforeCreate(namespace: string | undefined, obj: KObject, opts: WriteOptions, asDecoded: boolean): void {
    const meta = obj.metadata;
    if (this.names.namespaced) meta.namespace = namespace;
    else delete meta.namespace;
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    this.strategy.defaulting?.(obj, opts, asDecoded);
    this.strategy.prepareForCreate?.(obj, opts);
    this.fillSystemFields(obj);
  }

  /** uid, creationTimestamp and generation, after the hooks (which may have replaced metadata). */
  private fillSystemFields(obj: KObject): void {
    const meta = obj.metadata;
    meta.uid = randomUUID();
    meta.creationTimestamp = toRfc3339(new Date());
    if (this.strategy.generation === 'spec' || this.strategy.generation === 'create') meta.generation = 1;
    else delete meta.generation;
  }

  private validateCreate(obj: KObject, opts: WriteOptions): void {
    const errs: FieldError[] = [
      ...this.genericMetaErrors(obj.metadata),
      ...(this.strategy.validate?.(obj, opts) ?? []),
    ];
    if (errs.length > 0) throw errors.invalid(this.groupKind, obj.metadata.name ?? '', errs);
    this.strategy.canonicalize?.(obj);
  }

  /** ValidateObjectMeta, unless the strategy checks metadata (or its names) itself. */
  private genericMetaErrors(meta: KObject['metadata']): FieldError[] {
    const own = this.strategy.validatesMetadata;
    return own === true ? [] : validateObjectMeta(meta, { namespaced: this.names.namespaced, names: own !== 'names', nameFn: this.strategy.nameRule });
  }

  private beforeUpdate(namespace: string | undefined, obj: KObject, old: KObject, opts: WriteOptions, asDecoded: boolean): void {
    const subresource = opts.subresource;
    let meta = obj.metadata;
    const oldMeta = old.metadata;
    if (this.names.namespaced) meta.namespace ??= namespace;
    else delete meta.namespace;
    this.strategy.defaulting?.(obj, opts, asDecoded);
    meta = obj.metadata;
    meta.generation = oldMeta.generation;
    if (meta.generation === undefined) delete meta.generation;
    this.strategy.prepareForUpdate?.(obj, old, opts);
    meta = obj.metadata;
    // Main endpoint and /scale write the spec: status is kept and a spec change moves generation.
    const specWrite = subresource === undefined || subresource === 'scale';
    const reset = specWrite ? (this.strategy.resetFieldsOnMainEndpoint ?? []) : [];
    for (const f of reset) {
      if (old[f] === undefined) delete obj[f];
      else obj[f] = old[f];
    }
    const ignored = this.strategy.generationIgnores ?? this.strategy.resetFieldsOnMainEndpoint ?? [];
    if (specWrite && this.strategy.generation === 'spec' && !equalExcept(obj, old, ['metadata', ...ignored])) {
      meta.generation = (oldMeta.generation ?? 0) + 1;
    }
    if (!meta.uid) meta.uid = oldMeta.uid;
    if (oldMeta.creationTimestamp) meta.creationTimestamp = oldMeta.creationTimestamp;
    if (oldMeta.deletionTimestamp) meta.deletionTimestamp = oldMeta.deletionTimestamp;
    else delete meta.deletionTimestamp;
    if (oldMeta.deletionGracePeriodSeconds !== undefined) meta.deletionGracePeriodSeconds = oldMeta.deletionGracePeriodSeconds;
    else delete meta.deletionGracePeriodSeconds;
    const errs: FieldError[] = [
      ...this.genericMetaErrors(meta),
      ...validateObjectMetaUpdate(meta, oldMeta),
      ...(this.strategy.validateUpdate?.(obj, old, opts) ?? []),
    ];
    if (errs.length > 0) throw errors.invalid(this.groupKind, meta.name ?? '', errs);
    this.strategy.canonicalize?.(obj);
  }

  private checkPreconditions(obj: KObject, name: string, opts: DeleteOptions): void {
    const pre = opts.preconditions;
    if (pre?.uid && pre.uid !== obj.metadata.uid) {
      throw errors.conflict(
        this.groupKind,
        name,
        `the UID in the precondition (${pre.uid}) does not match the UID in record (${obj.metadata.uid}). The object might have been deleted and then recreated`,
      );
    }
    if (pre?.resourceVersion && pre.resourceVersion !== obj.metadata.resourceVersion) {
      throw errors.conflict(
        this.groupKind,
        name,
        `the ResourceVersion in the precondition (${pre.resourceVersion}) does not match the ResourceVersion in record (${obj.metadata.resourceVersion}). The object might have been modified`,
      );
    }
  }

  private async alreadyExists(key: string, name: string): Promise<Error> {
    const existing = await this.storage.get(key).catch(() => undefined);
    const deleting = existing && decodeFromStorage(existing).metadata.deletionTimestamp;
    return errors.alreadyExists(this.resource, name, deleting ? 'object is being deleted: ' : '');
  }
}
