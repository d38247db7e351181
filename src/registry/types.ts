/**
 * What the registry knows about a resource: its names and scope (as discovery
 * shows them) and the strategy hooks of the apiserver-builder model.
 */
import type { Admission } from './admission.js';
import type { FieldError } from '../machinery/field-errors.js';
import type { NameValidator } from '../machinery/validation.js';
import type { SubresourceStrategy } from './subresources.js';
import type { KObject } from '../api/object.js';


export interface ResourceNames {
  /** API group ('' for the core group). */
  group: string;
  /** Plural resource name, the path segment. */
  resource: string;
  singular: string;
  kind: string;
  listKind: string;
  namespaced: boolean;
  shortNames?: string[];
  categories?: string[];
}

/**
 * Per-resource behavior, called in this order:
 * create: defaulting → prepareForCreate → validate → canonicalize → store
 * update: defaulting → prepareForUpdate → validateUpdate → canonicalize → compare-and-swap
 */
export interface Strategy {
  /**
   * The request's decoding, as upstream's codec does it before managed fields and admission: run by the
   * handler on the object sent (or patched), in the request's version. Custom resources: pruned (unknown
   * fields refused or warned about per fieldValidation) and defaulted, so that admission sees them so.
   */
  decode?(obj: KObject, ctx: DecodeOptions): void;
  /** upstream's ObjectDefaulter: run on an object a mutating admission plugin changed, in its version. */
  defaultMutated?(obj: KObject): void;
  /**
   * After mutating admission: the store's defaulting (custom resources: pruned and defaulted again).
   * `asDecoded`: the handler decoded the object (`decode`) and no admission plugin changed it since, so
   * what decoding did need not be done again.
   */
  defaulting?(obj: KObject, ctx: WriteOptions, asDecoded?: boolean): void;
  prepareForCreate?(obj: KObject, ctx: WriteOptions): void;
  validate?(obj: KObject, ctx: WriteOptions): FieldError[];
  canonicalize?(obj: KObject): void;
  prepareForUpdate?(obj: KObject, old: KObject, ctx: WriteOptions): void;
  validateUpdate?(obj: KObject, old: KObject, ctx: WriteOptions): FieldError[];
  /**
   * First DELETE of an object: a chance to add finalizers or conditions before the
   * store decides (e.g. a CRD gets its cleanup finalizer). Returns whether obj changed.
   */
  prepareForDelete?(obj: KObject): boolean;
  /**
   * validate/validateUpdate check ObjectMeta themselves (the schema engine does for custom resources);
   * 'names': only name, generateName and namespace (a type with a name rule of its own, as CRDs).
   */
  validatesMetadata?: boolean | 'names';
  /** The rule metadata.name (and generateName) must follow; default: a DNS subdomain (NameIsDNSSubdomain). */
  nameRule?: NameValidator;
  /**
   * Called on every object decoded from storage (pruning and defaulting on read; the result is not written back).
   * `true`: that changed the object from its stored form, so an update that sends it back writes (upstream
   * compares the stored bytes to decide that a write is a no-op).
   */
  onRead?(obj: KObject): boolean | void;
  /**
   * Called on a written object converted from the version the strategy saw to the storage
   * version (pruning and defaulting in the storage version, as upstream after a conversion).
   */
  prepareForStorage?(obj: KObject): void;
  /** Whether something still holds the object from deletion (default: metadata.finalizers is not empty). */
  hasPendingFinalizers?(obj: KObject): boolean;
  /** PUT of a missing object creates it. */
  allowCreateOnUpdate?: boolean;
  /** PUT without metadata.resourceVersion is allowed (last write wins). */
  allowUnconditionalUpdate?: boolean;
  /**
   * How metadata.generation moves: 'spec' bumps it on any change outside metadata (and status, with a status
   * subresource); 'create' sets it to 1 on create and keeps it (upstream's PriorityClass strategy).
   */
  generation?: 'spec' | 'create' | 'none';
  /** DELETE answers with the deleted object rather than a Status. */
  returnDeletedObject?: boolean;
  /** Fields of the object that its main endpoint may not change (e.g. status with a status subresource). */
  resetFieldsOnMainEndpoint?: string[];
  /** Top-level fields besides metadata whose changes leave generation alone (default: resetFieldsOnMainEndpoint). */
  generationIgnores?: string[];
  /** What a write through a subresource keeps (default: subresources.ts's status and finalize strategies). */
  subresourceStrategies?: Record<string, SubresourceStrategy>;
}

/** What a request's decoding needs of its options. */
export type DecodeOptions = Pick<WriteOptions, 'version' | 'fieldValidation' | 'rawBody' | 'warnings'>;

export interface Preconditions {
  uid?: string;
  resourceVersion?: string;
}

export interface WriteOptions {
  dryRun?: boolean;
  /** The API version of the request, for strategies whose rules depend on it. */
  version?: string;
  /** The API group of the request (a resource served by two groups, as Events, validates by group). */
  group?: string;
  /** Set when writing through a subresource (e.g. 'status'). */
  subresource?: string;
  /** An update may create the object (server-side apply). */
  allowCreate?: boolean;
  /** ?fieldValidation=: what unknown and duplicate fields do (default Warn). */
  fieldValidation?: 'Strict' | 'Warn' | 'Ignore';
  /** The request body as sent (JSON), for duplicate-field detection. */
  rawBody?: string;
  /** The request body's size: a large one is worked through in slices, the loop serving others between (util/turns.ts). */
  bodyBytes?: number;
  /** Warnings for the response (Warning headers), appended by strategies. */
  warnings?: string[];
  /** The admission chain, run by the store at upstream's points (absent: in-process writes). */
  admission?: Admission;
  /** Sent by the server itself (a loopback request of its controllers). */
  loopback?: boolean;
  /** The handler decoded the object it writes (the endpoint's decodeObject), before managed fields and admission. */
  decoded?: boolean;
  /**
   * The request's version, when the strategy runs in it (custom resources): the store hands
   * `tryUpdate`, the strategy and admission objects in that version, and converts to the
   * storage version after them. Absent: objects are in the storage version throughout.
   */
  codec?: VersionCodec;
}

/**
 * The new state of an object from its current one (undefined: there is none), for a store's update. `large`:
 * the request's body or the stored object is large, and the work is done in steps (util/turns.ts).
 */
export type TryUpdate = (old: KObject | undefined, large: boolean) => KObject | Promise<KObject>;

/** Conversions between the storage version and one served version. */
export interface VersionCodec {
  /** Runs the asynchronous conversions (webhooks, in-process converters) that toVersion will need. */
  prepare?(objects: KObject[]): Promise<void>;
  /** A stored object in this version (may be shared: copy before changing it). */
  toVersion(obj: KObject): KObject;
  /** An object of this version in the storage version. */
  toStorage(obj: KObject): KObject | Promise<KObject>;
}

export interface DeleteOptions extends WriteOptions {
  preconditions?: Preconditions;
  gracePeriodSeconds?: number;
  propagationPolicy?: string;
}
