/**
 * What a server writes at start: the objects every cluster has (initial namespaces, system priority
 * classes, mandatory flow-control objects, the kubernetes Service), where the kubernetes Service's
 * endpoints are, and the CRDs of resources defined in TypeScript.
 */
import { MANDATORY_FLOW_SCHEMAS, MANDATORY_PRIORITY_LEVELS } from '../apis/flowcontrol/bootstrap.js';
import { INITIAL_NAMESPACES } from '../apis/core/namespaces.js';
import { SYSTEM_PRIORITY_CLASSES } from '../apis/core/pods.js';
import { RBAC_GROUP, type RbacStores } from '../apis/rbac/authorizer.js';
import type { KObject } from '../api/object.js';
import { StatusError } from '../machinery/status.js';
import type { ApiRegistry } from '../registry/registry.js';
import type { RestStore } from '../registry/store.js';
import type { Client } from '../sdk/client.js';
import type { ResourceDefinition } from '../sdk/resource.js';
import { deepEqual } from '../util/deep-equal.js';

/** The stores of RBAC's four kinds. */
export function rbacStores(registry: ApiRegistry): RbacStores {
  const store = (resource: string) => registry.lookup(RBAC_GROUP, 'v1', resource)!.store as RestStore;
  return { roles: store('roles'), roleBindings: store('rolebindings'), clusterRoles: store('clusterroles'), clusterRoleBindings: store('clusterrolebindings') };
}

/** The objects every cluster has: the initial namespaces and the default/kubernetes service. */
export async function bootstrap(namespaces: RestStore, registry: ApiRegistry, kubernetesIP: string): Promise<void> {
  // Independent writes, made together (the embedded store commits them as one group).
  const creates: Array<Promise<unknown>> = [];
  const create = (store: RestStore, namespace: string | undefined, obj: KObject) => creates.push(store.create(namespace, obj).catch(ignoreExists));
  for (const name of INITIAL_NAMESPACES) create(namespaces, undefined, { kind: 'Namespace', apiVersion: 'v1', metadata: { name } });
  const priorityClasses = registry.lookup('scheduling.k8s.io', 'v1', 'priorityclasses')!.store;
  for (const c of SYSTEM_PRIORITY_CLASSES) {
    create(priorityClasses, undefined, { kind: 'PriorityClass', apiVersion: 'scheduling.k8s.io/v1', metadata: { name: c.name }, value: c.value, description: c.description });
  }
  for (const [resource, objects] of [['prioritylevelconfigurations', MANDATORY_PRIORITY_LEVELS], ['flowschemas', MANDATORY_FLOW_SCHEMAS]] as const) {
    const store = registry.lookup('flowcontrol.apiserver.k8s.io', 'v1', resource)!.store;
    for (const o of objects) create(store, undefined, structuredClone(o));
  }
  create(registry.lookup('', 'v1', 'services')!.store, 'default', {
    kind: 'Service',
    apiVersion: 'v1',
    metadata: { name: 'kubernetes', namespace: 'default', labels: { component: 'apiserver', provider: 'kubernetes' } },
    spec: { type: 'ClusterIP', clusterIP: kubernetesIP, clusterIPs: [kubernetesIP], ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: 6443 }], sessionAffinity: 'None' },
  });
  await Promise.all(creates);
}

/**
 * The `default/kubernetes` Service's Endpoints and EndpointSlice, and its targetPort, naming where this
 * server listens (upstream's master endpoint reconciler). Written at every start: the port may differ.
 */
export async function publishMasterEndpoints(registry: ApiRegistry, bindAddress: string, port: number): Promise<void> {
  const ip = bindAddress === '0.0.0.0' ? '127.0.0.1' : bindAddress === '::' ? '::1' : bindAddress;
  const portSpec = { name: 'https', port, protocol: 'TCP' };
  const meta = (labels: Record<string, string>) => ({ name: 'kubernetes', namespace: 'default', labels });
  const upsert = (group: string, resource: string, make: (old: KObject | undefined) => KObject) =>
    registry.lookup(group, 'v1', resource)!.store.update('default', 'kubernetes', (old) => make(old), { allowCreate: true });
  await upsert('', 'endpoints', (old) => ({
    kind: 'Endpoints',
    apiVersion: 'v1',
    metadata: { ...(old?.metadata ?? {}), ...meta({ 'endpointslice.kubernetes.io/skip-mirror': 'true' }) },
    subsets: [{ addresses: [{ ip }], ports: [portSpec] }],
  }));
  await upsert('discovery.k8s.io', 'endpointslices', (old) => ({
    kind: 'EndpointSlice',
    apiVersion: 'discovery.k8s.io/v1',
    metadata: { ...(old?.metadata ?? {}), ...meta({ 'kubernetes.io/service-name': 'kubernetes' }) },
    addressType: ip.includes(':') ? 'IPv6' : 'IPv4',
    endpoints: [{ addresses: [ip], conditions: { ready: true } }],
    ports: [portSpec],
  }));
  await upsert('', 'services', (old) => {
    if (!old) throw new Error('the kubernetes Service is missing');
    return { ...old, spec: { ...old.spec, ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: port }] } };
  });
}

function ignoreExists(err: { code?: number }): void {
  if (err.code !== 409) throw err;
}

/**
 * Each defined resource's CRD as its definition says, created or replaced (served when this returns). Replicas
 * starting together race for the same CRDs: a create or update that loses (409) reads again and retries.
 */
export async function writeDefinedCrds(client: Client, resources: ResourceDefinition<unknown>[]): Promise<void> {
  const crdClient = client.resource({ group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions' });
  const conflict = (err: unknown) => err instanceof StatusError && err.code === 409;
  for (const r of resources) {
    const name = r.crd.metadata.name as string;
    for (let attempt = 0; ; attempt++) {
      try {
        let current: KObject | undefined;
        try {
          current = await crdClient.get(undefined, name);
        } catch (err) {
          if (!(err instanceof StatusError) || err.code !== 404) throw err;
        }
        if (!current) await crdClient.create(undefined, r.crd);
        else {
          const wanted = { ...current, metadata: { ...current.metadata, labels: { ...current.metadata.labels, ...r.crd.metadata.labels } }, spec: { ...current.spec, ...r.crd.spec } };
          if (!deepEqual(wanted, current)) await crdClient.update(undefined, name, wanted);
        }
        break;
      } catch (err) {
        if (!conflict(err) || attempt >= 10) throw err;
      }
    }
  }
}
