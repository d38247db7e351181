/**
 * TypeInfo from OpenAPI schemas, as kube-openapi's schemaconv turns the
 * models kube-apiserver builds for a kind into structured-merge-diff types:
 * properties become declared fields, additionalProperties the type of other
 * keys, x-kubernetes-list-type / -list-map-keys / -map-type (and the
 * patch-strategy extensions of built-in definitions) the merge strategy,
 * x-kubernetes-preserve-unknown-fields makes unknown fields deduced for the
 * whole subtree, schemas without a type (int-or-string, preserve-unknown) are
 * `any`, embedded resources and the root get apiVersion, kind and ObjectMeta.
 * Results are cached per schema object, so a CRD version compiles once.
 */
import type { KObject } from '../api/object.js';
import {
  ATOMIC_ANY,
  BOOLEAN,
  DEDUCED,
  NUMERIC,
  OBJECT_META,
  STRING,
  UNTYPED_SCALAR,
  type ListType,
  type MapType,
  type TypeInfo,
} from './types.js';

/** A JSON (OpenAPI v3 or v2) schema object, as found in a CRD or an OpenAPI document. */
export type JsonSchema = KObject;

export interface SchemaTypeOptions {
  /** The CRD's spec.preserveUnknownFields (v1beta1): unknown fields are deduced everywhere. */
  preserveUnknownFields?: boolean;
  /** Targets of `$ref` (`#/definitions/<name>`, `#/components/schemas/<name>`). */
  definitions?: Record<string, JsonSchema>;
}

const OBJECT_META_NAMES = new Set(['io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta']);
const QUANTITY = 'io.k8s.apimachinery.pkg.api.resource.Quantity';
const RAW_EXTENSION = 'io.k8s.apimachinery.pkg.runtime.RawExtension';

const rootCache = new WeakMap<object, TypeInfo>();
const rootCachePreserving = new WeakMap<object, TypeInfo>();
const definitionCaches = new WeakMap<object, Map<string, TypeInfo>>();

/**
 * The type of a custom resource whose version has this openAPIV3Schema: the schema's
 * fields plus apiVersion, kind and ObjectMeta metadata. No schema: upstream's deduced type.
 */
export function typeFromSchema(schema: JsonSchema | undefined, opts: SchemaTypeOptions = {}): TypeInfo {
  if (!schema || typeof schema !== 'object') return DEDUCED;
  const cache = opts.definitions ? undefined : opts.preserveUnknownFields ? rootCachePreserving : rootCache;
  const cached = cache?.get(schema);
  if (cached) return cached;
  const conv = new Converter(opts.definitions, !!opts.preserveUnknownFields);
  const root = conv.convert(schema, !!opts.preserveUnknownFields, true);
  conv.finish();
  cache?.set(schema, root);
  return root;
}

/** The type of a named definition (e.g. `io.k8s.api.core.v1.ConfigMap`) of an OpenAPI document. */
export function typeFromDefinition(name: string, definitions: Record<string, JsonSchema>, opts: { preserveUnknownFields?: boolean } = {}): TypeInfo {
  let cache = definitionCaches.get(definitions);
  if (!cache) definitionCaches.set(definitions, (cache = new Map()));
  const key = (opts.preserveUnknownFields ? '1' : '0') + name;
  const cached = cache.get(key);
  if (cached) return cached;
  const conv = new Converter(definitions, !!opts.preserveUnknownFields);
  const t = conv.named(name);
  conv.finish();
  cache.set(key, t);
  return t;
}

class Converter {
  private readonly named$ = new Map<string, TypeInfo>();
  private readonly fixups: (() => void)[] = [];

  constructor(
    private readonly definitions: Record<string, JsonSchema> | undefined,
    /** The document-wide flag: a definition reached by $ref does not inherit the referrer's preserve-unknown-fields. */
    private readonly preserveAll: boolean,
  ) {}

  finish(): void {
    for (const f of this.fixups) f();
  }

  named(name: string): TypeInfo {
    if (OBJECT_META_NAMES.has(name)) return OBJECT_META;
    if (name === QUANTITY) return UNTYPED_SCALAR;
    if (name === RAW_EXTENSION) return ATOMIC_ANY;
    const known = this.named$.get(name);
    if (known) return known;
    const def = this.definitions?.[name];
    if (!def) return DEDUCED;
    // A shell filled once converted, so that recursive definitions resolve to it.
    const shell = {} as TypeInfo;
    this.named$.set(name, shell);
    Object.assign(shell, this.convert(def, this.preserveAll, false));
    return shell;
  }

  /** makeOpenAPIRef: a $ref (possibly in a one-element allOf), else the inline schema. */
  ref(s: JsonSchema, preserve: boolean): TypeInfo {
    let ref: unknown = s.$ref;
    if (typeof ref !== 'string' && Array.isArray(s.allOf) && s.allOf.length === 1 && typeof s.allOf[0]?.$ref === 'string') ref = s.allOf[0].$ref;
    if (typeof ref !== 'string' || !ref) return this.convert(s, preserve, false);
    const name = ref.slice(ref.lastIndexOf('/') + 1);
    const target = this.named(name);
    const mapKind = s['x-kubernetes-map-type'];
    if (mapKind !== 'atomic' && mapKind !== 'granular') return target;
    const atomic = mapKind === 'atomic';
    const copy = {} as TypeInfo;
    const fill = () => {
      if (target.kind === 'map') Object.assign(copy, target, { atomic });
      else if (target.kind === 'list' && atomic) Object.assign(copy, target, { listType: 'atomic' });
      else Object.assign(copy, target);
    };
    // The target may still be a shell (a recursive reference): copy it once everything is converted.
    if (Object.keys(target).length > 0) fill();
    else this.fixups.push(fill);
    return copy;
  }

  convert(s: JsonSchema, preserve: boolean, root: boolean): TypeInfo {
    if (s['x-kubernetes-preserve-unknown-fields'] === true) preserve = true;
    let type = Array.isArray(s.type) ? (s.type[0] ?? '') : (s.type ?? '');
    if (s['x-kubernetes-int-or-string'] === true) type = '';
    const embedded = s['x-kubernetes-embedded-resource'] === true;
    if (root || embedded) type = type || 'object';
    switch (type) {
      case '':
        return { kind: 'any', scalar: 'untyped', list: this.list(s, preserve), map: this.object(s, preserve, false) };
      case 'object':
        return this.object(s, preserve, root || embedded);
      case 'array':
        return this.list(s, preserve);
      case 'integer':
      case 'number':
        return NUMERIC;
      case 'boolean':
        return BOOLEAN;
      case 'string':
        return !s.format || s.format === 'byte' ? STRING : UNTYPED_SCALAR;
      default:
        return UNTYPED_SCALAR;
    }
  }

  private object(s: JsonSchema, preserve: boolean, kubeNative: boolean): MapType {
    const fields = new Map<string, TypeInfo>();
    const defaults = new Map<string, unknown>();
    const props = isObject(s.properties) ? s.properties : {};
    for (const [name, member] of Object.entries(props)) {
      if (!isObject(member)) continue;
      fields.set(name, this.ref(member, preserve));
      if (member.default !== undefined) defaults.set(name, member.default);
    }
    if (kubeNative) {
      fields.set('apiVersion', STRING);
      fields.set('kind', STRING);
      fields.set('metadata', OBJECT_META);
    }
    let elements: TypeInfo | undefined;
    const ap = s.additionalProperties;
    if (ap === undefined || ap === null) elements = preserve || Object.keys(props).length === 0 ? DEDUCED : undefined;
    else if (isObject(ap)) elements = this.ref(ap, preserve);
    else if (ap === true) elements = DEDUCED;
    return {
      kind: 'map',
      fields: fields.size ? fields : undefined,
      defaults: defaults.size ? defaults : undefined,
      elements,
      atomic: s['x-kubernetes-map-type'] === 'atomic',
    };
  }

  private list(s: JsonSchema, preserve: boolean): ListType {
    const [listType, keys] = listRelationship(s);
    let elements: TypeInfo;
    if (isObject(s.items)) elements = this.ref(s.items, preserve);
    else if (Array.isArray(s.items)) elements = DEDUCED;
    else elements = ATOMIC_ANY;
    return { kind: 'list', listType, keys, elements };
  }
}

function listRelationship(s: JsonSchema): ['atomic' | 'set' | 'map', string[]] {
  const lt = s['x-kubernetes-list-type'];
  if (lt !== undefined) {
    if (lt === 'set') return ['set', []];
    if (lt === 'map') {
      const keys = Array.isArray(s['x-kubernetes-list-map-keys']) ? s['x-kubernetes-list-map-keys'].filter((k: unknown) => typeof k === 'string') : [];
      return ['map', keys];
    }
    return ['atomic', []];
  }
  const strategy = s['x-kubernetes-patch-strategy'];
  if (strategy === 'merge' || strategy === 'merge,retainKeys') {
    const key = s['x-kubernetes-patch-merge-key'];
    return typeof key === 'string' ? ['map', [key]] : ['set', []];
  }
  return ['atomic', []];
}

function isObject(v: unknown): v is JsonSchema {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
