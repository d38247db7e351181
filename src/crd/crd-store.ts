/**
 * The REST store of CustomResourceDefinitions: the generic store, plus a wait
 * for the CRD runtime after each write from the API, so a CRD's resources are
 * served (or no longer served) when the request returns.
 */
import { RestStore, type DeleteResult, type UpdateResult } from '../registry/store.js';
import type { DeleteOptions, TryUpdate, WriteOptions } from '../registry/types.js';
import type { KObject } from '../api/object.js';

export interface CrdWriteOptions extends WriteOptions {
  /** A write by the CRD runtime itself, which must not wait for itself. */
  fromRuntime?: boolean;
}

export class CrdRestStore extends RestStore {
  /** Set by the CRD runtime: reconcile this CRD and resolve when done. */
  sync?: (name: string) => Promise<void>;

  override async create(namespace: string | undefined, obj: KObject, opts: CrdWriteOptions = {}): Promise<KObject> {
    const created = await super.create(namespace, obj, opts);
    return this.settled(created, opts);
  }

  override async update(
    namespace: string | undefined,
    name: string,
    tryUpdate: TryUpdate,
    opts: CrdWriteOptions = {},
  ): Promise<UpdateResult> {
    const res = await super.update(namespace, name, tryUpdate, opts);
    return { ...res, object: await this.settled(res.object, opts) };
  }

  override async delete(namespace: string | undefined, name: string, opts: DeleteOptions & CrdWriteOptions = {}): Promise<DeleteResult> {
    const res = await super.delete(namespace, name, opts);
    return { ...res, object: await this.settled(res.object, opts) };
  }

  /** Wait for the runtime, then answer with the CRD as it now stands (with its conditions). */
  private async settled(obj: KObject, opts: CrdWriteOptions): Promise<KObject> {
    // The server's own writes (the CRD finalizer's, from inside a reconcile) do not wait for the runtime.
    if (opts.dryRun || opts.fromRuntime || opts.loopback || !this.sync) return obj;
    await this.sync(obj.metadata.name);
    return this.get(undefined, obj.metadata.name).catch(() => obj);
  }
}
