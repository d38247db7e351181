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
import type { Manager } from '../sdk/controller.js';
import type { Informer } from '../sdk/informer.js';
import { deepEqual } from '../util/deep-equal.js';
import { isRecord } from '../util/json-object.js';

const KEY = { name: 'local' };
const SETTLE_MS = 200;
const API_SERVICES = { group: 'apiregistration.k8s.io', version: 'v1', resource: 'apiservices', namespaced: false };

export class APIServiceRegistration {
  private readonly apiServices: ResourceClient;
  private readonly informer: Informer;
  private readonly changed: () => void;
  private unwatch = () => {};

  /** Added to `manager` (whose APIService informer it reads); `client` writes. */
  constructor(manager: Manager, client: Client, private readonly registry: ApiRegistry) {
    this.apiServices = client.resource(API_SERVICES);
    this.informer = manager.informer(API_SERVICES);
    // One key for the whole set (a key is never synced twice at once), synced once after a burst of changes.
    const controller = manager.add({ name: 'apiservice-registration', for: API_SERVICES, predicates: [{ create: () => false, update: () => false, delete: () => false }], reconcile: () => this.sync() });
    const changed = (this.changed = () => controller.enqueueAfter(KEY, SETTLE_MS));
    this.informer.addHandlers({ added: changed, updated: changed, deleted: changed });
  }

  /** Once the manager's informers have listed: changes to what is served come in bursts (a CRD's versions,
   * several CRDs); the first sync comes shortly after, in the background (the first requests do not wait for
   * some twenty APIServices to be written). */
  start(): void {
    this.unwatch = this.registry.onChange(this.changed);
    this.changed();
  }

  stop(): void {
    this.unwatch();
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
      let have = this.informer.get(name);
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
    for (const have of this.informer.list()) {
      if (have.metadata.labels?.[AUTOMANAGED] && !isRecord(have.spec?.service) && !desired.has(have.metadata.name)) {
        await this.apiServices.delete(undefined, have.metadata.name).catch((err: { code?: number }) => {
          if (err.code !== 404) throw err;
        });
      }
    }
  }
}
