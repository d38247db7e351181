/**
 * The APIServices of what kapi serves itself, as kube-apiserver's autoregister and crdregistration
 * controllers keep them: one per served group-version (built-in, or a CRD's), with upstream's priorities, and
 * an Available condition of reason Local; an automanaged one whose group-version is no longer served goes.
 * APIServices that name a service (aggregated servers) are left alone.
 */
import { AUTOMANAGED, localAPIService, localAvailable } from '../apis/apiregistration/apiservice.js';
import type { ApiRegistry } from '../registry/registry.js';
import type { KObject } from '../api/object.js';
import type { Client, ResourceClient } from '../sdk/client.js';
import { informerQueue, type InformerQueue } from './informer-queue.js';
import { deepEqual } from '../util/deep-equal.js';
import { isRecord } from '../util/json-object.js';

const KEY = 'local';
const SETTLE_MS = 200;

export class APIServiceRegistration {
  private readonly loop: InformerQueue;
  private readonly apiServices: ResourceClient;
  private unwatch = () => {};

  constructor(client: Client, private readonly registry: ApiRegistry, log: (message: string) => void) {
    this.apiServices = client.resource({ group: 'apiregistration.k8s.io', version: 'v1', resource: 'apiservices' });
    // One key for the whole set (a key is never synced twice at once).
    this.loop = informerQueue(this.apiServices, 'apiservice registration', log, () => this.sync(), () => {
      const changed = () => this.loop.queue.addAfter(KEY, SETTLE_MS);
      return { added: changed, updated: changed, deleted: changed };
    });
  }

  async start(): Promise<void> {
    // Changes to what is served come in bursts (a CRD's versions, several CRDs): synced once after them.
    this.unwatch = this.registry.onChange(() => this.loop.queue.addAfter(KEY, SETTLE_MS));
    await this.loop.start();
    // Shortly after start, in the background: the first requests do not wait for some twenty APIServices to be written.
    this.loop.queue.addAfter(KEY, SETTLE_MS);
  }

  stop(): void {
    this.unwatch();
    this.loop.stop();
  }

  /** The local group-versions, each once (a CRD's if any of its resources is custom). */
  private desired(): Map<string, KObject> {
    const out = new Map<string, KObject>();
    for (const ep of this.registry.served()) {
      if (ep.proxied) continue; // an aggregated server's, registered by its own APIService
      const name = `${ep.version}.${ep.group}`;
      const custom = ep.custom && !out.has(name);
      if (!out.has(name) || custom) out.set(name, localAPIService(ep.group, ep.version, ep.custom));
    }
    return out;
  }

  private async sync(): Promise<void> {
    const desired = this.desired();
    const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    for (const [name, want] of desired) {
      let have = this.loop.informer.get(name);
      if (have && isRecord(have.spec?.service)) continue; // an aggregated server's: not ours to change
      if (!have) have = await this.apiServices.create(undefined, want);
      else if (!deepEqual(have.spec, want.spec) || have.metadata.labels?.[AUTOMANAGED] !== want.metadata.labels[AUTOMANAGED]) {
        have = await this.apiServices.update(undefined, name, { ...have, metadata: { ...have.metadata, labels: { ...have.metadata.labels, ...want.metadata.labels } }, spec: want.spec });
      }
      const available = (have.status?.conditions ?? []).find((c: KObject) => c.type === 'Available');
      if (available?.status !== 'True' || available.reason !== 'Local') {
        await this.apiServices.update(undefined, name, { ...have, status: { conditions: [localAvailable(now)] } }, 'status');
      }
    }
    for (const have of this.loop.informer.list()) {
      if (have.metadata.labels?.[AUTOMANAGED] && !isRecord(have.spec?.service) && !desired.has(have.metadata.name)) {
        await this.apiServices.delete(undefined, have.metadata.name).catch((err: { code?: number }) => {
          if (err.code !== 404) throw err;
        });
      }
    }
  }
}
