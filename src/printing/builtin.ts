/**
 * Which table convertor a built-in resource uses, by group and plural resource
 * name: upstream's printer where kube-apiserver has one for a resource kapi
 * serves, else the default Name/Created At convertor (limitranges,
 * customresourcedefinitions, ...).
 */
import {
  configMapPrinter,
  defaultTableConvertor,
  endpointsPrinter,
  eventPrinter,
  leasePrinter,
  namespacePrinter,
  secretPrinter,
  serviceAccountPrinter,
  servicePrinter,
} from './builtin-core.js';
import {
  daemonSetPrinter,
  deploymentPrinter,
  nodePrinter,
  podPrinter,
  podTemplatePrinter,
  replicaSetPrinter,
  replicationControllerPrinter,
  resourceQuotaPrinter,
  statefulSetPrinter,
} from './builtin-workloads.js';
import {
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
  webhookConfigurationPrinter,
  admissionPolicyPrinter,
  admissionPolicyBindingPrinter,
  apiServicePrinter,
  priorityLevelPrinter,
  runtimeClassPrinter,
  storageClassPrinter,
} from './builtin-groups.js';
import type { TableConvertor } from './types.js';

const PRINTERS: Record<string, () => TableConvertor> = {
  '/namespaces': namespacePrinter,
  '/configmaps': configMapPrinter,
  '/secrets': secretPrinter,
  '/serviceaccounts': serviceAccountPrinter,
  '/services': servicePrinter,
  '/endpoints': endpointsPrinter,
  '/events': eventPrinter,
  '/pods': podPrinter,
  '/nodes': nodePrinter,
  '/replicationcontrollers': replicationControllerPrinter,
  '/podtemplates': podTemplatePrinter,
  '/resourcequotas': resourceQuotaPrinter,
  'apps/deployments': deploymentPrinter,
  'apps/replicasets': replicaSetPrinter,
  'apps/statefulsets': statefulSetPrinter,
  'apps/daemonsets': daemonSetPrinter,
  'coordination.k8s.io/leases': leasePrinter,
  'events.k8s.io/events': eventPrinter,
  '/persistentvolumes': persistentVolumePrinter,
  '/persistentvolumeclaims': persistentVolumeClaimPrinter,
  'batch/jobs': jobPrinter,
  'batch/cronjobs': cronJobPrinter,
  'rbac.authorization.k8s.io/rolebindings': bindingPrinter,
  'rbac.authorization.k8s.io/clusterrolebindings': bindingPrinter,
  'networking.k8s.io/ingresses': ingressPrinter,
  'networking.k8s.io/ingressclasses': ingressClassPrinter,
  'networking.k8s.io/networkpolicies': networkPolicyPrinter,
  'policy/poddisruptionbudgets': podDisruptionBudgetPrinter,
  'scheduling.k8s.io/priorityclasses': priorityClassPrinter,
  'admissionregistration.k8s.io/validatingwebhookconfigurations': webhookConfigurationPrinter,
  'admissionregistration.k8s.io/mutatingwebhookconfigurations': webhookConfigurationPrinter,
  'apiregistration.k8s.io/apiservices': apiServicePrinter,
  'admissionregistration.k8s.io/validatingadmissionpolicies': admissionPolicyPrinter,
  'admissionregistration.k8s.io/mutatingadmissionpolicies': admissionPolicyPrinter,
  'admissionregistration.k8s.io/validatingadmissionpolicybindings': admissionPolicyBindingPrinter,
  'admissionregistration.k8s.io/mutatingadmissionpolicybindings': admissionPolicyBindingPrinter,
  'storage.k8s.io/storageclasses': storageClassPrinter,
  'node.k8s.io/runtimeclasses': runtimeClassPrinter,
  'discovery.k8s.io/endpointslices': endpointSlicePrinter,
  'autoscaling/horizontalpodautoscalers': horizontalPodAutoscalerPrinter,
  'certificates.k8s.io/certificatesigningrequests': certificateSigningRequestPrinter,
  'flowcontrol.apiserver.k8s.io/flowschemas': flowSchemaPrinter,
  'flowcontrol.apiserver.k8s.io/prioritylevelconfigurations': priorityLevelPrinter,
};

const cache = new Map<string, TableConvertor>();

/** The table convertor of a built-in resource (group '' for the core group). */
export function builtinTableConvertor(group: string, resource: string): TableConvertor {
  const key = `${group}/${resource}`;
  let c = cache.get(key);
  if (!c) {
    c = (Object.prototype.hasOwnProperty.call(PRINTERS, key) ? PRINTERS[key] : defaultTableConvertor)();
    cache.set(key, c);
  }
  return c;
}

/** Whether upstream has a dedicated printer for the resource (otherwise tables show Name and Created At). */
export function hasBuiltinPrinter(group: string, resource: string): boolean {
  return Object.prototype.hasOwnProperty.call(PRINTERS, `${group}/${resource}`);
}
