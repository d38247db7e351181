/** The flowcontrol.apiserver.k8s.io group's resources: its rows of the built-in table (see resource-table.ts). */
import { flowSchemaPrinter, priorityLevelPrinter } from '../../printing/index.js';
import { res, withStatus, type BuiltinResource } from '../resource-table.js';

/** The resources of flowcontrol.apiserver.k8s.io kapi serves. */
export const FLOWCONTROL_RESOURCES: BuiltinResource[] = [
  res('flowcontrol.apiserver.k8s.io', 'v1', 'flowschemas', 'FlowSchema', false, { printer: flowSchemaPrinter, status: true, strategy: withStatus }),
  res('flowcontrol.apiserver.k8s.io', 'v1', 'prioritylevelconfigurations', 'PriorityLevelConfiguration', false, { printer: priorityLevelPrinter, status: true, strategy: withStatus }),
];
