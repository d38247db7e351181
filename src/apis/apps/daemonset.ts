/**
 * A DaemonSet's template generation, as upstream keeps it: the internal `spec.templateGeneration`, which apps/v1
 * shows as the annotation `deprecated.daemonset.template.generation`. A create starts it at 1; an update keeps
 * the stored value whatever it sends, and adds one when the pod template changed.
 */
import type { KObject } from '../../api/object.js';
import type { Strategy } from '../../registry/types.js';
import { deepEqual } from '../../util/deep-equal.js';
import { isRecord } from '../../util/json-object.js';

export const TEMPLATE_GENERATION = 'deprecated.daemonset.template.generation';

/** The template generation an object carries (0 when none or not a number, as a zero internal field). */
function templateGeneration(obj: KObject): number {
  const value = obj.metadata?.annotations?.[TEMPLATE_GENERATION];
  const n = typeof value === 'string' && /^-?\d{1,15}$/.test(value) ? Number(value) : 0;
  return n;
}

function setTemplateGeneration(obj: KObject, n: number): void {
  const meta = (obj.metadata ??= {});
  const annotations = isRecord(meta.annotations) ? meta.annotations : (meta.annotations = {});
  annotations[TEMPLATE_GENERATION] = String(n);
}

const templateOf = (obj: KObject): unknown => (isRecord(obj.spec) ? obj.spec.template : undefined);

/** `base` with the DaemonSet strategy's template generation. */
export function withTemplateGeneration(base: Strategy): Strategy {
  return {
    ...base,
    prepareForCreate(obj, ctx) {
      base.prepareForCreate?.(obj, ctx);
      if (templateGeneration(obj) < 1) setTemplateGeneration(obj, 1);
    },
    prepareForUpdate(obj, old, ctx) {
      base.prepareForUpdate?.(obj, old, ctx);
      const kept = templateGeneration(old);
      setTemplateGeneration(obj, !ctx.subresource && !deepEqual(templateOf(obj), templateOf(old)) ? kept + 1 : kept);
    },
  };
}
