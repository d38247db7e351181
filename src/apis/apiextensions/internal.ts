/**
 * The hub conversions between the wire versions and the internal form that
 * validation and the generation check work on (v1/conversion.go): v1 per-version
 * schema, subresources, printer columns and selectable fields are hoisted to the top
 * level when every version carries the same value (the "path quirk" of error
 * messages), and distributed back to every version on the way out.
 */
import { clone, deepEqual, isObject } from './json-util.js';
import { DESCRIPTORS, canonicalize } from './wire-codec.js';
import {
  KIND,
  V1,
  V1BETA1,
  type AnyCRD,
  type CRDSpecV1,
  type CRDSpecV1beta1,
  type CustomResourceColumnDefinitionV1,
  type CustomResourceConversionV1,
  type CustomResourceConversionV1beta1,
  type CustomResourceDefinitionV1,
  type CustomResourceDefinitionV1beta1,
  type CustomResourceDefinitionVersionV1,
  type InternalColumn,
  type InternalCRD,
  type InternalVersion,
  type RequestVersion,
} from '../../api/apiextensions.js';

/** Which wire version an object is written in: its apiVersion, else the request's. */
export function isV1beta1Object(crd: AnyCRD, fallback: RequestVersion = 'v1'): crd is CustomResourceDefinitionV1beta1 {
  if (crd.apiVersion === V1BETA1) return true;
  if (crd.apiVersion === V1) return false;
  return fallback === 'v1beta1';
}

export function toInternal(crd: AnyCRD, fallback: RequestVersion = 'v1'): InternalCRD {
  return isV1beta1Object(crd, fallback) ? v1beta1ToInternal(crd) : v1ToInternal(crd as CustomResourceDefinitionV1);
}

export function v1beta1ToInternal(crd: CustomResourceDefinitionV1beta1): InternalCRD {
  return canonicalize<InternalCRD>(crd, DESCRIPTORS.crdV1beta1);
}

export function v1ToInternal(crd: CustomResourceDefinitionV1): InternalCRD {
  const c = canonicalize<CustomResourceDefinitionV1 & { spec: CRDSpecV1 }>(crd, DESCRIPTORS.crdV1);
  const s = c.spec;
  const versions: InternalVersion[] = (Array.isArray(s.versions) ? s.versions : []).map((v) => {
    const { additionalPrinterColumns, ...rest } = v;
    return additionalPrinterColumns ? { ...rest, additionalPrinterColumns: additionalPrinterColumns.map(columnToInternal) } : rest;
  });
  const spec: CRDSpecV1beta1 = {
    group: s.group,
    names: s.names,
    scope: s.scope,
    versions,
    conversion: s.conversion ? conversionToInternal(s.conversion) : undefined,
    // v1's bool becomes the internal pointer: always set
    preserveUnknownFields: s.preserveUnknownFields === true,
  };
  if (versions.length) {
    spec.version = versions[0].name;
    hoist(spec, versions);
  }
  return canonicalize<InternalCRD>({ ...c, spec }, DESCRIPTORS.crdV1beta1);
}

function columnToInternal(c: CustomResourceColumnDefinitionV1): InternalColumn {
  const { jsonPath, ...rest } = c;
  return { ...rest, JSONPath: jsonPath };
}

function columnToV1(c: InternalColumn): CustomResourceColumnDefinitionV1 {
  const { JSONPath, ...rest } = c;
  return { ...rest, jsonPath: JSONPath };
}

function conversionToInternal(c: CustomResourceConversionV1): CustomResourceConversionV1beta1 {
  const out: CustomResourceConversionV1beta1 = { strategy: c.strategy };
  if (isObject(c.webhook)) {
    if (Array.isArray(c.webhook.conversionReviewVersions)) out.conversionReviewVersions = c.webhook.conversionReviewVersions;
    if (c.webhook.clientConfig) out.webhookClientConfig = c.webhook.clientConfig;
  }
  return out;
}

function conversionToV1(c: CustomResourceConversionV1beta1): CustomResourceConversionV1 {
  const out: CustomResourceConversionV1 = { strategy: c.strategy };
  if (c.webhookClientConfig || c.conversionReviewVersions) {
    out.webhook = { conversionReviewVersions: c.conversionReviewVersions ?? null };
    if (c.webhookClientConfig) out.webhook.clientConfig = c.webhookClientConfig;
  }
  return out;
}

const HOISTED = [
  ['schema', 'validation'],
  ['subresources', 'subresources'],
  ['additionalPrinterColumns', 'additionalPrinterColumns'],
  ['selectableFields', 'selectableFields'],
] as const;

/** Moves per-version values to the top level when all versions agree (nil included). */
function hoist(spec: CRDSpecV1beta1, versions: InternalVersion[]): void {
  for (const [perVersion, topLevel] of HOISTED) {
    const first = versions[0][perVersion];
    if (!versions.every((v) => deepEqual(v[perVersion], first))) continue;
    if (first !== undefined) (spec as Record<string, unknown>)[topLevel] = first;
    for (const v of versions) delete v[perVersion];
  }
}

export function internalToV1(internal: InternalCRD): CustomResourceDefinitionV1 {
  const s = internal.spec ?? {};
  let versions: CustomResourceDefinitionVersionV1[] = (Array.isArray(s.versions) ? clone(s.versions) : []).map((v) => {
    const { additionalPrinterColumns, ...rest } = v;
    return additionalPrinterColumns ? { ...rest, additionalPrinterColumns: additionalPrinterColumns.map(columnToV1) } : rest;
  });
  if (versions.length === 0 && s.version) versions = [{ name: s.version, served: true, storage: true }];
  for (const v of versions) {
    if (s.subresources) v.subresources = clone(s.subresources);
    if (s.validation) v.schema = clone(s.validation);
    if (s.additionalPrinterColumns) v.additionalPrinterColumns = s.additionalPrinterColumns.map(columnToV1);
    if (s.selectableFields) v.selectableFields = clone(s.selectableFields);
  }
  const spec: CRDSpecV1 = {
    group: s.group,
    names: clone(s.names),
    scope: s.scope,
    versions,
    conversion: s.conversion ? conversionToV1(clone(s.conversion)) : undefined,
    preserveUnknownFields: s.preserveUnknownFields === true,
  };
  const out = { ...clone(internal), kind: KIND, apiVersion: V1, spec };
  return canonicalize<CustomResourceDefinitionV1>(out, DESCRIPTORS.crdV1);
}

export function internalToV1beta1(internal: InternalCRD): CustomResourceDefinitionV1beta1 {
  return canonicalize<CustomResourceDefinitionV1beta1>({ ...internal, kind: KIND, apiVersion: V1BETA1 }, DESCRIPTORS.crdV1beta1);
}
