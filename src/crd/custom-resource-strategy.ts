/**
 * The strategy of custom resources: generation follows every change outside
 * metadata (and status, when the version has a status subresource), updates
 * must name the resourceVersion they replace, PUT never creates, and with a
 * scale subresource the replica fields are checked on every write.
 */
import type { KObject, Strategy } from '../registry/types.js';
import { validateScaleFields, type ScaleConfig } from './scale.js';

export interface CustomResourceOptions {
  statusSubresource: boolean;
  scale?: ScaleConfig;
}

export function customResourceStrategy(opts: CustomResourceOptions): Strategy {
  const scale = opts.scale;
  return {
    generation: 'spec',
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: false,
    resetFieldsOnMainEndpoint: opts.statusSubresource ? ['status'] : [],
    prepareForCreate(obj) {
      if (opts.statusSubresource) delete obj.status;
    },
    validate: scale ? (obj) => validateScaleFields(obj, scale) : undefined,
    validateUpdate: scale ? (obj) => validateScaleFields(obj, scale) : undefined,
  };
}

/** The strategy options a CRD gives its resource (status and scale of the storage version, or of any version that has them). */
export function customResourceOptions(crd: KObject): CustomResourceOptions {
  const versions: KObject[] = crd.spec.versions ?? [];
  const ordered = [...versions.filter((v) => v.storage), ...versions.filter((v) => !v.storage)];
  return {
    statusSubresource: ordered.some((v) => v.subresources?.status),
    scale: ordered.find((v) => v.subresources?.scale)?.subresources.scale,
  };
}
