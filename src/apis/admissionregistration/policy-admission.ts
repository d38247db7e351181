/**
 * ValidatingAdmissionPolicy, as kube-apiserver's plugin: the bindings that match a write (policy-bindings.ts)
 * are evaluated with each of their params. Each validation is a CEL expression over `object`, `oldObject`,
 * `request`, `params`, `namespaceObject` and `variables`; one that is false is the binding's decision:
 * `Deny` refuses the write (`ValidatingAdmissionPolicy 'p' with binding 'b' denied request: ...`, with the
 * validation's reason and its code), `Warn` tells the client. An expression that fails to evaluate is a
 * failure as failurePolicy says. Expressions are metered at upstream's per-call cost limit.
 *
 * The Audit action, and the policy's auditAnnotations, go to the request's audit event.
 *
 * Expressions may ask the server's authorizer what the request's user may do (`authorizer`, cel-authorizer.ts).
 * Type checking (status.typeChecking) is the status controller's (type-checking.ts).
 */
import { errors, StatusError, type StatusReason } from '../../machinery/status.js';
import type { AdmissionAttributes, AdmissionPlugin } from '../../registry/admission.js';
import type { KObject } from '../../api/object.js';
import { records, type JsonRecord } from '../../util/json-object.js';
import type { AuthorizationSession } from './cel-authorizer.js';
import { evaluateExpression, strings } from './matching.js';
import { policyBindings, writeName, type PolicyStores } from './policy-bindings.js';

const reasonCodes: Record<string, number> = { Unauthorized: 401, Forbidden: 403, Invalid: 422, RequestEntityTooLarge: 413 };

/** The ValidatingAdmissionPolicy plugin (validating admission, after the webhooks' kind of matching). */
export function validatingPolicyAdmission(opts: PolicyStores): AdmissionPlugin {
  const bindings = policyBindings(opts);
  return {
    name: 'ValidatingAdmissionPolicy',
    validate(a) {
      if (bindings.active(a)) return judge(a);
    },
  };

  async function judge(a: AdmissionAttributes): Promise<void> {
    const name = writeName(a);
    const warnings: string[] = [];
    const audits: Array<Record<string, unknown>> = [];
    let denial: StatusError | undefined;
    const session = bindings.session();
    for (const inv of await bindings.invocations(a)) {
      const { spec, binding, policyName, bindingName, failurePolicy, params, configError } = inv;
      const actions = strings(binding.spec?.validationActions);
      const decide = (message: string, reason: string, expressionIndex?: number) => {
        if (actions.includes('Audit')) {
          audits.push({ message, policy: policyName, binding: bindingName, ...(expressionIndex !== undefined ? { expressionIndex } : {}), validationActions: actions });
        }
        const text = `ValidatingAdmissionPolicy '${policyName}' with binding '${bindingName}' denied request: ${message}`;
        if (actions.includes('Warn')) warnings.push(`Validation failed for ValidatingAdmissionPolicy '${policyName}' with binding '${bindingName}': ${message}`);
        if (actions.includes('Deny') && !denial) {
          const forbidden = errors.forbidden({ group: a.resource.group, resource: a.resource.resource }, name, text);
          const r = reason || 'Invalid';
          denial = new StatusError(reasonCodes[r] ?? 422, r as StatusReason, forbidden.message, { ...(forbidden.details ?? {}), causes: [{ message: text }] } as never);
        }
      };
      if (configError !== undefined) {
        if (failurePolicy === 'Fail') decide(configError, 'Invalid');
        continue;
      }
      const va = params.length > 0 ? await bindings.versioned(a, inv) : a;
      for (const param of params) {
        const evaluate = () => evaluateParam(va, spec, param, session, failurePolicy);
        const outcome = session ? await session.settle(evaluate) : evaluate();
        for (const d of outcome.decisions) decide(d.message, d.reason, d.index);
        // auditAnnotations: each a string (or null: none) for the audit event, named `<policy>/<key>`.
        for (const [key, value] of outcome.annotations) if (a.auditAnnotations) a.auditAnnotations[`${policyName}/${key}`] = value;
      }
    }
    for (const w of warnings) a.warnings?.push(w);
    if (audits.length > 0 && a.auditAnnotations) a.auditAnnotations['validation.policy.admission.k8s.io/validation_failure'] = JSON.stringify(audits);
    if (denial) throw denial;
  }

  /**
   * One evaluation of a policy with one param: its failed validations (and errors, as failurePolicy says) and its
   * audit annotations, with no effect yet (evaluated again while `authorizer` checks are being answered).
   */
  function evaluateParam(a: AdmissionAttributes, spec: JsonRecord, param: KObject | null, session: AuthorizationSession | undefined, failurePolicy: 'Fail' | 'Ignore'): Outcome {
    const outcome: Outcome = { decisions: [], annotations: [] };
    const { ctx, failed } = bindings.context(a, spec, param, session);
    const held = bindings.conditions(spec, ctx);
    if (held === false) return outcome;
    if (held !== true) {
      if (failurePolicy === 'Fail') outcome.decisions.push({ message: held, reason: 'Invalid' });
      return outcome;
    }
    for (const [index, validation] of records(spec.validations).entries()) {
      const expression = String(validation.expression ?? '');
      const r = evaluateExpression(expression, ctx);
      if (r.error !== undefined || (r.value !== true && r.value !== false)) {
        if (failurePolicy === 'Fail') outcome.decisions.push({ message: `expression '${expression}' resulted in error: ${r.error ?? 'must evaluate to bool'}`, reason: 'Invalid', index });
        continue;
      }
      if (r.value === true) continue;
      let message = typeof validation.message === 'string' && validation.message ? validation.message : `failed expression: ${expression}`;
      if (typeof validation.messageExpression === 'string' && validation.messageExpression) {
        const m = evaluateExpression(validation.messageExpression, ctx);
        if (typeof m.value === 'string' && m.value.trim() && !m.value.includes('\n')) message = m.value.trim().slice(0, 5 * 1024);
      }
      outcome.decisions.push({ message, reason: typeof validation.reason === 'string' ? validation.reason : '', index });
    }
    if (failed && failurePolicy === 'Fail') outcome.decisions.push({ message: failed, reason: 'Invalid' });
    for (const annotation of records(spec.auditAnnotations)) {
      const r = evaluateExpression(String(annotation.valueExpression ?? ''), ctx);
      if (typeof r.value === 'string') outcome.annotations.push([String(annotation.key), r.value.slice(0, 10 * 1024)]);
    }
    return outcome;
  }
}

interface Outcome {
  decisions: Array<{ message: string; reason: string; index?: number }>;
  annotations: Array<[string, string]>;
}
