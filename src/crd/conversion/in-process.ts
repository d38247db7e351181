/** Converters written in TypeScript and registered with kapi: a version change without a network hop. */
import { deepCloneMutable } from '../../machinery/json.js';
import { errors } from '../../machinery/status.js';
import type { KObject } from '../../api/object.js';
import { checkConverted, ConversionRuleError } from './rules.js';
import type { ConvertFunction, CrConverter } from './types.js';

export function inProcessConverter(crdName: string, fn: ConvertFunction): CrConverter {
  return {
    trivial: false,
    async convert(objects, desiredApiVersion) {
      const out: KObject[] = [];
      for (const obj of objects) {
        if (obj.apiVersion === desiredApiVersion) {
          out.push(obj);
          continue;
        }
        try {
          // The converter's own copy, which it may change anywhere (managedFields entries too: they are frozen in the cache).
          out.push(checkConverted(obj, await fn(deepCloneMutable(obj), desiredApiVersion), desiredApiVersion));
        } catch (err) {
          const why = err instanceof ConversionRuleError ? err.message : `converter failed: ${(err as Error).message}`;
          throw errors.internal(`conversion for ${crdName} to ${desiredApiVersion} failed: ${why}`);
        }
      }
      return out;
    },
  };
}
