/**
 * Schemas written once: each builder gives the OpenAPI v3 schema kapi serves and validates with (a CRD
 * version's openAPIV3Schema) and carries the TypeScript type of the values it describes, so a resource's
 * type is derived from its schema (`Infer<typeof schema>`) and never written twice.
 *
 *   const FooSpec = t.object({ replicas: t.integer({ minimum: 0, default: 1 }), message: t.optional(t.string()) });
 *   type FooSpec = Infer<typeof FooSpec>;   // { replicas: number; message?: string }
 */
import type { JSONSchemaProps } from '../schema/types.js';

/** A schema and (at the type level only) the values it describes. */
export interface Schema<T = unknown> {
  readonly openAPIV3Schema: JSONSchemaProps;
  /** Never set: the type of the values, for `Infer`. */
  readonly __type?: T;
  /** An object property that may be left out (`t.optional`). */
  readonly optional?: boolean;
}

/** The TypeScript type of a schema's values. */
export type Infer<S> = S extends Schema<infer T> ? T : never;

type Props = Record<string, Schema>;
type RequiredKeys<P extends Props> = { [K in keyof P]: P[K] extends { optional: true } ? never : K }[keyof P];
type OptionalKeys<P extends Props> = { [K in keyof P]: P[K] extends { optional: true } ? K : never }[keyof P];
type Simplify<T> = { [K in keyof T]: T[K] } & {};
/** The type of the values `t.object(properties)` describes: properties marked `t.optional` may be left out. */
export type ObjectOf<P extends Props> = Simplify<{ [K in RequiredKeys<P>]: Infer<P[K]> } & { [K in OptionalKeys<P>]?: Infer<P[K]> }>;

/** What every schema may say besides its type. */
export interface Common<T> {
  /** Shown by `kubectl explain`. */
  description?: string;
  /** Set by the server when the field is absent (as a CRD schema's default). */
  default?: T;
  /** null is a valid value. */
  nullable?: boolean;
  /** CEL rules (x-kubernetes-validations). */
  validations?: Array<{ rule: string; message?: string; messageExpression?: string; reason?: string; fieldPath?: string }>;
}

function make<T>(schema: JSONSchemaProps, common: Common<unknown> = {}): Schema<T> {
  const s: JSONSchemaProps = { ...schema };
  if (common.description !== undefined) s.description = common.description;
  if (common.default !== undefined) s.default = common.default as never;
  if (common.nullable) s.nullable = true;
  if (common.validations?.length) s['x-kubernetes-validations'] = common.validations as never;
  return { openAPIV3Schema: s };
}

/**
 * The schema builders, as kubebuilder's markers are for Go types: each gives a Schema (its OpenAPI v3 schema
 * and its values' type). `t.object({ replicas: t.integer({ minimum: 0 }) })`.
 */
export const t = {
  /** A string; its length, `pattern` and `format` checked by the server as a CRD schema's are. */
  string(opts: Common<string> & { minLength?: number; maxLength?: number; pattern?: string; format?: string } = {}): Schema<string> {
    const { minLength, maxLength, pattern, format, ...common } = opts;
    return make({ type: 'string', ...defined({ minLength, maxLength, pattern, format }) }, common);
  },
  /** One of some strings; the type is their union. */
  enum<const V extends string>(values: readonly V[], opts: Common<V> = {}): Schema<V> {
    return make({ type: 'string', enum: [...values] as never }, opts);
  },
  /** An integer, between `minimum` and `maximum` when given. */
  integer(opts: Common<number> & { minimum?: number; maximum?: number; format?: 'int32' | 'int64' } = {}): Schema<number> {
    const { minimum, maximum, format, ...common } = opts;
    return make({ type: 'integer', ...defined({ minimum, maximum, format }) }, common);
  },
  /** A number (an integer is one too), between `minimum` and `maximum` when given. */
  number(opts: Common<number> & { minimum?: number; maximum?: number } = {}): Schema<number> {
    const { minimum, maximum, ...common } = opts;
    return make({ type: 'number', ...defined({ minimum, maximum }) }, common);
  },
  /** true or false. */
  boolean(opts: Common<boolean> = {}): Schema<boolean> {
    return make({ type: 'boolean' }, opts);
  },
  /** An RFC 3339 time (`metav1.Time`). */
  dateTime(opts: Common<string> = {}): Schema<string> {
    return make({ type: 'string', format: 'date-time' }, opts);
  },
  /** An int or a string (`intstr.IntOrString`: a port, a percentage). */
  intOrString(opts: Common<number | string> = {}): Schema<number | string> {
    return make({ 'x-kubernetes-int-or-string': true }, opts);
  },
  /** An object with these properties; `t.optional` marks those that may be left out. */
  object<P extends Props>(properties: P, opts: Common<ObjectOf<P>> & { mapType?: 'atomic' | 'granular' } = {}): Schema<ObjectOf<P>> {
    const { mapType, ...common } = opts;
    const props: Record<string, JSONSchemaProps> = {};
    const required: string[] = [];
    for (const [k, v] of Object.entries(properties)) {
      props[k] = v.openAPIV3Schema;
      if (!v.optional) required.push(k);
    }
    return make({ type: 'object', properties: props, ...(required.length ? { required } : {}), ...(mapType ? { 'x-kubernetes-map-type': mapType } : {}) }, common);
  },
  /** A map of string keys to values of one schema. */
  record<V>(values: Schema<V>, opts: Common<Record<string, V>> = {}): Schema<Record<string, V>> {
    return make({ type: 'object', additionalProperties: values.openAPIV3Schema }, opts);
  },
  /** A list; `listType: 'map'` with `keys` merges items by key under server-side apply. */
  array<V>(items: Schema<V>, opts: Common<V[]> & { minItems?: number; maxItems?: number; listType?: 'atomic' | 'set' | 'map'; keys?: string[] } = {}): Schema<V[]> {
    const { minItems, maxItems, listType, keys, ...common } = opts;
    return make(
      {
        type: 'array',
        items: items.openAPIV3Schema,
        ...defined({ minItems, maxItems }),
        ...(listType ? { 'x-kubernetes-list-type': listType } : {}),
        ...(keys ? { 'x-kubernetes-list-map-keys': keys } : {}),
      },
      common,
    );
  },
  /** Any JSON, kept as it is (x-kubernetes-preserve-unknown-fields). */
  any(opts: Common<unknown> = {}): Schema<unknown> {
    return make({ 'x-kubernetes-preserve-unknown-fields': true }, opts);
  },
  /** Status conditions (metav1.Condition), merged by type under server-side apply. */
  conditions(opts: Common<unknown> = {}): Schema<Array<{ type: string; status: 'True' | 'False' | 'Unknown'; reason: string; message: string; observedGeneration?: number; lastTransitionTime?: string }>> {
    const condition = t.object({
      type: t.string({ maxLength: 316 }),
      status: t.enum(['True', 'False', 'Unknown']),
      reason: t.string({ maxLength: 1024 }),
      message: t.string({ maxLength: 32768 }),
      observedGeneration: t.optional(t.integer({ minimum: 0, format: 'int64' })),
      lastTransitionTime: t.optional(t.dateTime()),
    });
    return t.array(condition, { ...(opts as Common<never>), listType: 'map', keys: ['type'] });
  },
  /** A property that may be left out of its object. */
  optional<T>(schema: Schema<T>): Schema<T | undefined> & { optional: true } {
    return { openAPIV3Schema: schema.openAPIV3Schema, optional: true };
  },
};

function defined(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}
