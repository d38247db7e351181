/**
 * Wire shapes of apiextensions.k8s.io CustomResourceDefinitions: v1 (the stored,
 * canonical form) and v1beta1 (served by 1.20, whose spec doubles as our
 * "internal" form, the hub that validation works on, as in apiextensions-apiserver).
 * Objects are plain JSON: every field is optional because clients may omit anything.
 */

export const GROUP = 'apiextensions.k8s.io';
export const V1 = `${GROUP}/v1`;
export const V1BETA1 = `${GROUP}/v1beta1`;
export const KIND = 'CustomResourceDefinition';
export const API_APPROVAL_ANNOTATION = 'api-approved.kubernetes.io';

export type RequestVersion = 'v1' | 'v1beta1';

/** The Warning sent with every apiextensions.k8s.io/v1beta1 CRD request. */
export const V1BETA1_DEPRECATION_WARNING =
  'apiextensions.k8s.io/v1beta1 CustomResourceDefinition is deprecated in v1.16+, unavailable in v1.22+; use apiextensions.k8s.io/v1 CustomResourceDefinition';

/** The customresourcedefinitions resource in discovery. */
export const CRD_RESOURCE = {
  name: 'customresourcedefinitions',
  singularName: 'customresourcedefinition',
  kind: KIND,
  shortNames: ['crd', 'crds'],
  categories: ['api-extensions'],
} as const;

/** Arbitrary JSON (`default`, `example`, `enum` entries); 64-bit integers may arrive as bigint. */
export type JSONValue = unknown;

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string | null;
  deletionTimestamp?: string | null;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  [key: string]: unknown;
}

/** A schema's `externalDocs`: a link to more documentation. */
export interface ExternalDocumentation {
  description?: string;
  url?: string;
}

/** One entry of `x-kubernetes-validations`: a CEL rule on the value at its place in the schema (`self`; `oldSelf` on update). */
export interface ValidationRule {
  /** The CEL expression; the value is valid when it is true. */
  rule?: string;
  /** The error message when the rule is false (default: `failed rule: <rule>`). */
  message?: string;
  /** A CEL expression of type string giving the message; it takes precedence over `message`. */
  messageExpression?: string;
  /** The error's cause reason: FieldValueInvalid (default), FieldValueForbidden, FieldValueRequired or FieldValueDuplicate. */
  reason?: string;
  /** The field the error is reported on, relative to the value (e.g. `.spec.replicas`). */
  fieldPath?: string;
  /** A transition rule (one using `oldSelf`) runs on create too, `oldSelf` then an empty CEL optional (otherwise: updates only). */
  optionalOldSelf?: boolean;
}

/** JSONSchemaProps: identical JSON in v1 and v1beta1. */
export interface JSONSchemaProps {
  id?: string;
  $schema?: string;
  $ref?: string;
  description?: string;
  type?: string;
  format?: string;
  title?: string;
  default?: JSONValue;
  maximum?: number;
  exclusiveMaximum?: boolean;
  minimum?: number;
  exclusiveMinimum?: boolean;
  maxLength?: number;
  minLength?: number;
  pattern?: string;
  maxItems?: number;
  minItems?: number;
  uniqueItems?: boolean;
  multipleOf?: number;
  enum?: JSONValue[];
  maxProperties?: number;
  minProperties?: number;
  required?: string[];
  /** A schema, or (forbidden, but representable) an array of schemas. */
  items?: JSONSchemaProps | JSONSchemaProps[];
  allOf?: JSONSchemaProps[];
  oneOf?: JSONSchemaProps[];
  anyOf?: JSONSchemaProps[];
  not?: JSONSchemaProps;
  properties?: Record<string, JSONSchemaProps>;
  additionalProperties?: JSONSchemaProps | boolean;
  patternProperties?: Record<string, JSONSchemaProps>;
  dependencies?: Record<string, JSONSchemaProps | string[]>;
  additionalItems?: JSONSchemaProps | boolean;
  definitions?: Record<string, JSONSchemaProps>;
  externalDocs?: ExternalDocumentation;
  example?: JSONValue;
  nullable?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-map-type'?: string;
  'x-kubernetes-validations'?: ValidationRule[];
}

export interface CustomResourceValidation {
  openAPIV3Schema?: JSONSchemaProps;
}

export interface CustomResourceSubresourceScale {
  specReplicasPath?: string;
  statusReplicasPath?: string;
  labelSelectorPath?: string;
}

export interface CustomResourceSubresources {
  /** An empty object enables the status subresource. */
  status?: Record<string, never>;
  scale?: CustomResourceSubresourceScale;
}

export interface SelectableField {
  jsonPath?: string;
}

export interface CustomResourceDefinitionNames {
  plural?: string;
  singular?: string;
  shortNames?: string[];
  kind?: string;
  listKind?: string;
  categories?: string[];
}

export interface ServiceReference {
  namespace?: string;
  name?: string;
  path?: string;
  port?: number;
}

export interface WebhookClientConfig {
  url?: string;
  service?: ServiceReference;
  /** base64 of PEM bytes on the wire. */
  caBundle?: string;
}

export type ConditionStatus = 'True' | 'False' | 'Unknown';

export type CRDConditionType = 'Established' | 'NamesAccepted' | 'NonStructuralSchema' | 'Terminating' | 'KubernetesAPIApprovalPolicyConformant';

export interface CRDCondition {
  type: string;
  status: string;
  lastTransitionTime?: string | null;
  reason?: string;
  message?: string;
}

export interface CRDStatus {
  conditions?: CRDCondition[] | null;
  acceptedNames?: CustomResourceDefinitionNames;
  storedVersions?: string[] | null;
}

// ---------------------------------------------------------------- v1

export interface CustomResourceColumnDefinitionV1 {
  name?: string;
  type?: string;
  format?: string;
  description?: string;
  priority?: number;
  jsonPath?: string;
}

export interface CustomResourceDefinitionVersionV1 {
  name?: string;
  served?: boolean;
  storage?: boolean;
  deprecated?: boolean;
  deprecationWarning?: string;
  schema?: CustomResourceValidation;
  subresources?: CustomResourceSubresources;
  additionalPrinterColumns?: CustomResourceColumnDefinitionV1[];
  selectableFields?: SelectableField[];
}

export interface WebhookConversionV1 {
  clientConfig?: WebhookClientConfig;
  conversionReviewVersions?: string[] | null;
}

export interface CustomResourceConversionV1 {
  strategy?: string;
  webhook?: WebhookConversionV1;
}

export interface CRDSpecV1 {
  group?: string;
  names?: CustomResourceDefinitionNames;
  scope?: string;
  versions?: CustomResourceDefinitionVersionV1[];
  conversion?: CustomResourceConversionV1;
  preserveUnknownFields?: boolean;
}

export interface CustomResourceDefinitionV1 {
  kind?: string;
  apiVersion?: string;
  metadata?: ObjectMeta;
  spec?: CRDSpecV1;
  status?: CRDStatus;
}

// ---------------------------------------------------------------- v1beta1 (and internal)

export interface CustomResourceColumnDefinitionV1beta1 {
  name?: string;
  type?: string;
  format?: string;
  description?: string;
  priority?: number;
  JSONPath?: string;
}

export interface CustomResourceDefinitionVersionV1beta1 {
  name?: string;
  served?: boolean;
  storage?: boolean;
  deprecated?: boolean;
  deprecationWarning?: string;
  schema?: CustomResourceValidation;
  subresources?: CustomResourceSubresources;
  additionalPrinterColumns?: CustomResourceColumnDefinitionV1beta1[];
  selectableFields?: SelectableField[];
}

export interface CustomResourceConversionV1beta1 {
  strategy?: string;
  webhookClientConfig?: WebhookClientConfig;
  conversionReviewVersions?: string[];
}

export interface CRDSpecV1beta1 {
  group?: string;
  version?: string;
  names?: CustomResourceDefinitionNames;
  scope?: string;
  validation?: CustomResourceValidation;
  subresources?: CustomResourceSubresources;
  versions?: CustomResourceDefinitionVersionV1beta1[];
  additionalPrinterColumns?: CustomResourceColumnDefinitionV1beta1[];
  selectableFields?: SelectableField[];
  conversion?: CustomResourceConversionV1beta1;
  /** A pointer in v1beta1 and internally: undefined means nil. */
  preserveUnknownFields?: boolean;
}

export interface CustomResourceDefinitionV1beta1 {
  kind?: string;
  apiVersion?: string;
  metadata?: ObjectMeta;
  spec?: CRDSpecV1beta1;
  status?: CRDStatus;
}

/**
 * The internal (hub) form: the v1beta1 shape in canonical form, with spec.versions
 * always filled, per-version values hoisted to the top level when all versions agree.
 */
export type InternalCRD = CustomResourceDefinitionV1beta1 & { spec: CRDSpecV1beta1 };
export type InternalVersion = CustomResourceDefinitionVersionV1beta1;
export type InternalColumn = CustomResourceColumnDefinitionV1beta1;

/** A CRD in either wire version; `apiVersion` tells which. */
export type AnyCRD = CustomResourceDefinitionV1 | CustomResourceDefinitionV1beta1;

/** A CRD version's selectableFields as field labels (`.spec.color` → `spec.color`), in their order. */
export function selectableFieldLabels(version: { selectableFields?: Array<{ jsonPath?: string }> | null }): string[] {
  return (version.selectableFields ?? []).map((f) => String(f.jsonPath ?? '').replace(/^\./, ''));
}

/** What the structural-schema hook learns about the call site. */
export interface StructuralSchemaContext {
  /** Whether other errors were already found for this schema (upstream hides NewStructural errors then). */
  hasOtherErrors: boolean;
  requirePrunedDefaults: boolean;
  /** The version's schema is unchanged by an update: CEL expressions are not held to the per-expression cost limit. */
  suppressPerExpressionCost?: boolean;
  /** Leave out the CEL cost limits (the NonStructuralSchema condition is computed without them). */
  skipCelCost?: boolean;
}
