/**
 * The table of served endpoints: one entry per group, version and resource,
 * changed at run time as CRDs come and go. Route lookup is one map access;
 * discovery documents are derived from the same entries.
 *
 * Most endpoints serve a REST store; a virtual endpoint serves a resource with
 * no store (the create-only reviews of authentication and authorization, later
 * proxied group-versions): each verb it has is a function.
 */
import type { ProxyTarget, ScaleConfig } from '../api/serving.js';
import type { TypeInfo, VersionConverter } from '../apply/index.js';
import type { Structural } from '../schema/types.js';
import type { TableConvertor } from '../printing/index.js';
import type { RestStore } from './store.js';
import type { DecodeOptions, ResourceNames } from './types.js';
import type { KObject } from '../api/object.js';
import type { Admission, AdmissionUser } from './admission.js';
import type { RequestScope } from './request-scope.js';

/** What routing and discovery know of any served resource. */
export interface ServedResource {
  group: string;
  version: string;
  names: ResourceNames;
  verbs: string[];
  subresources: { status?: boolean; finalize?: boolean; scale?: ScaleConfig; others?: readonly SubresourceInfo[] };
  storageVersionHash?: string;
  /** Warning sent with every request to this version (deprecated CRD versions). */
  warning?: string;
  /** The resource is being deleted: new objects are refused. */
  terminating?: boolean;
  /** A custom resource (for discovery's order and APIService registration; requests ask `scope`). */
  custom: boolean;
  /** How its requests are decoded, converted and answered. */
  scope: RequestScope;
  /** Server-side printing (meta.k8s.io Table) for this version. */
  table?: TableConvertor;
  /** The group's place in discovery (an aggregated APIService's groupPriorityMinimum; default that of CRDs, 1000). */
  groupPriority?: number;
  /** The version's place in its group (an aggregated APIService's versionPriority; ahead of the version string). */
  versionPriority?: number;
  /** Field labels a field selector may use besides metadata.name and metadata.namespace (a CRD version's selectableFields). */
  selectableFields?: readonly string[];
  /**
   * A built-in kind's field labels (its scheme's field label conversion): the path a label reads (`''`: none, the
   * empty string), or the message of the 400 for a label the kind does not know. Absent: a custom resource's
   * (metadata.name, metadata.namespace when namespaced, and `selectableFields`).
   */
  fieldLabel?: (label: string) => { path: string } | { error: string };
}

/**
 * A subresource besides status, finalize and scale (a pod's log, exec, eviction, ephemeralcontainers...):
 * its verbs, and the kind it answers with when that is not the resource's own group and version.
 */
export interface SubresourceInfo {
  name: string;
  verbs: readonly string[];
  kind: string;
  group?: string;
  version?: string;
  /**
   * Served by its group's code (upstream's subresource REST storages: a pod's log, exec, binding, eviction,
   * a service account's token); absent: the object's own verbs, through the store's subresource strategy.
   */
  storage?: SubresourceStorage;
}

/** What a subresource's storage is given of a request. */
export interface SubresourceRequest {
  namespace: string | undefined;
  name: string;
  query: URLSearchParams;
  /** The parent resource's store. */
  store: RestStore;
  /** The other served resources (a pod's node, its disruption budgets). */
  lookup(group: string, version: string, resource: string): Endpoint | undefined;
}

/** A POST to a subresource: its body decoded as the subresource's kind. */
export interface SubresourceCreateRequest extends SubresourceRequest {
  body: KObject;
  /** The query's dryRun=All. */
  dryRun: boolean;
  /** Admits `obj` as a CREATE of the subresource (with its kind), as upstream's create handler does. */
  admit(obj: KObject, dryRun: boolean): Promise<void>;
}

/** A subresource's own verbs (upstream's rest.Connecter and rest.Creater of a subresource). */
export interface SubresourceStorage {
  /** GET and the connect verbs (a pod's log, exec, attach, portforward): the text answered with 200, or a StatusError. */
  connect?(request: SubresourceRequest): Promise<string>;
  /** POST: the object answered with 201. */
  create?(request: SubresourceCreateRequest): Promise<KObject>;
}

/** What a virtual endpoint's verb is given besides the object. */
export interface VirtualRequest {
  user?: AdmissionUser;
  namespace?: string;
  dryRun: boolean;
  warnings: string[];
  /** The admission chain for this request (the handler runs it around `create`). */
  admission?: Admission;
}

export interface VirtualEndpoint extends ServedResource {
  virtual: true;
  proxied?: undefined;
  /** Create: the decoded object in, the answer out (answered 201, as every create). */
  create(obj: KObject, request: VirtualRequest): KObject | Promise<KObject>;
}

/**
 * A resource an aggregated API server serves (an APIService with a service): its requests are proxied to
 * the backend, while it is available (`backend()` gives where; undefined: 503).
 */
export interface ProxiedEndpoint extends ServedResource {
  virtual: true;
  proxied: true;
  backend(): ProxyTarget | undefined;
}

export interface Endpoint extends ServedResource {
  virtual?: undefined;
  proxied?: undefined;
  store: RestStore;
  /** Turns a stored object into this version (synchronously: call `prepare` first when the endpoint has one). */
  toVersion(obj: KObject): KObject;
  /** Runs the asynchronous conversions (webhook, in-process) that `toVersion` will need for these objects. */
  prepare?(objects: KObject[]): Promise<void>;
  /** Turns an object of this version into the storage version. */
  toStorage(obj: KObject): KObject | Promise<KObject>;
  /** The merge type of this version's objects, for managed fields and server-side apply (compiled on first use). */
  applyType?: () => TypeInfo;
  /** The structural schema of this version's objects, for type checking admission policies' CEL (built on first use). */
  celSchema?: () => Structural | undefined;
  /**
   * The request's decoding in the endpoint's version, as upstream's decoder does it: before the field
   * manager records a write (so the writer owns the fields that were defaulted) and before admission.
   * Built-ins are defaulted; custom resources pruned and defaulted (their strategy's `decode`).
   */
  decodeObject?: (obj: KObject, opts: DecodeOptions) => void;
  /** decodeObject for a large request, with turns of the loop between its steps (util/turns.ts); absent: decodeObject's one step. */
  decodeObjectInTurns?: (obj: KObject, opts: DecodeOptions) => Promise<void>;
  /**
   * An object of the endpoint's kind with nothing set, as upstream's `Creater.New` makes it (a built-in's
   * zero struct: `spec: {}`, `status: {}`, ...): what the field manager compares a create against. Shared: never mutate it.
   */
  emptyObject?: () => KObject;
  /**
   * For managed fields: this version's objects in another version of the resource (upstream's versionConverter),
   * null for a version they do not convert to (another group, one not served). Undefined: all versions share field
   * paths (custom resources).
   */
  otherVersion?: VersionConverter;
}

/** What changed in the registry: an endpoint added (and the one it replaced), or removed; neither: discovery only (`touch`). */
export interface RegistryChange {
  added?: Endpoint | VirtualEndpoint | ProxiedEndpoint;
  removed?: Endpoint | VirtualEndpoint | ProxiedEndpoint;
}

export class ApiRegistry {
  private readonly endpoints = new Map<string, Endpoint | VirtualEndpoint | ProxiedEndpoint>();
  private readonly listeners = new Set<(change: RegistryChange) => void>();
  /** Bumped on every change; discovery caches by it. */
  generation = 0;

  add(ep: Endpoint | VirtualEndpoint | ProxiedEndpoint): void {
    const k = key(ep.group, ep.version, ep.names.resource);
    const replaced = this.endpoints.get(k);
    this.endpoints.set(k, ep);
    this.changed({ added: ep, removed: replaced });
  }

  remove(group: string, version: string, resource: string): void {
    const k = key(group, version, resource);
    const removed = this.endpoints.get(k);
    if (removed && this.endpoints.delete(k)) this.changed({ removed });
  }

  /** The endpoint a request is routed to, stored or virtual. */
  route(group: string, version: string, resource: string): Endpoint | VirtualEndpoint | ProxiedEndpoint | undefined {
    return this.endpoints.get(key(group, version, resource));
  }

  /** A stored resource's endpoint. */
  lookup(group: string, version: string, resource: string): Endpoint | undefined {
    const ep = this.endpoints.get(key(group, version, resource));
    return ep?.virtual ? undefined : ep;
  }

  /** The endpoints of stored resources. */
  all(): Endpoint[] {
    const stored: Endpoint[] = [];
    for (const ep of this.endpoints.values()) if (!ep.virtual) stored.push(ep);
    return stored;
  }

  /** Every endpoint, for discovery. */
  served(): (Endpoint | VirtualEndpoint | ProxiedEndpoint)[] {
    return [...this.endpoints.values()];
  }

  /** What discovery shows changed though no route did (an aggregated backend became available or unavailable). */
  touch(): void {
    this.changed({});
  }

  /** Told of every change, with what changed (a listener that keeps an index need not look at every endpoint). */
  onChange(listener: (change: RegistryChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(change: RegistryChange): void {
    this.generation++;
    for (const l of this.listeners) l(change);
  }
}

const key = (group: string, version: string, resource: string) => `${group}/${version}/${resource}`;
