/**
 * The published apiextensions.k8s.io/v1beta1 definitions, derived from the v1
 * ones (upstream's published data, apiextensions-v1-definitions.ts) with the
 * differences of the v1beta1 types (k8s.io/apiextensions-apiserver v1beta1,
 * as served until 1.22): a spec with the single `version`, `validation`,
 * `subresources` and `additionalPrinterColumns` beside `versions`; printer
 * columns with `JSONPath`; conversion with `webhookClientConfig` and
 * `conversionReviewVersions`; no selectableFields. kubectl validates v1beta1
 * manifests against these.
 */
import type { Schema } from './schema-types.js';

const V1 = 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.';
const V1BETA1 = 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1beta1.';

function renamed(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(renamed);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === '$ref' && typeof v === 'string') out[k] = v.replace(`#/definitions/${V1}`, `#/definitions/${V1BETA1}`);
    else if (k === 'x-kubernetes-group-version-kind' && Array.isArray(v)) out[k] = v.map((g) => ({ ...g, version: 'v1beta1' }));
    else out[k] = renamed(v);
  }
  return out;
}

const ref = (name: string, description: string): Schema => ({ description, $ref: `#/definitions/${V1BETA1}${name}` });
const listOf = (name: string, description: string): Schema => ({ description, type: 'array', items: { $ref: `#/definitions/${V1BETA1}${name}` } });

export function apiextensionsV1beta1Definitions(v1: Record<string, Schema>): Record<string, Schema> {
  const out: Record<string, Schema> = {};
  for (const [name, schema] of Object.entries(v1)) {
    if (name.startsWith(V1)) out[V1BETA1 + name.slice(V1.length)] = renamed(schema) as Schema;
  }
  const spec = out[`${V1BETA1}CustomResourceDefinitionSpec`];
  if (spec?.properties) {
    spec.properties = {
      ...spec.properties,
      version: { description: 'version is the API version of the defined custom resource. Optional if `versions` is specified. Deprecated: use `versions` instead.', type: 'string' },
      validation: ref('CustomResourceValidation', 'validation describes the schema used for validation and pruning of the custom resource. Top-level and per-version schemas are mutually exclusive.'),
      subresources: ref('CustomResourceSubresources', 'subresources specify what subresources the defined custom resource has. Top-level and per-version subresources are mutually exclusive.'),
      additionalPrinterColumns: listOf('CustomResourceColumnDefinition', 'additionalPrinterColumns specifies additional columns returned in Table output. Top-level and per-version columns are mutually exclusive.'),
    };
    spec.required = ['group', 'names', 'scope'];
  }
  const version = out[`${V1BETA1}CustomResourceDefinitionVersion`];
  if (version?.properties) {
    delete version.properties.selectableFields;
    version.required = ['name', 'served', 'storage'];
  }
  const column = out[`${V1BETA1}CustomResourceColumnDefinition`];
  if (column?.properties?.jsonPath) {
    const { jsonPath, ...rest } = column.properties;
    column.properties = { JSONPath: jsonPath, ...rest };
    column.required = ['name', 'type', 'JSONPath'];
  }
  const conversion = out[`${V1BETA1}CustomResourceConversion`];
  if (conversion?.properties) {
    const { webhook: _webhook, ...rest } = conversion.properties;
    conversion.properties = {
      ...rest,
      webhookClientConfig: ref('WebhookClientConfig', 'webhookClientConfig is the instructions for how to call the webhook if strategy is `Webhook`.'),
      conversionReviewVersions: { description: 'conversionReviewVersions is an ordered list of preferred `ConversionReview` versions the Webhook expects.', type: 'array', items: { type: 'string' } },
    };
  }
  delete out[`${V1BETA1}WebhookConversion`];
  delete out[`${V1BETA1}SelectableField`];
  return out;
}
