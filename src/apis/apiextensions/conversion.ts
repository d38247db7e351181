/**
 * Whole-object conversion of CRDs between apiextensions.k8s.io/v1beta1 and v1, as
 * the API server does it: decode with the source version's defaults, convert
 * through the internal form, encode in the target version's canonical form.
 * Round trips are lossless for everything both versions can express.
 */
import { defaultV1, defaultV1beta1 } from './defaults.js';
import { internalToV1, internalToV1beta1, v1ToInternal, v1beta1ToInternal } from './internal.js';
import type { CustomResourceDefinitionV1, CustomResourceDefinitionV1beta1 } from '../../api/apiextensions.js';

export { internalToV1, internalToV1beta1, isV1beta1Object, toInternal, v1ToInternal, v1beta1ToInternal } from './internal.js';

/**
 * v1beta1 → v1. v1beta1 defaults apply first (scope Namespaced, versions from
 * `version`, conversion None, preserveUnknownFields true, ...); the top-level
 * validation, subresources and printer columns are copied into every version.
 */
export function v1beta1ToV1(obj: CustomResourceDefinitionV1beta1): CustomResourceDefinitionV1 {
  return internalToV1(v1beta1ToInternal(defaultV1beta1(obj)));
}

/**
 * v1 → v1beta1. v1 defaults apply first (as when reading from storage); values
 * identical across all versions move to the top level, `version` is versions[0].
 */
export function v1ToV1beta1(obj: CustomResourceDefinitionV1): CustomResourceDefinitionV1beta1 {
  return internalToV1beta1(v1ToInternal(defaultV1(obj)));
}
