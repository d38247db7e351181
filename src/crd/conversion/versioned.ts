/**
 * Conversions of one custom resource, remembered per stored object and version.
 * Cached objects are immutable and shared, so a watch event or a hot object is
 * converted once per version for every reader. Handlers call `prepare` (async:
 * webhooks, in-process converters) before the synchronous `toVersion`.
 */
import { errors } from '../../machinery/status.js';
import type { KObject } from '../../api/object.js';
import { setApiVersion } from './none.js';
import type { CrConverter } from './types.js';

export class ConversionCache {
  private readonly memo = new WeakMap<KObject, Map<string, KObject>>();

  constructor(readonly converter: CrConverter) {}

  async prepare(objects: KObject[], apiVersion: string): Promise<void> {
    if (this.converter.trivial) return;
    const todo = objects.filter((o) => o.apiVersion !== apiVersion && !this.memo.get(o)?.has(apiVersion));
    if (todo.length === 0) return;
    const converted = await this.converter.convert(todo, apiVersion);
    todo.forEach((o, i) => {
      let byVersion = this.memo.get(o);
      if (!byVersion) this.memo.set(o, (byVersion = new Map()));
      byVersion.set(apiVersion, converted[i]);
    });
  }

  toVersion(obj: KObject, apiVersion: string): KObject {
    if (obj.apiVersion === apiVersion) return obj;
    if (this.converter.trivial) return setApiVersion(obj, apiVersion);
    const converted = this.memo.get(obj)?.get(apiVersion);
    if (!converted) throw errors.internal(`${obj.metadata?.name}: not converted to ${apiVersion} before use`);
    return converted;
  }

  async toStorage(obj: KObject, storageApiVersion: string): Promise<KObject> {
    if (obj.apiVersion === storageApiVersion) return obj;
    if (this.converter.trivial) return setApiVersion(obj, storageApiVersion);
    return (await this.converter.convert([obj], storageApiVersion))[0];
  }
}
