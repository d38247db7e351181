/** The node.k8s.io group's resources: its rows of the built-in table (see resource-table.ts). */
import { runtimeClassPrinter } from '../../printing/index.js';
import { res, plain, type BuiltinResource } from '../resource-table.js';

/** The resources of node.k8s.io kapi serves. */
export const NODE_RESOURCES: BuiltinResource[] = [
  res('node.k8s.io', 'v1', 'runtimeclasses', 'RuntimeClass', false, { printer: runtimeClassPrinter, strategy: plain }),
];
