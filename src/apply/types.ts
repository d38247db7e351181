/**
 * The type model server-side apply merges with (structured-merge-diff's
 * schema atoms, reduced to what CRD schemas and ObjectMeta need): scalars,
 * maps (declared fields and/or a type for other keys; granular or atomic),
 * lists (atomic, set, or map keyed by some fields) and `any`, whose value
 * decides between its scalar, list and map forms. DEDUCED is upstream's
 * `__untyped_deduced_` (granular maps all the way down, atomic lists), used
 * for unknown fields under x-kubernetes-preserve-unknown-fields and for
 * objects without a schema; ATOMIC_ANY is `__untyped_atomic_`.
 */

export type ScalarKind = 'numeric' | 'string' | 'boolean' | 'untyped';

export interface ScalarType {
  readonly kind: 'scalar';
  readonly scalar: ScalarKind;
}

export interface MapType {
  readonly kind: 'map';
  /** Declared fields (properties). */
  readonly fields?: ReadonlyMap<string, TypeInfo>;
  /** Defaults of declared fields, used for missing list-map keys. */
  readonly defaults?: ReadonlyMap<string, unknown>;
  /** The type of undeclared keys (additionalProperties or unknown fields); undefined: none allowed. */
  readonly elements?: TypeInfo;
  /** x-kubernetes-map-type: atomic (the map is replaced and owned as a whole). */
  readonly atomic: boolean;
}

export interface ListType {
  readonly kind: 'list';
  readonly listType: 'atomic' | 'set' | 'map';
  /** x-kubernetes-list-map-keys, for listType map. */
  readonly keys: readonly string[];
  readonly elements: TypeInfo;
}

/** Any value: scalars, lists and maps each use their own form. */
export interface AnyType {
  readonly kind: 'any';
  readonly scalar: ScalarKind;
  readonly list: ListType;
  readonly map: MapType;
}

export type TypeInfo = ScalarType | MapType | ListType | AnyType;

/** The form a value takes under a type (deduceAtom, then handleAtom's preference for maps). */
export type Atom = ScalarType | MapType | ListType;

export const UNTYPED_SCALAR: ScalarType = { kind: 'scalar', scalar: 'untyped' };
export const STRING: ScalarType = { kind: 'scalar', scalar: 'string' };
export const NUMERIC: ScalarType = { kind: 'scalar', scalar: 'numeric' };
export const BOOLEAN: ScalarType = { kind: 'scalar', scalar: 'boolean' };
const SCALARS: Record<ScalarKind, ScalarType> = { untyped: UNTYPED_SCALAR, string: STRING, numeric: NUMERIC, boolean: BOOLEAN };

/** The scalar type of a kind. */
export function scalarType(kind: ScalarKind): ScalarType {
  return SCALARS[kind];
}

const atomicAnyList = { kind: 'list', listType: 'atomic', keys: [] as string[] } as { kind: 'list'; listType: 'atomic'; keys: string[]; elements: TypeInfo };
const atomicAnyMap = { kind: 'map', atomic: true } as { kind: 'map'; atomic: true; elements: TypeInfo };
/** `__untyped_atomic_`: anything, lists and maps owned whole. */
export const ATOMIC_ANY: AnyType = { kind: 'any', scalar: 'untyped', list: atomicAnyList, map: atomicAnyMap };
atomicAnyList.elements = ATOMIC_ANY;
atomicAnyMap.elements = ATOMIC_ANY;

const deducedMap = { kind: 'map', atomic: false } as { kind: 'map'; atomic: false; elements: TypeInfo };
/** `__untyped_deduced_`: granular maps of deduced values, atomic lists. */
export const DEDUCED: AnyType = { kind: 'any', scalar: 'untyped', list: atomicAnyList, map: deducedMap };
deducedMap.elements = DEDUCED;

/** The form of `v` under `t`: by the value's kind for `any` (null and absent pick the map). */
export function atomOf(t: TypeInfo, v: unknown): Atom {
  if (t.kind !== 'any') return t;
  switch (typeof v) {
    case 'string':
    case 'number':
    case 'bigint':
    case 'boolean':
      return SCALARS[t.scalar];
    default:
      return Array.isArray(v) ? t.list : t.map;
  }
}

/** The type of a map's member: its declared field's, else the element type. */
export function memberType(m: MapType, key: string): TypeInfo | undefined {
  return m.fields?.get(key) ?? m.elements;
}

export function isDeclared(m: MapType, key: string): boolean {
  return m.fields?.has(key) ?? false;
}

export function mapType(
  fields: Record<string, TypeInfo> | undefined,
  opts: { elements?: TypeInfo; atomic?: boolean; defaults?: Record<string, unknown> } = {},
): MapType {
  return {
    kind: 'map',
    fields: fields ? new Map(Object.entries(fields)) : undefined,
    defaults: opts.defaults ? new Map(Object.entries(opts.defaults)) : undefined,
    elements: opts.elements,
    atomic: opts.atomic ?? false,
  };
}

export function listType(listKind: 'atomic' | 'set' | 'map', elements: TypeInfo, keys: readonly string[] = []): ListType {
  return { kind: 'list', listType: listKind, keys, elements };
}

const OWNER_REFERENCE = mapType(
  { apiVersion: STRING, kind: STRING, name: STRING, uid: STRING, controller: BOOLEAN, blockOwnerDeletion: BOOLEAN },
  { atomic: true },
);

/** io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta as kube-apiserver's OpenAPI types it. */
export const OBJECT_META: MapType = mapType({
  annotations: mapType(undefined, { elements: STRING }),
  creationTimestamp: UNTYPED_SCALAR,
  deletionGracePeriodSeconds: NUMERIC,
  deletionTimestamp: UNTYPED_SCALAR,
  finalizers: listType('set', STRING),
  generateName: STRING,
  generation: NUMERIC,
  labels: mapType(undefined, { elements: STRING }),
  managedFields: listType('atomic', ATOMIC_ANY),
  name: STRING,
  namespace: STRING,
  ownerReferences: listType('map', OWNER_REFERENCE, ['uid']),
  resourceVersion: STRING,
  selfLink: STRING,
  uid: STRING,
});

/** apiVersion, kind and metadata, as the apiserver adds them to every kind's schema. */
export const TYPE_META_FIELDS: Readonly<Record<string, TypeInfo>> = { apiVersion: STRING, kind: STRING, metadata: OBJECT_META };

/**
 * A kind without a schema of its own (kapi's built-in resources): typed ObjectMeta,
 * everything else deduced.
 */
export const BUILTIN_OBJECT: MapType = mapType({ ...TYPE_META_FIELDS }, { elements: DEDUCED });

/** Upstream's deduced type converter: the whole object deduced, metadata included. */
export const DEDUCED_OBJECT: TypeInfo = DEDUCED;
