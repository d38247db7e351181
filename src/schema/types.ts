/**
 * The structural schema (apiextensions-apiserver's schema.Structural): the typed
 * skeleton used by pruning, defaulting, list types, embedded resources and CEL,
 * with value validations (and the logic junctors allOf/anyOf/oneOf/not) kept
 * apart, as upstream does. Every node keeps the raw JSONSchemaProps it came from,
 * which the OpenAPI validator compiles.
 */
import type { JSONSchemaProps, ValidationRule } from '../api/apiextensions.js';

export type { JSONSchemaProps, ValidationRule };

export interface Generic {
  description: string;
  type: string;
  title: string;
  /** Go's Default.Object != nil: a JSON null default counts as none. */
  hasDefault: boolean;
  default: unknown;
  nullable: boolean;
  hasExternalDocs: boolean;
  hasExample: boolean;
}

export interface Extensions {
  preserveUnknownFields: boolean;
  embeddedResource: boolean;
  intOrString: boolean;
  /** undefined when absent (Go nil); an empty array is "set". */
  listMapKeys: string[] | undefined;
  listType: string | undefined;
  mapType: string | undefined;
}

export interface ValueValidation {
  format: string;
  maximum?: number;
  exclusiveMaximum: boolean;
  minimum?: number;
  exclusiveMinimum: boolean;
  maxLength?: number;
  minLength?: number;
  pattern: string;
  maxItems?: number;
  minItems?: number;
  uniqueItems: boolean;
  multipleOf?: number;
  enum?: unknown[];
  maxProperties?: number;
  minProperties?: number;
  required?: string[];
  allOf?: NestedValueValidation[];
  oneOf?: NestedValueValidation[];
  anyOf?: NestedValueValidation[];
  not?: NestedValueValidation;
}

export interface NestedValueValidation {
  raw: JSONSchemaProps;
  valueValidation: ValueValidation;
  xValidations: ValidationRule[] | undefined;
  items?: NestedValueValidation;
  properties?: Map<string, NestedValueValidation>;
  additionalProperties?: NestedValueValidation;
  forbiddenGenerics: Generic;
  forbiddenExtensions: Extensions;
}

/** Structural.subtree bits: what the node or any node below it (not through junctors) has. */
export const HAS_DEFAULT = 1;
export const HAS_EMBEDDED = 2;
export const HAS_LIST_TYPE = 4;

export interface Structural extends Generic, Extensions {
  raw: JSONSchemaProps;
  /** HAS_* bits, so that walks can skip subtrees with nothing to do. */
  subtree: number;
  items?: Structural;
  properties?: Map<string, Structural>;
  /** additionalProperties: a schema, or a bare true/false. */
  additionalProperties?: { schema?: Structural; allows: boolean };
  xValidations: ValidationRule[] | undefined;
  valueValidation: ValueValidation;
}
