/**
 * Resolving a webhook's service reference the way kube-apiserver's endpoint
 * routing does: the Service's port (443 by default) maps to a port of its
 * Endpoints, and the first ready address serves. A webhook running anywhere
 * reachable can be used by storing a Service and Endpoints that point at it.
 */
import { errors } from '../../machinery/status.js';
import type { RestStore } from '../../registry/store.js';
import type { KObject } from '../../api/object.js';
import type { ServiceReference } from './webhook.js';

export function serviceResolver(services: RestStore, endpoints: RestStore) {
  return async (ref: ServiceReference): Promise<{ host: string; port: number }> => {
    const port = ref.port ?? 443;
    const svc: KObject = await services.get(ref.namespace, ref.name).catch(() => {
      throw errors.serviceUnavailable(`service "${ref.namespace}/${ref.name}" not found`);
    });
    const svcPort = (svc.spec?.ports ?? []).find((p: KObject) => p.port === port);
    if (!svcPort) throw errors.serviceUnavailable(`no service port ${port} found for service "${ref.name}"`);
    const eps: KObject | undefined = await endpoints.get(ref.namespace, ref.name).catch(() => undefined);
    for (const subset of eps?.subsets ?? []) {
      const address = (subset.addresses ?? [])[0];
      if (!address?.ip) continue;
      const ports: KObject[] = subset.ports ?? [];
      const epPort = ports.length === 1 ? ports[0] : ports.find((p) => p.name === svcPort.name);
      if (epPort) return { host: address.ip, port: epPort.port };
    }
    throw errors.serviceUnavailable(`service "${ref.namespace}/${ref.name}" has no endpoints`);
  };
}
