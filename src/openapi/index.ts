/**
 * OpenAPI publishing: /openapi/v2 (JSON and gnostic protobuf) and /openapi/v3
 * documents for every served version of every CRD and for the built-in
 * resources, maintained incrementally by OpenApiPublisher.
 */
export { definitionName, kindSchema, listSchema, structuralSchema, toOpenAPIV2, unfoldIntOrString, type KindSchemaInput, type PublishOptions } from './crd-schema.js';
export { builtinFragment, crdFragment, gvKey, type BuiltinResource, type Fragment } from './fragments.js';
export { computeETag, negotiate, type Headers, type OpenApiResponse } from './http.js';
export { backendPart, v3FromBackendPart, type BackendPart } from './aggregated.js';
export { crdGroupVersions, OpenApiPublisher, type AggregatedShare, type OpenApiPublisherOptions } from './publisher.js';
export { operationIdAndTag, resourceRoutes, type ResourceInfo, type Route } from './routes.js';
export type { GroupVersionKind, Schema } from './schema-types.js';
