/** Converters for the conversion benchmark, loaded by `kapi serve --converters`: v1beta1 spec.value <-> v1 spec.data. */
import type { KObject } from '../../src/api/object.js';

export function rename(obj: KObject, to: string): KObject {
  const spec = to.endsWith('/v1') ? { ...obj.spec, data: obj.spec?.value, value: undefined } : { ...obj.spec, value: obj.spec?.data, data: undefined };
  return { ...obj, apiVersion: to, spec };
}

export default { 'inprocs.bench.example.com': rename };
