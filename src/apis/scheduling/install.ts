/** The scheduling.k8s.io group's resources: its rows of the built-in table (see resource-table.ts). */
import { priorityClassPrinter } from '../../printing/index.js';
import { res, plain, type BuiltinResource } from '../resource-table.js';

/** The resources of scheduling.k8s.io kapi serves. */
export const SCHEDULING_RESOURCES: BuiltinResource[] = [
  res('scheduling.k8s.io', 'v1', 'priorityclasses', 'PriorityClass', false, { printer: priorityClassPrinter, shortNames: ['pc'], strategy: plain }),
];
