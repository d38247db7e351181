/** The policy group's resources: its rows of the built-in table (see resource-table.ts). */
import { podDisruptionBudgetPrinter } from '../../printing/index.js';
import { res, workload, type BuiltinResource } from '../resource-table.js';

/** The resources of policy kapi serves. */
export const POLICY_RESOURCES: BuiltinResource[] = [
  res('policy', 'v1', 'poddisruptionbudgets', 'PodDisruptionBudget', true, { printer: podDisruptionBudgetPrinter, shortNames: ['pdb'], status: true, strategy: workload }),
];
