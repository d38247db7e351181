/**
 * The default of a class kind (StorageClass, IngressClass), as upstream picks it: the classes annotated as default
 * (`"true"`), the newest first (then by name), so that adding a new default takes over without removing the old.
 */
import type { KObject } from '../api/object.js';

export function defaultClass(classes: readonly KObject[], annotations: readonly string[]): KObject | undefined {
  const defaults = classes.filter((c) => annotations.some((a) => c.metadata?.annotations?.[a] === 'true'));
  defaults.sort((a, b) => {
    const ta = String(a.metadata?.creationTimestamp ?? '');
    const tb = String(b.metadata?.creationTimestamp ?? '');
    if (ta !== tb) return ta < tb ? 1 : -1;
    return String(a.metadata?.name) < String(b.metadata?.name) ? -1 : 1;
  });
  return defaults[0];
}
