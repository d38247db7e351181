/** The coordination.k8s.io group's resources: its rows of the built-in table (see resource-table.ts). */
import { leasePrinter } from '../../printing/index.js';
import { res, plain, type BuiltinResource } from '../resource-table.js';

/** The resources of coordination.k8s.io kapi serves. */
export const COORDINATION_RESOURCES: BuiltinResource[] = [
  res('coordination.k8s.io', 'v1', 'leases', 'Lease', true, { printer: leasePrinter, strategy: plain }),
];
