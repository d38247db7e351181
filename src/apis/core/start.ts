/**
 * The core group's start hooks: the system namespaces (upstream's start-system-namespaces-controller), and the
 * `default/kubernetes` Service with its Endpoints and EndpointSlice naming where this server listens (its
 * bootstrap-controller, the master endpoint reconciler; written at every start: the port may differ).
 */
import type { KObject } from '../../api/object.js';
import { createMissing, type StartHook } from '../start-hooks.js';
import { INITIAL_NAMESPACES } from './namespaces.js';

export const CORE_START_HOOKS: StartHook[] = [
  {
    name: 'start-system-namespaces-controller',
    run: (ctx) => createMissing(ctx.store('', 'namespaces'), INITIAL_NAMESPACES.map((name) => ({ kind: 'Namespace', apiVersion: 'v1', metadata: { name } }))),
  },
  {
    name: 'bootstrap-controller',
    run: (ctx) =>
      createMissing(ctx.store('', 'services'), [
        {
          kind: 'Service',
          apiVersion: 'v1',
          metadata: { name: 'kubernetes', namespace: 'default', labels: { component: 'apiserver', provider: 'kubernetes' } },
          spec: { type: 'ClusterIP', clusterIP: ctx.kubernetesIP, clusterIPs: [ctx.kubernetesIP], ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: 6443 }], sessionAffinity: 'None' },
        },
      ]),
    async listening(ctx, { bindAddress, port }) {
      const ip = bindAddress === '0.0.0.0' ? '127.0.0.1' : bindAddress === '::' ? '::1' : bindAddress;
      const portSpec = { name: 'https', port, protocol: 'TCP' };
      const meta = (old: KObject | undefined, labels: Record<string, string>) => ({ ...(old?.metadata ?? {}), name: 'kubernetes', namespace: 'default', labels });
      const upsert = (group: string, resource: string, make: (old: KObject | undefined) => KObject) => ctx.store(group, resource).update('default', 'kubernetes', (old) => make(old), { allowCreate: true });
      // Three objects, written together (one commit).
      await Promise.all([
        upsert('', 'endpoints', (old) => ({
          kind: 'Endpoints',
          apiVersion: 'v1',
          metadata: meta(old, { 'endpointslice.kubernetes.io/skip-mirror': 'true' }),
          subsets: [{ addresses: [{ ip }], ports: [portSpec] }],
        })),
        upsert('discovery.k8s.io', 'endpointslices', (old) => ({
          kind: 'EndpointSlice',
          apiVersion: 'discovery.k8s.io/v1',
          metadata: meta(old, { 'kubernetes.io/service-name': 'kubernetes' }),
          addressType: ip.includes(':') ? 'IPv6' : 'IPv4',
          endpoints: [{ addresses: [ip], conditions: { ready: true } }],
          ports: [portSpec],
        })),
        upsert('', 'services', (old) => {
          if (!old) throw new Error('the kubernetes Service is missing');
          return { ...old, spec: { ...old.spec, ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: port }] } };
        }),
      ]);
    },
  },
];
