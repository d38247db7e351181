/**
 * The strategy of custom resources: generation follows every change outside
 * metadata (and status, when the version has a status subresource), updates
 * must name the resourceVersion they replace, PUT never creates.
 */
import type { Strategy } from '../registry/types.js';

export function customResourceStrategy(opts: { statusSubresource: boolean }): Strategy {
  return {
    generation: 'spec',
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: false,
    resetFieldsOnMainEndpoint: opts.statusSubresource ? ['status'] : [],
    prepareForCreate(obj) {
      if (opts.statusSubresource) delete obj.status;
    },
  };
}
