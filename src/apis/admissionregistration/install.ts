/** The admissionregistration.k8s.io group: its rows of the built-in table (see resource-table.ts) and its admission plugins. */
import { admissionPolicyBindingPrinter, admissionPolicyPrinter, webhookConfigurationPrinter } from '../../printing/index.js';
import { res, plain, type BuiltinResource } from '../resource-table.js';
import { admissionPolicyStrategy, mutatingPolicyStrategy, webhookConfigurationStrategy } from './validation.js';
import type { AdmissionContext, AdmissionPluginDefinition } from '../admission-plugins.js';
import type { AdmissionPlugin } from '../../registry/admission.js';
import type { RestStore } from '../../registry/store.js';
import { mutatingPolicyAdmission } from './mutating-policy-admission.js';
import { validatingPolicyAdmission } from './policy-admission.js';
import { webhookAdmission } from './webhook-admission.js';

/** The resources of admissionregistration.k8s.io kapi serves. */
export const ADMISSIONREGISTRATION_RESOURCES: BuiltinResource[] = [
  res('admissionregistration.k8s.io', 'v1', 'validatingwebhookconfigurations', 'ValidatingWebhookConfiguration', false, { printer: webhookConfigurationPrinter, categories: ['api-extensions'], strategy: webhookConfigurationStrategy(false) }),
  res('admissionregistration.k8s.io', 'v1', 'mutatingwebhookconfigurations', 'MutatingWebhookConfiguration', false, { printer: webhookConfigurationPrinter, categories: ['api-extensions'], strategy: webhookConfigurationStrategy(true) }),
  res('admissionregistration.k8s.io', 'v1', 'validatingadmissionpolicies', 'ValidatingAdmissionPolicy', false, { printer: admissionPolicyPrinter, categories: ['api-extensions'], status: true, strategy: admissionPolicyStrategy }),
  res('admissionregistration.k8s.io', 'v1', 'validatingadmissionpolicybindings', 'ValidatingAdmissionPolicyBinding', false, { printer: admissionPolicyBindingPrinter, categories: ['api-extensions'], strategy: plain }),
  res('admissionregistration.k8s.io', 'v1', 'mutatingadmissionpolicies', 'MutatingAdmissionPolicy', false, { printer: admissionPolicyPrinter, categories: ['api-extensions'], strategy: mutatingPolicyStrategy }),
  res('admissionregistration.k8s.io', 'v1', 'mutatingadmissionpolicybindings', 'MutatingAdmissionPolicyBinding', false, { printer: admissionPolicyBindingPrinter, categories: ['api-extensions'], strategy: plain }),
];

/** The admissionregistration stores a plugin reads (their watch caches). */
const store = (ctx: AdmissionContext, resource: string) => ctx.registry.lookup('admissionregistration.k8s.io', 'v1', resource)!.store as RestStore;

/** The two webhook plugins share their matching (one per server). */
const webhooksOf = new WeakMap<AdmissionContext, AdmissionPlugin[]>();
function webhooks(ctx: AdmissionContext): AdmissionPlugin[] {
  let pair = webhooksOf.get(ctx);
  if (!pair) {
    pair = webhookAdmission({
      validating: store(ctx, 'validatingwebhookconfigurations'),
      mutating: store(ctx, 'mutatingwebhookconfigurations'),
      namespaces: ctx.namespaces,
      resolveService: ctx.resolveService,
      registry: ctx.registry,
      authorizer: ctx.authorizer,
      hooks: ctx.hooks,
      observe: ctx.observeWebhook,
    });
    webhooksOf.set(ctx, pair);
  }
  return pair;
}

const policyStores = (ctx: AdmissionContext, kind: 'validating' | 'mutating') => ({
  policies: store(ctx, `${kind}admissionpolicies`),
  bindings: store(ctx, `${kind}admissionpolicybindings`),
  namespaces: ctx.namespaces,
  registry: ctx.registry,
  authorizer: ctx.authorizer,
});

/** What a plugin matches against: its configurations' caches, and the namespaces' (their labels, for selectors). */
const policyCaches = (ctx: AdmissionContext, kind: 'validating' | 'mutating') => [store(ctx, `${kind}admissionpolicies`), store(ctx, `${kind}admissionpolicybindings`), ctx.namespaces];
const webhookCaches = (ctx: AdmissionContext, kind: 'validating' | 'mutating') => [store(ctx, `${kind}webhookconfigurations`), ctx.namespaces];

/** The group's admission plugins: policies and webhooks (apis/admission-plugins.ts orders them). */
export const ADMISSIONREGISTRATION_ADMISSION: AdmissionPluginDefinition[] = [
  { name: 'MutatingAdmissionPolicy', make: (ctx) => mutatingPolicyAdmission(policyStores(ctx, 'mutating')), caches: (ctx) => policyCaches(ctx, 'mutating') },
  { name: 'MutatingAdmissionWebhook', make: (ctx) => webhooks(ctx).find((p) => p.name === 'MutatingAdmissionWebhook')!, caches: (ctx) => webhookCaches(ctx, 'mutating') },
  { name: 'ValidatingAdmissionPolicy', make: (ctx) => validatingPolicyAdmission(policyStores(ctx, 'validating')), caches: (ctx) => policyCaches(ctx, 'validating') },
  { name: 'ValidatingAdmissionWebhook', make: (ctx) => webhooks(ctx).find((p) => p.name === 'ValidatingAdmissionWebhook')!, caches: (ctx) => webhookCaches(ctx, 'validating') },
];
