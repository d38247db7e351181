/**
 * The endpoints of the built-in resources (apis/builtin.ts's table): a store per resource, or another
 * resource's store for one served from it (events.k8s.io Events), typed decoding and conversion from the
 * Go types, upstream's defaulting, Tables and merge types. Nothing here names a resource: what a resource
 * needs beyond the generic is in its row of the table.
 */
import type { ServiceAccountTokens } from '../apis/authentication/service-account-tokens.js';
import { typedScope } from '../registry/request-scope.js';
import { BUILTIN_RESOURCES, typedConversion, typedDecoder, typedDecoderInTurns, withTypedDecoding, type BuiltinContext, type BuiltinResource } from '../apis/builtin.js';
import { builtinFieldLabel } from '../apis/field-labels.js';
import { NAMESPACES } from '../apis/core/namespaces.js';
import { DEFAULT_SERVICE_RANGES, type ServiceRanges } from '../apis/core/services.js';
import { structOfKind } from '../api/go-type-expr.js';
import { shapeAsGo, zeroStruct } from '../schema/builtin/go-shape.js';
import type { KObject } from '../api/object.js';
import { deepClone } from '../machinery/json.js';
import { builtinApplyType } from '../apply/index.js';
import { builtinStructural } from '../openapi/inline.js';
import { tableConvertorOf } from '../printing/index.js';
import type { ApiRegistry, Endpoint } from '../registry/registry.js';
import { RestStore } from '../registry/store.js';
import type { Storage } from '../storage/types.js';
import { CacheView } from '../cache/cache-view.js';
import { objectForScan } from '../cache/watch-cache.js';

/** Where a built-in's stored objects come from, for a resource served from another's store. */
export interface EndpointLookup {
  (group: string, version: string, resource: string): Endpoint | undefined;
}

const DEFAULT_CONTEXT: BuiltinContext = { ranges: DEFAULT_SERVICE_RANGES, objects: () => [], object: () => undefined };

/** The endpoint of a built-in resource; one stored as another's needs that one registered first (`lookup`). */
export function builtinEndpoint(storage: Storage, r: BuiltinResource, context: BuiltinContext = DEFAULT_CONTEXT, lookup?: EndpointLookup): Endpoint {
  const apiVersion = r.names.group ? `${r.names.group}/${r.version}` : r.version;
  const structId = structOfKind(r.names.group, r.version, r.names.kind);
  const common = {
    group: r.names.group,
    version: r.version,
    names: r.names,
    verbs: r.verbs,
    custom: false,
    scope: typedScope(r.names.group, r.version, r.names),
    fieldLabel: builtinFieldLabel(r.names.group, r.version, r.names.kind),
    subresources: { status: r.status, finalize: r.finalize, scale: r.scale, others: r.subresourcesIn ? r.subresourcesIn(context) : r.subresources },
    applyType: builtinApplyType(r.names.group, r.version, r.names.kind),
    celSchema: () => builtinStructural(r.names.group, r.version, r.names.kind),
    decodeObject: structId ? typedDecoder(structId, r.names.kind) : undefined,
    decodeObjectInTurns: structId ? typedDecoderInTurns(structId, r.names.kind) : undefined,
    emptyObject: structId ? emptyObjectOf(structId) : undefined,
  };
  const table = tableConvertorOf(r.printer);
  const storedAs = r.storedAs;
  if (storedAs) {
    const stored = lookup?.(storedAs.group, storedAs.version ?? r.version, storedAs.resource);
    if (!stored) throw new Error(`${r.names.group}/${r.names.resource}: stored as ${storedAs.group}/${storedAs.resource}, which is not registered before it`);
    return withOtherVersions(lookup, {
      ...common,
      store: stored.store,
      // Printed as the stored kind; selected by its fields in this version.
      table: { ...table, row: (obj, now) => table.row(storedAs.toStorage(obj), now) },
      // Written as the served version's struct (conversion fills only the fields it has).
      toVersion: structId ? (o) => shapedAsGo(structId, o, storedAs.toVersion(o)) : storedAs.toVersion,
      toStorage: structId ? typedConversion(structId, r.names.kind, r.version, storedAs.toStorage) : storedAs.toStorage,
    });
  }
  const base = r.strategy ?? { allowUnconditionalUpdate: true };
  const store = new RestStore(storage, r.names, base);
  const strategy = r.strategyIn ? r.strategyIn(base, context, (on) => new CacheView(store.cache, '', on)) : base;
  store.strategy = structId ? withTypedDecoding(strategy, structId, r.names.kind) : strategy;
  return withOtherVersions(lookup, {
    ...common,
    store,
    table,
    toVersion: (o) => o,
    toStorage: (o) => (o.apiVersion === apiVersion ? o : { ...o, apiVersion }),
  });
}

/**
 * The endpoint with its resource's other versions for managed fields: an object of this version is converted to
 * the stored form and read in the other (HPAs in autoscaling/v1 and v2); a version of another group (core and
 * events.k8s.io Events) or one not served does not convert, as upstream's converter finds no such version.
 */
function withOtherVersions(lookup: EndpointLookup | undefined, endpoint: Endpoint): Endpoint {
  if (!lookup) return endpoint;
  endpoint.otherVersion = (apiVersion) => {
    const slash = apiVersion.indexOf('/');
    const group = slash < 0 ? '' : apiVersion.slice(0, slash);
    if (group !== endpoint.group) return null;
    const target = lookup(group, apiVersion.slice(slash + 1), endpoint.names.resource);
    if (!target || !target.applyType) return null;
    return {
      type: target.applyType(),
      convert: (obj) => {
        const stored = endpoint.toStorage(obj as KObject);
        if (stored instanceof Promise) throw new Error('an asynchronous conversion');
        return target.toVersion(stored);
      },
    };
  };
  return endpoint;
}

/** Every served built-in resource's endpoint (--runtime-config), registered; the watch caches their strategies read are filled from the start (not awaited). */
export function installBuiltinEndpoints(
  registry: ApiRegistry,
  storage: Storage,
  ranges: ServiceRanges,
  serviceAccountTokens?: ServiceAccountTokens,
  admissionPlugins?: readonly string[],
  served: (r: BuiltinResource) => boolean = (r) => !r.removed,
): void {
  const storeOf = (group: string, resource: string) => registry.lookup(group, 'v1', resource)?.store;
  const context: BuiltinContext = {
    ranges,
    serviceAccountTokens,
    admissionPlugins: admissionPlugins && new Set(admissionPlugins),
    objects: (group, resource) => storeOf(group, resource)?.cache.list().items.map(objectForScan) ?? [],
    object: (group, resource, namespace, name) => {
      const store = storeOf(group, resource);
      return store?.cache.get(store.key(namespace, name))?.object;
    },
  };
  const lookup: EndpointLookup = (group, version, resource) => registry.lookup(group, version, resource);
  const resources = [NAMESPACES, ...BUILTIN_RESOURCES.filter(served)];
  for (const r of resources) registry.add(builtinEndpoint(storage, r, context, lookup));
  const read = new Set(resources.flatMap((r) => (r.reads ?? []).map(([group, resource]) => `${group}/${resource}`)));
  for (const gr of read) {
    const [group, resource] = gr.split('/');
    storeOf(group, resource)?.start().catch(() => undefined);
  }
}

/**
 * A converted object in its struct's shape. A conversion shares parts of the stored object (which the cache
 * holds and others read), so the shape is given to a copy; an object the conversion passed through is in it already.
 */
function shapedAsGo(structId: string, from: KObject, converted: KObject): KObject {
  if (converted === from) return converted;
  const copy = deepClone(converted);
  shapeAsGo(structId, copy);
  return copy;
}

/** The endpoint's zero object, made once (the field manager only reads it). */
function emptyObjectOf(structId: string): () => KObject {
  let made: KObject | undefined;
  return () => (made ??= Object.freeze(zeroStruct(structId)) as KObject);
}
