/** The scheduling.k8s.io group's resources (its rows of the built-in table, see resource-table.ts) and start hook. */
import { priorityClassPrinter } from '../../printing/index.js';
import { res, plain, type BuiltinResource } from '../resource-table.js';
import { createMissing, type StartHook } from '../start-hooks.js';
import { SYSTEM_PRIORITY_CLASSES } from '../core/pods.js';

/** The resources of scheduling.k8s.io kapi serves. */
export const SCHEDULING_RESOURCES: BuiltinResource[] = [
  res('scheduling.k8s.io', 'v1', 'priorityclasses', 'PriorityClass', false, { printer: priorityClassPrinter, shortNames: ['pc'], strategy: { ...plain, generation: 'create' } }),
];

/** scheduling/bootstrap-system-priority-classes: the priority classes every cluster has. */
export const SCHEDULING_START_HOOKS: StartHook[] = [
  {
    name: 'scheduling/bootstrap-system-priority-classes',
    run: (ctx) =>
      createMissing(
        ctx.store('scheduling.k8s.io', 'priorityclasses'),
        SYSTEM_PRIORITY_CLASSES.map((c) => ({ kind: 'PriorityClass', apiVersion: 'scheduling.k8s.io/v1', metadata: { name: c.name }, value: c.value, description: c.description })),
      ),
  },
];
