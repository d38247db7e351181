/**
 * The shape of go-types.ts, kapi's one source of the built-in API types (generated from upstream's
 * types.go): every Go struct of the served API packages, field by field, as JSON, protobuf, strategic
 * merge patch and server-side apply see it.
 */

/** An API package (`core/v1`, `apps/v1`, `meta/v1`): its group and version. */
export interface GoPackage {
  group: string;
  version: string;
}

export interface GoStruct {
  fields: GoField[];
  /** `+structType=atomic`. */
  structType?: string;
  mapType?: string;
  /**
   * A struct with a JSON form of its own (a custom MarshalJSON; its fields are named as in Go):
   * orArray, a schema (Schema) or a list of them (JSONSchemas); orBool, a boolean (Allows) or a schema
   * (Schema, allowing); orStringArray, a schema (Schema) or a list of strings (Property).
   */
  jsonForm?: 'orArray' | 'orBool' | 'orStringArray';
  /** Embeds TypeMeta: an object of its own kind (apiVersion and kind). */
  typeMeta?: boolean;
}

/**
 * A field's type: a scalar (`string`, `bool`, `int32`, `int64`, `int`, `uint32`, `uint64`, `float64`),
 * `bytes` ([]byte, base64 in JSON), a struct id (`core/v1.PodSpec`), a special with a wire form of its
 * own (`@Time`, `@MicroTime`, `@Duration`, `@Quantity`, `@IntOrString`, `@RawExtension`, `@FieldsV1`,
 * `@JSON`), or one made of those: `*T` (a pointer: absent and zero differ), `[]T`, `map[string]T`.
 * A named slice type (`ExtraValue`) ends in `@items`: on the protobuf wire it is a message whose
 * field 1 repeats the items.
 */
export type GoTypeExpr = string;

export interface GoField {
  /** The JSON name; empty for an embedded struct whose fields are the object's own (`inline`). */
  json: string;
  type: GoTypeExpr;
  inline?: boolean;
  omitempty?: boolean;
  omitzero?: boolean;
  /** Field number, wire type (`bytes`, `varint`, `fixed64`, ...) and `opt`/`rep`; absent: not on the protobuf wire. */
  proto?: [number, string, 'opt' | 'rep'];
  /** The Go type as encoding/json's errors name it (`v1.Protocol`, `[]v1.Container`), where it is not `type`. */
  goType?: string;
  patchStrategy?: string;
  patchMergeKey?: string;
  listType?: string;
  listMapKeys?: string[];
  mapType?: string;
  structType?: string;
  optional?: boolean;
  required?: boolean;
  default?: string;
}
