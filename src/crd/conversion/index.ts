/** Choosing a CRD's converter: an in-process one registered for it, else its spec.conversion (None or Webhook). */
import type { KObject } from '../../api/object.js';
import { inProcessConverter } from './in-process.js';
import { noneConverter } from './none.js';
import type { ConvertFunction, CrConverter } from './types.js';
import { webhookConverter, type ServiceResolver } from './webhook.js';

export type { ConvertFunction, CrConverter } from './types.js';
export { ConversionCache } from './versioned.js';

export interface ConversionOptions {
  /** In-process converters by CRD name (`<plural>.<group>`). */
  converters?: Record<string, ConvertFunction>;
  resolveService: ServiceResolver;
  webhookTimeoutMs: number;
}

export function converterFactory(opts: ConversionOptions): (crd: KObject) => CrConverter {
  return (crd) => {
    const own = opts.converters?.[crd.metadata.name];
    if (own) return inProcessConverter(crd.metadata.name, own);
    const conversion = crd.spec.conversion;
    if (conversion?.strategy === 'Webhook' && conversion.webhook?.clientConfig) {
      return webhookConverter(
        {
          group: crd.spec.group,
          kind: crd.spec.names.kind,
          clientConfig: conversion.webhook.clientConfig,
          conversionReviewVersions: conversion.webhook.conversionReviewVersions ?? ['v1'],
        },
        opts.resolveService,
        opts.webhookTimeoutMs,
      );
    }
    return noneConverter;
  };
}
