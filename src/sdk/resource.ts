/**
 * Resources defined in TypeScript, as apiserver-builder defines them in Go: a group, a kind, a scope, and
 * versions whose spec and status are schemas (sdk/schema.ts, so the object type is derived from them), with
 * the storage strategy's hooks under the seed's names:
 * - `defaulting(obj, version)`: on the object in the version it was written in;
 * - `prepareForCreate`, `validate`, `canonicalize`, `prepareForUpdate`, `validateUpdate`: on the internal
 *   form (each version's `toInternal`/`fromInternal` lead there and back; by default a version's object is
 *   its own internal form), returning Kubernetes field errors (`fieldError.invalid(...)`) to refuse a write.
 * Versions convert through the internal form too. With a status subresource (the default) the main
 * endpoint keeps the stored status, as the seed's default strategy does.
 *
 * kapi serves a defined resource exactly as a CRD (its CustomResourceDefinition is written at start):
 * discovery, OpenAPI, tables, watch, apply and conversion, on every store.
 */
import { field, type FieldError } from '../machinery/field-errors.js';
import { deepCloneMutable } from '../machinery/json.js';
import type { Strategy, WriteOptions } from '../registry/types.js';
import type { KObject } from '../api/object.js';
import type { JSONSchemaProps } from '../schema/types.js';
import type { Infer, InferInput, Schema } from './schema.js';
import type * as metav1 from '../api/kinds/meta-v1.js';

/**
 * metav1.OwnerReference: an object this one depends on, in its namespace or cluster-scoped. Garbage
 * collection deletes the object once all its owners are gone. Make one with `ownerReference(owner)`.
 */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  /** The owner's uid: an owner deleted and made again under the same name is another owner. */
  uid: string;
  /** This owner is the managing controller (at most one reference has it). */
  controller?: boolean;
  /** With foreground deletion, the owner is not gone until this object is. */
  blockOwnerDeletion?: boolean;
}

/**
 * metav1.ObjectMeta: the metadata every object has (the generated type, upstream's field documentation). The
 * server sets uid, resourceVersion, generation and the timestamps.
 */
export interface ObjectMeta extends Omit<metav1.ObjectMeta, 'ownerReferences'> {
  /** Objects this one depends on: garbage collection deletes it once they are all gone. */
  ownerReferences?: OwnerReference[];
}

/** Any Kubernetes object. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

/** An object of a defined resource's version. */
export type ResourceObject<Spec, Status> = KubeObject & { spec: Spec; status?: Status };

/** A column `kubectl get` shows for the resource (a CRD version's additionalPrinterColumns). */
export interface PrinterColumn {
  /** The column's header. */
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  /** Where the value is, a JSONPath into the object, e.g. `.spec.replicas`. */
  jsonPath: string;
  description?: string;
  format?: string;
  /** 0 (the default): always shown; more: only with `-o wide`. */
  priority?: number;
}

/** One version of a defined resource; `SpecIn` and `StatusIn` are what a writer sends (defaulted fields optional). */
export interface ResourceVersion<Spec = unknown, Status = unknown, Internal = unknown, SpecIn = Spec, StatusIn = Status> {
  /** The version's name, e.g. `v1` or `v1alpha1`. */
  name: string;
  /** The schema of `spec` (required in objects unless `t.optional`). */
  spec: Schema<Spec, SpecIn>;
  /** The schema of `status`. */
  status?: Schema<Status, StatusIn>;
  /** Whether the API serves this version (default true). */
  served?: boolean;
  /** The version objects are stored in (exactly one; default: the first). */
  storage?: boolean;
  /** Requests of this version get a Warning that it is deprecated. */
  deprecated?: boolean;
  /** Columns for `kubectl get`. */
  printerColumns?: PrinterColumn[];
  /** This version's object in the internal form (default: the object itself). */
  toInternal?(obj: ResourceObject<Spec, Status>): Internal;
  /** The internal form as this version's object (default: the object itself, its apiVersion set). */
  fromInternal?(obj: Internal): ResourceObject<Spec, Status>;
}

/** A version, its object types (as read and as written) derived from its schemas. */
export function version<Spec, Status = never, Internal = ResourceObject<Spec, Status>, SpecIn = Spec, StatusIn = Status>(
  name: string,
  def: Omit<ResourceVersion<Spec, Status, Internal, SpecIn, StatusIn>, 'name'>,
): ResourceVersion<Spec, Status, Internal, SpecIn, StatusIn> {
  return { name, ...def };
}

/** The object type of a version, as read (`TypeOf<typeof v1>`): fields with a default are there. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type TypeOf<V> = V extends ResourceVersion<infer Spec, infer Status, any, any, any> ? ResourceObject<Spec, Status> : never;
/** The object type of a version as a writer sends it (`InputOf<typeof v1>`): fields with a default may be left out. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type InputOf<V> = V extends ResourceVersion<any, any, any, infer SpecIn, infer StatusIn> ? ResourceObject<SpecIn, StatusIn> : never;
export type { Infer, InferInput };

/** The storage strategy's hooks (the seed's names), on the internal form but for defaulting. */
export interface ResourceStrategy<Internal> {
  /** Sets defaults on the object in the version it was written in (after the schema's defaults); not on subresource writes. */
  defaulting?(obj: KubeObject, version: string): void;
  /** Changes a new object before it is validated. */
  prepareForCreate?(obj: Internal): void;
  /** Checks a new object; field errors refuse it with 422 Invalid. Runs only when the schema accepted it. */
  validate?(obj: Internal): FieldError[] | void;
  /** Puts a valid object in its canonical form before it is stored. */
  canonicalize?(obj: Internal): void;
  /** Changes an updated object, given the stored one, before it is validated; not on subresource (/status, /scale) writes. */
  prepareForUpdate?(obj: Internal, old: Internal): void;
  /** Checks an update against the stored object; field errors refuse it with 422 Invalid. Not on subresource writes. */
  validateUpdate?(obj: Internal, old: Internal): FieldError[] | void;
}

/** What `defineResource` takes: a CRD's names, scope, versions and subresources, and the strategy's hooks. */
export interface ResourceDefinitionInput<Internal> {
  /** The API group, a DNS subdomain with a dot (e.g. `foo.example.com`). */
  group: string;
  /** UpperCamelCase, e.g. `Foo`. */
  kind: string;
  /** Default: the kind in lower case, made plural. */
  plural?: string;
  /** Default: the kind in lower case. */
  singular?: string;
  /** Short names for kubectl, e.g. `['fo']`. */
  shortNames?: string[];
  /** Groups of resources kubectl can name together, e.g. `['all']`. */
  categories?: string[];
  /** Default: Namespaced. */
  scope?: 'Namespaced' | 'Cluster';
  /** At least one; the storage version is the one marked `storage`, else the first. */
  // Each version has a spec and status of its own (the type is invariant in them).
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  versions: ReadonlyArray<ResourceVersion<any, any, Internal, any, any>>;
  /** Default: a status subresource. */
  subresources?: { status?: boolean; scale?: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath?: string } };
  /** Hooks of the storage strategy, run on every write through the API. */
  strategy?: ResourceStrategy<Internal>;
}

/**
 * A resource defined in TypeScript (`defineResource`): given to `start` as one of `resources`, it is served as
 * a CRD; `gvr` addresses it with a client (`client.resource(def)`).
 */
export interface ResourceDefinition<Internal = KubeObject> extends Required<Pick<ResourceDefinitionInput<Internal>, 'group' | 'kind' | 'scope' | 'versions'>> {
  /** The plural resource name. */
  readonly plural: string;
  /** What `defineResource` was given. */
  readonly input: ResourceDefinitionInput<Internal>;
  /** The CustomResourceDefinition kapi serves it with. */
  readonly crd: KObject;
  /** The group, the storage version and the plural, as a client addresses it. */
  readonly gvr: { group: string; version: string; resource: string };
}

/** Kubernetes field errors for validate and validateUpdate: `fieldError.invalid('spec.replicas', -1, 'must be >= 0')`. */
export const fieldError = field;
export type { FieldError };

/** English plurals as apiserver-builder makes them. */
export function pluralOf(kind: string): string {
  const k = kind.toLowerCase();
  if (/(s|x|z|ch|sh)$/.test(k)) return `${k}es`;
  if (/[^aeiou]y$/.test(k)) return `${k.slice(0, -1)}ies`;
  return `${k}s`;
}

/**
 * A resource defined in TypeScript, served by kapi as a CRD (its CustomResourceDefinition built here). Throws
 * when the group is not a DNS subdomain with a dot, the kind not UpperCamelCase, there is no version, or more
 * than one storage version.
 */
export function defineResource<Internal = KubeObject>(input: ResourceDefinitionInput<Internal>): ResourceDefinition<Internal> {
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/.test(input.group)) throw new Error(`defineResource: group ${JSON.stringify(input.group)} must be a DNS subdomain with a dot (e.g. foo.example.com)`);
  if (!/^[A-Z][A-Za-z0-9]*$/.test(input.kind)) throw new Error(`defineResource: kind ${JSON.stringify(input.kind)} must be UpperCamelCase`);
  if (input.versions.length === 0) throw new Error(`defineResource ${input.kind}: needs at least one version`);
  const storageVersions = input.versions.filter((v) => v.storage);
  if (storageVersions.length > 1) throw new Error(`defineResource ${input.kind}: only one version may be the storage version`);
  const storage = storageVersions[0] ?? input.versions[0];
  const plural = input.plural ?? pluralOf(input.kind);
  const scope = input.scope ?? 'Namespaced';
  const statusSubresource = input.subresources?.status ?? true;
  const crd: KObject = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${input.group}`, labels: { 'app.kubernetes.io/managed-by': 'kapi' } },
    spec: {
      group: input.group,
      scope,
      names: {
        plural,
        singular: input.singular ?? input.kind.toLowerCase(),
        kind: input.kind,
        listKind: `${input.kind}List`,
        ...(input.shortNames?.length ? { shortNames: input.shortNames } : {}),
        ...(input.categories?.length ? { categories: input.categories } : {}),
      },
      versions: input.versions.map((v) => ({
        name: v.name,
        served: v.served ?? true,
        storage: v === storage,
        ...(v.deprecated ? { deprecated: true } : {}),
        schema: { openAPIV3Schema: rootSchema(v) },
        ...(statusSubresource || input.subresources?.scale
          ? { subresources: { ...(statusSubresource ? { status: {} } : {}), ...(input.subresources?.scale ? { scale: input.subresources.scale } : {}) } }
          : {}),
        ...(v.printerColumns?.length ? { additionalPrinterColumns: v.printerColumns } : {}),
      })),
    },
  };
  return { group: input.group, kind: input.kind, scope, versions: input.versions, plural, input, crd, gvr: { group: input.group, version: storage.name, resource: plural } };
}

function rootSchema(v: ResourceVersion<unknown, unknown, unknown>): JSONSchemaProps {
  return {
    type: 'object',
    properties: {
      spec: v.spec.openAPIV3Schema,
      ...(v.status ? { status: v.status.openAPIV3Schema } : {}),
    },
    ...(v.spec.optional ? {} : { required: ['spec'] }),
  };
}

/** The version named by an object's apiVersion. */
function versionOf<I>(def: ResourceDefinition<I>, apiVersion: unknown): ResourceVersion<unknown, unknown, I> | undefined {
  const name = typeof apiVersion === 'string' ? apiVersion.slice(def.group.length + 1) : '';
  return def.versions.find((v) => v.name === name);
}

/** A plain copy (hooks may change what they are given); objects nest deeper than structuredClone goes. */
const copy = <T>(v: T): T => deepCloneMutable(v);

function toInternal<I>(def: ResourceDefinition<I>, obj: KObject): I {
  const v = versionOf(def, obj.apiVersion);
  return (v?.toInternal ? v.toInternal(copy(obj) as never) : obj) as I;
}

function fromInternal<I>(def: ResourceDefinition<I>, internal: I, apiVersion: string): KObject {
  const v = versionOf(def, apiVersion);
  const out = (v?.fromInternal ? v.fromInternal(internal) : internal) as KObject;
  return { ...out, apiVersion, kind: def.kind };
}

/** Whether every version is its own internal form (no conversion is needed to run the hooks). */
const plain = (def: ResourceDefinition<unknown>) => def.versions.every((v) => !v.toInternal && !v.fromInternal);

/** Runs a hook on the internal form of `obj`, writing back what it changed. */
function onInternal<I, R>(def: ResourceDefinition<I>, obj: KObject, run: (internal: I) => R): R {
  if (plain(def as ResourceDefinition<unknown>)) return run(obj as I);
  const internal = toInternal(def, obj);
  const result = run(internal);
  const back = fromInternal(def, internal, obj.apiVersion);
  for (const k of Object.keys(obj)) delete obj[k];
  for (const [k, v] of Object.entries(back)) Object.defineProperty(obj, k, { value: v, enumerable: true, writable: true, configurable: true });
  return result;
}

/**
 * The CRD strategy with the definition's hooks after its own steps (schema defaulting, pruning and
 * validation). The hooks are the main resource's: a write through /status (or /scale) runs the schema's
 * checks only, as upstream's status strategies leave the spec's rules out; and a hook never sees an object
 * the schema refused.
 */
export function definedStrategy<I>(def: ResourceDefinition<I>, base: Strategy): Strategy {
  const s = def.input.strategy;
  if (!s) return base;
  const errs = (r: FieldError[] | void): FieldError[] => (Array.isArray(r) ? r : []);
  // defaulting and prepareFor* run before validation, on objects the schema may yet refuse: what they throw
  // waits for validation, which answers with the schema's errors when there are any (the client's mistake), and
  // with the hook's failure otherwise.
  const thrown = new WeakMap<KObject, unknown>();
  const guarded = (obj: KObject, run: () => void) => {
    try {
      run();
    } catch (err) {
      if (!thrown.has(obj)) thrown.set(obj, err);
    }
  };
  const checked = (obj: KObject, own: FieldError[], hook: () => FieldError[]): FieldError[] => {
    if (own.length > 0) return own;
    if (thrown.has(obj)) throw thrown.get(obj);
    return hook();
  };
  return {
    ...base,
    defaulting(obj: KObject, ctx: WriteOptions, asDecoded?: boolean) {
      base.defaulting?.(obj, ctx, asDecoded);
      if (!ctx.subresource && s.defaulting) guarded(obj, () => s.defaulting!(obj as KubeObject, ctx.version ?? versionOf(def, obj.apiVersion)?.name ?? ''));
    },
    prepareForCreate(obj: KObject, ctx: WriteOptions) {
      base.prepareForCreate?.(obj, ctx);
      if (s.prepareForCreate) guarded(obj, () => onInternal(def, obj, (o) => s.prepareForCreate!(o)));
    },
    validate(obj: KObject, ctx: WriteOptions) {
      return checked(obj, base.validate?.(obj, ctx) ?? [], () => (s.validate ? errs(s.validate(toInternal(def, copy(obj)))) : []));
    },
    canonicalize(obj: KObject) {
      base.canonicalize?.(obj);
      if (s.canonicalize) onInternal(def, obj, (o) => s.canonicalize!(o));
    },
    prepareForUpdate(obj: KObject, old: KObject, ctx: WriteOptions) {
      base.prepareForUpdate?.(obj, old, ctx);
      if (s.prepareForUpdate && !ctx.subresource) guarded(obj, () => onInternal(def, obj, (o) => s.prepareForUpdate!(o, toInternal(def, copy(old)))));
    },
    validateUpdate(obj: KObject, old: KObject, ctx: WriteOptions) {
      const own = base.validateUpdate?.(obj, old, ctx) ?? [];
      if (ctx.subresource) return own;
      return checked(obj, own, () => (s.validateUpdate ? errs(s.validateUpdate(toInternal(def, copy(obj)), toInternal(def, copy(old)))) : []));
    },
  };
}

/** Conversion between versions through the internal form (undefined: one version, or none converts). */
export function definedConverter<I>(def: ResourceDefinition<I>): ((obj: KObject, toApiVersion: string) => KObject) | undefined {
  if (def.versions.length < 2) return undefined;
  return (obj, toApiVersion) => fromInternal(def, toInternal(def, obj), toApiVersion);
}

/**
 * The definition's mutating hooks as a mutating admission webhook runs them on `obj` (changed in place), where a
 * cluster's own API server serves the CRD and has applied its schema: defaulting, then prepareForCreate and
 * canonicalize (CREATE) or prepareForUpdate and canonicalize (UPDATE). canonicalize runs here, before validation,
 * as a webhook can change an object only in the mutating phase.
 */
export function webhookMutate<I>(def: ResourceDefinition<I>, operation: string, obj: KObject, old: KObject | undefined): void {
  const s = def.input.strategy;
  if (!s) return;
  s.defaulting?.(obj as KubeObject, versionOf(def, obj.apiVersion)?.name ?? '');
  if (operation === 'CREATE' && s.prepareForCreate) onInternal(def, obj, (o) => s.prepareForCreate!(o));
  if (operation === 'UPDATE' && old && s.prepareForUpdate) onInternal(def, obj, (o) => s.prepareForUpdate!(o, toInternal(def, copy(old))));
  if (s.canonicalize) onInternal(def, obj, (o) => s.canonicalize!(o));
}

/** The definition's validate (CREATE) or validateUpdate (UPDATE) hook, as a validating admission webhook runs it. */
export function webhookValidate<I>(def: ResourceDefinition<I>, operation: string, obj: KObject, old: KObject | undefined): FieldError[] {
  const s = def.input.strategy;
  const errs = (r: FieldError[] | void): FieldError[] => (Array.isArray(r) ? r : []);
  if (operation === 'CREATE') return s?.validate ? errs(s.validate(toInternal(def, copy(obj)))) : [];
  if (operation === 'UPDATE' && old) return s?.validateUpdate ? errs(s.validateUpdate(toInternal(def, copy(obj)), toInternal(def, copy(old)))) : [];
  return [];
}
