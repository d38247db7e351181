/** The batch group's resources: its rows of the built-in table (see resource-table.ts). */
import { cronJobPrinter, jobPrinter } from '../../printing/index.js';
import { res, workload, type BuiltinResource } from '../resource-table.js';
import { field } from '../../machinery/field-errors.js';
import type { Strategy } from '../../registry/types.js';
import { validatePodSpecContainers } from '../core/pod-spec-validation.js';
import { jobStrategy } from './jobs.js';

/** A CronJob's name leaves room for the suffix of its Jobs' names (ValidateCronJob: 52 characters). */
const cronJobStrategy: Strategy = {
  ...workload,
  validate: (cj) => [
    ...(typeof cj.metadata.name === 'string' && cj.metadata.name.length > 52 ? [field.invalid('metadata.name', cj.metadata.name, 'must be no more than 52 characters')] : []),
    ...validatePodSpecContainers(cj.spec?.jobTemplate?.spec?.template?.spec, 'spec.jobTemplate.spec.template.spec'),
  ],
};

/** The resources of batch kapi serves. */
export const BATCH_RESOURCES: BuiltinResource[] = [
  res('batch', 'v1', 'jobs', 'Job', true, { printer: jobPrinter, categories: ['all'], status: true, strategy: jobStrategy(workload) }),
  res('batch', 'v1', 'cronjobs', 'CronJob', true, { printer: cronJobPrinter, shortNames: ['cj'], categories: ['all'], status: true, strategy: cronJobStrategy }),
];
