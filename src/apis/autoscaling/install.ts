/** The autoscaling group's resources: its rows of the built-in table (see resource-table.ts). */
import { horizontalPodAutoscalerPrinter } from '../../printing/index.js';
import { res, withStatus, type BuiltinResource } from '../resource-table.js';
import type { KObject } from '../../api/object.js';
import { hpaToV1, hpaToV2 } from './convert.js';

/** Make `obj` (a freshly decoded object) into `other`, in place. */
function replaceWith(obj: KObject, other: KObject): void {
  for (const k of Object.keys(obj)) delete obj[k];
  Object.assign(obj, other);
}

/** The resources of autoscaling kapi serves. */
export const AUTOSCALING_RESOURCES: BuiltinResource[] = [
  // HorizontalPodAutoscalers are stored as autoscaling/v2 (objects written as v1 by older kapi are converted as they are read).
  res('autoscaling', 'v2', 'horizontalpodautoscalers', 'HorizontalPodAutoscaler', true, { printer: horizontalPodAutoscalerPrinter,
    shortNames: ['hpa'],
    categories: ['all'],
    status: true,
    strategy: {
      ...withStatus,
      onRead(obj) {
        if (obj.apiVersion !== 'autoscaling/v1') return false;
        replaceWith(obj, hpaToV2(obj));
        return true;
      },
    },
  }),
  res('autoscaling', 'v1', 'horizontalpodautoscalers', 'HorizontalPodAutoscaler', true, { printer: horizontalPodAutoscalerPrinter,
    shortNames: ['hpa'],
    categories: ['all'],
    status: true,
    storedAs: { group: 'autoscaling', version: 'v2', resource: 'horizontalpodautoscalers', toVersion: hpaToV1, toStorage: hpaToV2 },
  }),
];
