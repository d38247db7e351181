/** The networking.k8s.io group's resources: its rows of the built-in table (see resource-table.ts). */
import { res, workload, plain, type BuiltinResource } from '../resource-table.js';

/** The resources of networking.k8s.io kapi serves. */
export const NETWORKING_RESOURCES: BuiltinResource[] = [
  res('networking.k8s.io', 'v1', 'ingresses', 'Ingress', true, { shortNames: ['ing'], status: true, strategy: workload }),
  res('networking.k8s.io', 'v1', 'ingressclasses', 'IngressClass', false, { strategy: plain }),
  res('networking.k8s.io', 'v1', 'networkpolicies', 'NetworkPolicy', true, { shortNames: ['netpol'], strategy: { ...plain, generation: 'spec' } }),
];
