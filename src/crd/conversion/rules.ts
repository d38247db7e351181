/**
 * What a converter may change, as apiextensions-apiserver's webhook converter
 * enforces it: one object back per object sent, in the desired apiVersion, with
 * the same kind, name, namespace and uid; of metadata, only labels and
 * annotations are taken from the result, the rest is restored from the original.
 */
import type { KObject } from '../../api/object.js';

export class ConversionRuleError extends Error {}

export function checkConverted(original: KObject, converted: unknown, desiredApiVersion: string): KObject {
  if (converted === null || typeof converted !== 'object' || Array.isArray(converted)) throw new ConversionRuleError('converted object is not an object');
  const c = converted as KObject;
  if (c.apiVersion !== desiredApiVersion) {
    throw new ConversionRuleError(`invalid converted object: expected apiVersion "${desiredApiVersion}", got "${c.apiVersion}"`);
  }
  if (c.kind !== original.kind) throw new ConversionRuleError(`invalid converted object: expected kind "${original.kind}", got "${c.kind}"`);
  const om = original.metadata ?? {};
  const cm = c.metadata ?? {};
  if (cm.uid !== om.uid) throw new ConversionRuleError(`invalid converted object: must have the same UID (${om.uid}), got ${cm.uid}`);
  if (cm.name !== om.name) throw new ConversionRuleError(`invalid converted object: must have the same name: ${om.name}, got ${cm.name}`);
  if ((cm.namespace ?? '') !== (om.namespace ?? '')) throw new ConversionRuleError(`invalid converted object: must have the same namespace: ${om.namespace ?? ''}, got ${cm.namespace ?? ''}`);
  const metadata: KObject = { ...om };
  for (const k of ['labels', 'annotations']) {
    if (cm[k] === undefined || cm[k] === null) delete metadata[k];
    else metadata[k] = cm[k];
  }
  return { ...c, metadata };
}
