/**
 * Server-side apply and managed fields: the public surface of src/apply.
 * Handlers call updateManagedFields on every create, update and non-apply
 * patch, and applyObject for `application/apply-patch+yaml` patches, inside
 * the store's compare-and-swap update; see each function for its contract.
 */
export {
  applyObject,
  applyObject as apply,
  applyObjectInTurns,
  gvkString,
  resetFieldsFor,
  updateManagedFields,
  updateManagedFieldsInTurns,
  ANCIENT_CHANGES_MANAGER,
  BEFORE_FIRST_APPLY_MANAGER,
  MAX_UPDATE_MANAGERS,
  type ApplyOptions,
  type FieldManagerOptions,
} from './field-manager.js';
export { conflictError, conflictMessage, printManager, FIELD_MANAGER_CONFLICT } from './conflict.js';
export { FieldSet, FieldsV1Error } from './field-set.js';
export { LAST_APPLIED_ANNOTATION } from './last-applied.js';
export {
  decodeManagedFields,
  encodeManagedFields,
  isResetManagedFields,
  managerIdentifier,
  ManagedFieldsError,
  type Managed,
  type VersionedSet,
} from './managed-fields.js';
export { fieldElement, indexElement, keyElement, valueElement, pathString, type Path, type PathElement } from './path-element.js';
export {
  managerOrUserAgent,
  parseApplyBody,
  applyBodyError,
  checkApplyBody,
  parseForceParam,
  patchOptionsErrors,
  prefixFromUserAgent,
  validatePatchOptions,
  validateWriteOptions,
  FIELD_MANAGER_MAX_LENGTH,
  type PatchKind,
  type PatchOptionsInput,
} from './request.js';
export { typeFromDefinition, typeFromSchema, type JsonSchema, type SchemaTypeOptions } from './schema-types.js';
export { builtinApplyType, typeFromGoStruct } from './go-struct-types.js';
export { toFieldSet, validate } from './typed.js';
export type { VersionConverter } from './updater.js';
export { compare, type Comparison } from './compare.js';
export { merge, MergeError } from './merge.js';
export {
  ATOMIC_ANY,
  atomOf,
  BUILTIN_OBJECT,
  DEDUCED,
  DEDUCED_OBJECT,
  OBJECT_META,
  listType,
  mapType,
  scalarType,
  type AnyType,
  type ListType,
  type MapType,
  type ScalarType,
  type TypeInfo,
} from './types.js';
