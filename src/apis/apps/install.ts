/** The apps group's resources: its rows of the built-in table (see resource-table.ts). */
import { controllerRevisionPrinter, daemonSetPrinter, deploymentPrinter, replicaSetPrinter, statefulSetPrinter } from '../../printing/index.js';
import { res, WORKLOAD_SCALE, workload, plain, type BuiltinResource } from '../resource-table.js';
import { controllerRevisionValidation, workloadValidation } from './validation.js';
import { withTemplateGeneration } from './daemonset.js';

/** The resources of apps kapi serves. */
export const APPS_RESOURCES: BuiltinResource[] = [
  // The StatefulSet and DaemonSet controllers' history (kube-controller-manager's; kapi keeps it as any store).
  res('apps', 'v1', 'controllerrevisions', 'ControllerRevision', true, { printer: controllerRevisionPrinter, strategy: controllerRevisionValidation(plain) }),
  res('apps', 'v1', 'daemonsets', 'DaemonSet', true, { printer: daemonSetPrinter, shortNames: ['ds'], categories: ['all'], status: true, strategy: withTemplateGeneration(workloadValidation(workload, 'daemonset')) }),
  res('apps', 'v1', 'deployments', 'Deployment', true, { printer: deploymentPrinter, shortNames: ['deploy'], categories: ['all'], status: true, scale: WORKLOAD_SCALE, strategy: workloadValidation(workload, 'deployment', { replicas: true }) }),
  res('apps', 'v1', 'replicasets', 'ReplicaSet', true, { printer: replicaSetPrinter, shortNames: ['rs'], categories: ['all'], status: true, scale: WORKLOAD_SCALE, strategy: workloadValidation(workload, 'deployment', { replicas: true }) }),
  res('apps', 'v1', 'statefulsets', 'StatefulSet', true, { printer: statefulSetPrinter, shortNames: ['sts'], categories: ['all'], status: true, scale: WORKLOAD_SCALE, strategy: workloadValidation(workload, 'statefulset', { replicas: true }) }),
];
