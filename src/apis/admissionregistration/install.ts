/** The admissionregistration.k8s.io group's resources: its rows of the built-in table (see resource-table.ts). */
import { admissionPolicyBindingPrinter, admissionPolicyPrinter, webhookConfigurationPrinter } from '../../printing/index.js';
import { res, plain, type BuiltinResource } from '../resource-table.js';
import { admissionPolicyStrategy, mutatingPolicyStrategy, webhookConfigurationStrategy } from './validation.js';

/** The resources of admissionregistration.k8s.io kapi serves. */
export const ADMISSIONREGISTRATION_RESOURCES: BuiltinResource[] = [
  res('admissionregistration.k8s.io', 'v1', 'validatingwebhookconfigurations', 'ValidatingWebhookConfiguration', false, { printer: webhookConfigurationPrinter, categories: ['api-extensions'], strategy: webhookConfigurationStrategy(false) }),
  res('admissionregistration.k8s.io', 'v1', 'mutatingwebhookconfigurations', 'MutatingWebhookConfiguration', false, { printer: webhookConfigurationPrinter, categories: ['api-extensions'], strategy: webhookConfigurationStrategy(true) }),
  res('admissionregistration.k8s.io', 'v1', 'validatingadmissionpolicies', 'ValidatingAdmissionPolicy', false, { printer: admissionPolicyPrinter, categories: ['api-extensions'], status: true, strategy: admissionPolicyStrategy }),
  res('admissionregistration.k8s.io', 'v1', 'validatingadmissionpolicybindings', 'ValidatingAdmissionPolicyBinding', false, { printer: admissionPolicyBindingPrinter, categories: ['api-extensions'], strategy: plain }),
  res('admissionregistration.k8s.io', 'v1', 'mutatingadmissionpolicies', 'MutatingAdmissionPolicy', false, { printer: admissionPolicyPrinter, categories: ['api-extensions'], strategy: mutatingPolicyStrategy }),
  res('admissionregistration.k8s.io', 'v1', 'mutatingadmissionpolicybindings', 'MutatingAdmissionPolicyBinding', false, { printer: admissionPolicyBindingPrinter, categories: ['api-extensions'], strategy: plain }),
];
