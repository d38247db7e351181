/**
 * Schemas written once: each builder gives the OpenAPI v3 schema kapi serves and validates with (a CRD
 * version's openAPIV3Schema) and carries the TypeScript type of the values it describes, so a resource's
 * type is derived from its schema (`Infer<typeof schema>`) and never written twice.
 *
 *   const FooSpec = t.object({ replicas: t.integer({ minimum: 0, default: 1 }), message: t.optional(t.string()) });
 *   type FooSpec = Infer<typeof FooSpec>;            // { replicas: number; message?: string }, as read
 *   type FooSpecIn = InferInput<typeof FooSpec>;     // { replicas?: number; message?: string }, as written
 *
 * A property with a default is not in its object's `required` list: a writer may leave it out and the server
 * sets it, so it is optional in the input type and always there in the type of what is read.
 */
import type { JSONSchemaProps } from '../schema/types.js';

/** A schema and (at the type level only) the values it describes: as read (`T`) and as written (`I`). */
export interface Schema<T = unknown, I = T> {
  readonly openAPIV3Schema: JSONSchemaProps;
  /** Never set: the type of the values, for `Infer`. */
  readonly __type?: T;
  /** Never set: the type of the values a writer sends, for `InferInput`. */
  readonly __input?: I;
  /** An object property that may be left out (`t.optional`). */
  readonly optional?: boolean;
  /** An object property the server sets when it is left out (a `default`): optional when written. */
  readonly defaulted?: boolean;
}

/** The TypeScript type of a schema's values, as read from the server. */
export type Infer<S> = S extends Schema<infer T, unknown> ? T : never;
/** The TypeScript type of a schema's values as written: properties with a default may be left out. */
export type InferInput<S> = S extends Schema<unknown, infer I> ? I : never;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Props = Record<string, Schema<any, any>>;
type RequiredKeys<P extends Props> = { [K in keyof P]: P[K] extends { optional: true } ? never : K }[keyof P];
type OptionalKeys<P extends Props> = { [K in keyof P]: P[K] extends { optional: true } ? K : never }[keyof P];
type LeftOut = { optional: true } | { defaulted: true };
type RequiredInputKeys<P extends Props> = { [K in keyof P]: P[K] extends LeftOut ? never : K }[keyof P];
type OptionalInputKeys<P extends Props> = { [K in keyof P]: P[K] extends LeftOut ? K : never }[keyof P];
type Simplify<T> = { [K in keyof T]: T[K] } & {};
/** The type of the values `t.object(properties)` describes, as read: properties marked `t.optional` may be absent. */
export type ObjectOf<P extends Props> = Simplify<{ [K in RequiredKeys<P>]: Infer<P[K]> } & { [K in OptionalKeys<P>]?: Infer<P[K]> }>;
/** The type of the values `t.object(properties)` describes, as written: properties with a default may be left out too. */
export type ObjectInputOf<P extends Props> = Simplify<{ [K in RequiredInputKeys<P>]: InferInput<P[K]> } & { [K in OptionalInputKeys<P>]?: InferInput<P[K]> }>;

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

/** A schema as its options make it: one with a `default` may be left out of its object when written. */
export type WithOptions<O, S> = O extends { default: unknown } ? S & { readonly defaulted: true } : S;

function make<S>(schema: JSONSchemaProps, common: Common<unknown> = {}): S {
  const s: JSONSchemaProps = { ...schema };
  if (common.description !== undefined) s.description = common.description;
  if (common.default !== undefined) s.default = common.default as never;
  if (common.nullable) s.nullable = true;
  if (common.validations?.length) s['x-kubernetes-validations'] = common.validations as never;
  return (common.default !== undefined ? { openAPIV3Schema: s, defaulted: true } : { openAPIV3Schema: s }) as S;
}

/** Builder options when none are given. */
type NoOptions = Record<never, never>;
type StringOptions = Common<string> & { minLength?: number; maxLength?: number; pattern?: string; format?: string };
type NumberOptions = Common<number> & { minimum?: number; maximum?: number };
type ArrayOptions<V> = Common<V[]> & { minItems?: number; maxItems?: number; listType?: 'atomic' | 'set' | 'map'; keys?: string[] };

/**
 * The schema builders, as kubebuilder's markers are for Go types: each gives a Schema (its OpenAPI v3 schema
 * and its values' type). `t.object({ replicas: t.integer({ minimum: 0 }) })`.
 */
export const t = {
  /** A string; its length, `pattern` and `format` checked by the server as a CRD schema's are. */
  string<O extends StringOptions = NoOptions>(opts: O = {} as O): WithOptions<O, Schema<string>> {
    const { minLength, maxLength, pattern, format, ...common } = opts as StringOptions;
    return make({ type: 'string', ...defined({ minLength, maxLength, pattern, format }) }, common);
  },
  /** One of some strings; the type is their union. */
  enum<const V extends string, O extends Common<V> = NoOptions>(values: readonly V[], opts: O = {} as O): WithOptions<O, Schema<V>> {
    return make({ type: 'string', enum: [...values] as never }, opts as Common<unknown>);
  },
  /** An integer, between `minimum` and `maximum` when given. */
  integer<O extends NumberOptions & { format?: 'int32' | 'int64' } = NoOptions>(opts: O = {} as O): WithOptions<O, Schema<number>> {
    const { minimum, maximum, format, ...common } = opts as NumberOptions & { format?: string };
    return make({ type: 'integer', ...defined({ minimum, maximum, format }) }, common);
  },
  /** A number (an integer is one too), between `minimum` and `maximum` when given. */
  number<O extends NumberOptions = NoOptions>(opts: O = {} as O): WithOptions<O, Schema<number>> {
    const { minimum, maximum, ...common } = opts as NumberOptions;
    return make({ type: 'number', ...defined({ minimum, maximum }) }, common);
  },
  /** true or false. */
  boolean<O extends Common<boolean> = NoOptions>(opts: O = {} as O): WithOptions<O, Schema<boolean>> {
    return make({ type: 'boolean' }, opts as Common<unknown>);
  },
  /** An RFC 3339 time (`metav1.Time`). */
  dateTime<O extends Common<string> = NoOptions>(opts: O = {} as O): WithOptions<O, Schema<string>> {
    return make({ type: 'string', format: 'date-time' }, opts as Common<unknown>);
  },
  /** An int or a string (`intstr.IntOrString`: a port, a percentage). */
  intOrString<O extends Common<number | string> = NoOptions>(opts: O = {} as O): WithOptions<O, Schema<number | string>> {
    return make({ 'x-kubernetes-int-or-string': true }, opts as Common<unknown>);
  },
  /** An object with these properties; `t.optional` marks those that may be left out, and a default makes one optional to write. */
  object<P extends Props, O extends Common<ObjectInputOf<P>> & { mapType?: 'atomic' | 'granular' } = NoOptions>(properties: P, opts: O = {} as O): WithOptions<O, Schema<ObjectOf<P>, ObjectInputOf<P>>> {
    const { mapType, ...common } = opts as Common<unknown> & { mapType?: 'atomic' | 'granular' };
    const props: Record<string, JSONSchemaProps> = {};
    const required: string[] = [];
    for (const [k, v] of Object.entries(properties)) {
      props[k] = v.openAPIV3Schema;
      if (!v.optional && !v.defaulted) required.push(k);
    }
    return make({ type: 'object', properties: props, ...(required.length ? { required } : {}), ...(mapType ? { 'x-kubernetes-map-type': mapType } : {}) }, common);
  },
  /** A map of string keys to values of one schema. */
  record<V, VI = V, O extends Common<Record<string, VI>> = NoOptions>(values: Schema<V, VI>, opts: O = {} as O): WithOptions<O, Schema<Record<string, V>, Record<string, VI>>> {
    return make({ type: 'object', additionalProperties: values.openAPIV3Schema }, opts as Common<unknown>);
  },
  /** A list; `listType: 'map'` with `keys` merges items by key under server-side apply. */
  array<V, VI = V, O extends ArrayOptions<VI> = NoOptions>(items: Schema<V, VI>, opts: O = {} as O): WithOptions<O, Schema<V[], VI[]>> {
    const { minItems, maxItems, listType, keys, ...common } = opts as ArrayOptions<VI>;
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
  any<O extends Common<unknown> = NoOptions>(opts: O = {} as O): WithOptions<O, Schema<unknown>> {
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
    return t.array(condition, { ...(opts as Common<never>), listType: 'map', keys: ['type'] }) as Schema<Array<Infer<typeof condition>>>;
  },
  /** A property that may be left out of its object. */
  optional<T, I = T>(schema: Schema<T, I>): Schema<T | undefined, I | undefined> & { optional: true } {
    return { openAPIV3Schema: schema.openAPIV3Schema, optional: true };
  },
};

function defined(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}
