/**
 * apiextensions.k8s.io: the pure logic of the CustomResourceDefinition API.
 *
 * Request flow, as kube-apiserver orders it (the registry does the I/O):
 *   create: body (v1 or v1beta1) → defaultCRD → prepareCRDForCreate → validateCRD
 *           → v1beta1ToV1 if needed → store v1 with metadata.generation 1
 *   update: body → defaultCRD → prepareCRDForUpdate(new, stored) → validateCRDUpdate
 *           → generation + 1 if specChanged(new, stored) → store v1
 *   status: prepareCRDStatusForUpdate → validateCRDStatusUpdate → store
 *   after each write: reconcileNames, establish, reconcileAPIApproval (names.ts)
 */
export * from '../../api/apiextensions.js';
export { v1beta1ToV1, v1ToV1beta1, toInternal, v1ToInternal, v1beta1ToInternal, internalToV1, internalToV1beta1, isV1beta1Object } from './conversion.js';
export { defaultCRD, defaultV1, defaultV1beta1, prepareCRDForCreate, prepareCRDForUpdate, prepareCRDStatusForUpdate, specChanged } from './defaults.js';
export {
  validateCRD,
  validateCRDUpdate,
  validateCRDStatusUpdate,
  validateCRDStatus,
  validateStoredVersions,
  validateAPIApproval,
  validatePreserveUnknownFields,
  type CRDValidationOptions,
  type StructuralSchemaValidator,
} from './validation.js';
export * from './names.js';
export { canonicalize, DESCRIPTORS } from './wire-codec.js';
