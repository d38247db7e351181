/** The discovery.k8s.io group's resources: its rows of the built-in table (see resource-table.ts). */
import { endpointSlicePrinter } from '../../printing/index.js';
import { res, plain, type BuiltinResource } from '../resource-table.js';

/** The resources of discovery.k8s.io kapi serves. */
export const DISCOVERY_RESOURCES: BuiltinResource[] = [
  res('discovery.k8s.io', 'v1', 'endpointslices', 'EndpointSlice', true, { printer: endpointSlicePrinter, strategy: plain }),
];
