/** The flowcontrol.apiserver.k8s.io group's resources (its rows of the built-in table, see resource-table.ts) and start hook. */
import { flowSchemaPrinter, priorityLevelPrinter } from '../../printing/index.js';
import { res, withStatus, type BuiltinResource } from '../resource-table.js';
import { createMissing, type StartHook } from '../start-hooks.js';
import { MANDATORY_FLOW_SCHEMAS, MANDATORY_PRIORITY_LEVELS } from './bootstrap.js';

/** The resources of flowcontrol.apiserver.k8s.io kapi serves. */
export const FLOWCONTROL_RESOURCES: BuiltinResource[] = [
  res('flowcontrol.apiserver.k8s.io', 'v1', 'flowschemas', 'FlowSchema', false, { printer: flowSchemaPrinter, status: true, strategy: withStatus }),
  res('flowcontrol.apiserver.k8s.io', 'v1', 'prioritylevelconfigurations', 'PriorityLevelConfiguration', false, { printer: priorityLevelPrinter, status: true, strategy: withStatus }),
];

/** The mandatory configuration objects (the levels first: the schemas name them). */
export const FLOWCONTROL_START_HOOKS: StartHook[] = [
  {
    name: 'apiserver/bootstrap-system-flowcontrol-configuration',
    async run(ctx) {
      await createMissing(ctx.store('flowcontrol.apiserver.k8s.io', 'prioritylevelconfigurations'), MANDATORY_PRIORITY_LEVELS);
      await createMissing(ctx.store('flowcontrol.apiserver.k8s.io', 'flowschemas'), MANDATORY_FLOW_SCHEMAS);
    },
  },
];
