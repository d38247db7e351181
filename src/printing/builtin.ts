/**
 * Upstream's printers of the built-in kinds kapi serves (each group's rows name theirs: apis/<group>/install.ts),
 * and the default Name/Created At convertor of resources without one (limitranges, customresourcedefinitions, ...).
 */
import { defaultTableConvertor } from './builtin-core.js';
import type { TableConvertor } from './types.js';

export {
  configMapPrinter,
  endpointsPrinter,
  eventPrinter,
  leasePrinter,
  namespacePrinter,
  secretPrinter,
  serviceAccountPrinter,
  servicePrinter,
} from './builtin-core.js';
export {
  daemonSetPrinter,
  deploymentPrinter,
  nodePrinter,
  podPrinter,
  podTemplatePrinter,
  controllerRevisionPrinter,
  replicaSetPrinter,
  replicationControllerPrinter,
  resourceQuotaPrinter,
  statefulSetPrinter,
} from './builtin-workloads.js';
export {
  admissionPolicyBindingPrinter,
  admissionPolicyPrinter,
  apiServicePrinter,
  bindingPrinter,
  certificateSigningRequestPrinter,
  cronJobPrinter,
  endpointSlicePrinter,
  flowSchemaPrinter,
  horizontalPodAutoscalerPrinter,
  ingressClassPrinter,
  ingressPrinter,
  jobPrinter,
  networkPolicyPrinter,
  persistentVolumeClaimPrinter,
  persistentVolumePrinter,
  podDisruptionBudgetPrinter,
  priorityClassPrinter,
  priorityLevelPrinter,
  runtimeClassPrinter,
  storageClassPrinter,
  webhookConfigurationPrinter,
} from './builtin-groups.js';

const made = new Map<() => TableConvertor, TableConvertor>();

/** The table convertor a printer makes (made once: servers share it), or the default one without a printer. */
export function tableConvertorOf(printer: (() => TableConvertor) | undefined): TableConvertor {
  const p = printer ?? defaultTableConvertor;
  let c = made.get(p);
  if (!c) made.set(p, (c = p()));
  return c;
}
