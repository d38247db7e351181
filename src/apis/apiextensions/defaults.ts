/**
 * Defaulting of CRDs as the API server applies it when decoding a request body
 * (v1/defaults.go, v1beta1/defaults.go), and the registry strategy's status handling
 * on create and update (registry/customresourcedefinition/strategy.go).
 * All functions return new objects; inputs are never mutated.
 */
import { clone, deepEqual, isObject } from './json-util.js';
import { isV1beta1Object, toInternal } from './internal.js';
import type {
  AnyCRD,
  CRDSpecV1,
  CRDSpecV1beta1,
  CRDStatus,
  CustomResourceDefinitionNames,
  CustomResourceDefinitionV1,
  CustomResourceDefinitionV1beta1,
  ObjectMeta,
  RequestVersion,
  ServiceReference,
} from '../../api/apiextensions.js';

function defaultNames(names: CustomResourceDefinitionNames): void {
  const kind = typeof names.kind === 'string' ? names.kind : '';
  if (!names.singular) names.singular = kind.toLowerCase();
  if (!names.listKind && kind) names.listKind = kind + 'List';
}

function defaultService(service: ServiceReference | undefined): void {
  if (isObject(service) && (service.port === undefined || service.port === null)) service.port = 443;
}

function defaultStoredVersions(status: CRDStatus | undefined, versions: { name?: string; storage?: boolean }[] | undefined): CRDStatus | undefined {
  if (status?.storedVersions?.length) return status;
  const storage = (versions ?? []).find((v) => v?.storage);
  if (!storage) return status;
  return { ...status, storedVersions: [storage.name ?? ''] };
}

/** SetObjectDefaults_CustomResourceDefinition of apiextensions.k8s.io/v1. */
export function defaultV1(crd: CustomResourceDefinitionV1): CustomResourceDefinitionV1 {
  const out = clone(crd);
  const spec: CRDSpecV1 = isObject(out.spec) ? out.spec : (out.spec = {});
  if (!isObject(spec.names)) spec.names = {};
  defaultNames(spec.names);
  if (!isObject(spec.conversion)) spec.conversion = { strategy: 'None' };
  defaultService(spec.conversion.webhook?.clientConfig?.service);
  const status = defaultStoredVersions(out.status, Array.isArray(spec.versions) ? spec.versions : undefined);
  if (status) out.status = status;
  return out;
}

/** SetObjectDefaults_CustomResourceDefinition of apiextensions.k8s.io/v1beta1. */
export function defaultV1beta1(crd: CustomResourceDefinitionV1beta1): CustomResourceDefinitionV1beta1 {
  const out = clone(crd);
  const spec: CRDSpecV1beta1 = isObject(out.spec) ? out.spec : (out.spec = {});
  if (!spec.scope) spec.scope = 'Namespaced';
  if (!isObject(spec.names)) spec.names = {};
  defaultNames(spec.names);
  if (!(Array.isArray(spec.versions) && spec.versions.length) && spec.version) {
    spec.versions = [{ name: spec.version, served: true, storage: true }];
  }
  if (!spec.version && Array.isArray(spec.versions) && spec.versions.length) spec.version = spec.versions[0]?.name ?? '';
  if (!isObject(spec.conversion)) spec.conversion = { strategy: 'None' };
  if (spec.conversion.strategy === 'Webhook' && !spec.conversion.conversionReviewVersions?.length) {
    spec.conversion.conversionReviewVersions = ['v1beta1'];
  }
  if (spec.preserveUnknownFields === undefined || spec.preserveUnknownFields === null) spec.preserveUnknownFields = true;
  defaultService(spec.conversion.webhookClientConfig?.service);
  const status = defaultStoredVersions(out.status, Array.isArray(spec.versions) ? spec.versions : undefined);
  if (status) out.status = status;
  return out;
}

/** Defaults for the version the object is written in (apiVersion, else `requestVersion`). */
export function defaultCRD<T extends AnyCRD>(crd: T, requestVersion: RequestVersion = 'v1'): T {
  return (isV1beta1Object(crd, requestVersion) ? defaultV1beta1(crd) : defaultV1(crd as CustomResourceDefinitionV1)) as T;
}

function storageVersionOf(crd: AnyCRD): string | undefined {
  const versions = crd.spec?.versions;
  if (!Array.isArray(versions)) return undefined;
  const v = versions.find((x) => x?.storage);
  return v ? (v.name ?? '') : undefined;
}

function withStorageVersion(status: CRDStatus, storage: string | undefined): CRDStatus {
  if (storage === undefined) return status;
  const stored = Array.isArray(status.storedVersions) ? status.storedVersions : [];
  if (stored.includes(storage)) return status;
  return { ...status, storedVersions: [...stored, storage] };
}

/**
 * Strategy PrepareForCreate: the client's status is discarded, storedVersions
 * starts with the storage version, acceptedNames is empty (`plural`/`kind` have no
 * omitempty), conditions are absent. The caller sets metadata.generation to 1.
 * Works on either wire version (the status has the same shape in both).
 */
export function prepareCRDForCreate<T extends AnyCRD>(crd: T): T {
  const out = clone(crd);
  // The empty status as Go encodes it: conditions has no omitempty (null), acceptedNames' plural and kind neither.
  out.status = withStorageVersion({ conditions: null, acceptedNames: { plural: '', kind: '' } } as never, storageVersionOf(out));
  return out;
}

/**
 * Strategy PrepareForUpdate: the status is the old one, plus the new storage
 * version appended to storedVersions if missing. The caller bumps metadata.generation
 * when specChanged() says so.
 */
export function prepareCRDForUpdate<T extends AnyCRD>(newCrd: T, oldCrd: AnyCRD): T {
  const out = clone(newCrd);
  out.status = withStorageVersion(clone(oldCrd.status ?? {}), storageVersionOf(out));
  return out;
}

const STATUS_UPDATE_KEPT_METADATA = ['labels', 'annotations', 'ownerReferences', 'generation', 'selfLink'] as const;

/**
 * Status strategy PrepareForUpdate (the /status subresource, A-12): spec and the
 * user-controlled metadata come from the old object. Both objects must be in the same version.
 */
export function prepareCRDStatusForUpdate<T extends AnyCRD>(newCrd: T, oldCrd: T): T {
  const out = clone(newCrd);
  out.spec = clone(oldCrd.spec) as T['spec'];
  const meta: Record<string, unknown> = { ...(out.metadata ?? {}) };
  for (const key of STATUS_UPDATE_KEPT_METADATA) {
    const old = oldCrd.metadata?.[key];
    if (old === undefined) delete meta[key];
    else meta[key] = clone(old);
  }
  out.metadata = meta as ObjectMeta;
  return out;
}

/** Whether the spec changed semantically, compared in the internal form (A-11: generation bump). */
export function specChanged(newCrd: AnyCRD, oldCrd: AnyCRD): boolean {
  return !deepEqual(toInternal(newCrd).spec, toInternal(oldCrd).spec);
}
