/** The networking.k8s.io group's resources: its rows of the built-in table (see resource-table.ts). */
import { ingressClassPrinter, ingressPrinter, networkPolicyPrinter } from '../../printing/index.js';
import { res, workload, plain, type BuiltinResource } from '../resource-table.js';

/** The resources of networking.k8s.io kapi serves. */
export const NETWORKING_RESOURCES: BuiltinResource[] = [
  res('networking.k8s.io', 'v1', 'ingresses', 'Ingress', true, { printer: ingressPrinter, shortNames: ['ing'], status: true, strategy: workload }),
  res('networking.k8s.io', 'v1', 'ingressclasses', 'IngressClass', false, { printer: ingressClassPrinter, strategy: plain }),
  res('networking.k8s.io', 'v1', 'networkpolicies', 'NetworkPolicy', true, { printer: networkPolicyPrinter, shortNames: ['netpol'], strategy: { ...plain, generation: 'spec' } }),
];
