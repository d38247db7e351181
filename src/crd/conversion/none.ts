/** Conversion strategy None: only apiVersion changes. */
import type { KObject } from '../../api/object.js';
import type { CrConverter } from './types.js';

export function setApiVersion(obj: KObject, apiVersion: string): KObject {
  return obj.apiVersion === apiVersion ? obj : { ...obj, apiVersion };
}

export const noneConverter: CrConverter = {
  trivial: true,
  async convert(objects, desiredApiVersion) {
    return objects.map((o) => setApiVersion(o, desiredApiVersion));
  },
};
