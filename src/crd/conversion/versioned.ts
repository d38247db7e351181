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
import { storedStateOf } from '../../registry/store.js';

export class ConversionCache {
  private readonly memo = new WeakMap<KObject, Map<string, KObject>>();
  /**
   * The latest conversions by object state (uid and resourceVersion) and version, for objects decoded anew for each
   * read (the watch cache keeps those not read lately as text): a webhook is not asked again for each list page.
   */
  private readonly byState = new Map<string, KObject>();

  constructor(readonly converter: CrConverter) {}

  async prepare(objects: KObject[], apiVersion: string): Promise<void> {
    if (this.converter.trivial) return;
    const todo = objects.filter((o) => o.apiVersion !== apiVersion && !this.memo.get(o)?.has(apiVersion) && !this.recall(o, apiVersion));
    if (todo.length === 0) return;
    const converted = await this.converter.convert(todo, apiVersion);
    todo.forEach((o, i) => {
      this.remember(o, apiVersion, converted[i]);
      const state = stateOf(o, apiVersion);
      if (state === undefined) return;
      this.byState.delete(state);
      this.byState.set(state, converted[i]);
      if (this.byState.size > CONVERSIONS_BY_STATE) this.byState.delete(this.byState.keys().next().value as string);
    });
  }

  private remember(o: KObject, apiVersion: string, converted: KObject): void {
    let byVersion = this.memo.get(o);
    if (!byVersion) this.memo.set(o, (byVersion = new Map()));
    byVersion.set(apiVersion, converted);
  }

  /** A conversion of the same state made for another copy of the object: remembered for this one too. */
  private recall(o: KObject, apiVersion: string): boolean {
    const state = stateOf(o, apiVersion);
    const converted = state === undefined ? undefined : this.byState.get(state);
    if (converted) this.remember(o, apiVersion, converted);
    return converted !== undefined;
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

/** Conversions kept by object state (the oldest dropped first). */
const CONVERSIONS_BY_STATE = 4096;

/**
 * `tag/uid/resourceVersion/version` of an object the watch cache decoded again from its text (storedStateOf: the tag
 * changes with how its store reads objects); undefined for any other (a dry run's, an admission copy).
 */
function stateOf(o: KObject, apiVersion: string): string | undefined {
  const tag = storedStateOf(o);
  if (tag === undefined) return undefined;
  const uid = o.metadata?.uid;
  const rv = o.metadata?.resourceVersion;
  return typeof uid === 'string' && uid && typeof rv === 'string' && rv ? `${tag}/${uid}/${rv}/${apiVersion}` : undefined;
}
