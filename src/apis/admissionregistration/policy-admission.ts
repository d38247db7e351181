/**
 * ValidatingAdmissionPolicy, as kube-apiserver's plugin: every ValidatingAdmissionPolicyBinding whose policy
 * exists is asked about each write its policy's matchConstraints (and the binding's matchResources) match:
 * rules with resource names and exclusions, namespace and object selectors, then matchConditions. Its
 * params are the object paramRef names (or those its selector selects) of the policy's paramKind; with none,
 * parameterNotFoundAction decides. Each validation is a CEL expression over `object`, `oldObject`,
 * `request`, `params`, `namespaceObject` and `variables`; one that is false is the binding's decision:
 * `Deny` refuses the write (`ValidatingAdmissionPolicy 'p' with binding 'b' denied request: ...`, with the
 * validation's reason and its code), `Warn` tells the client. An expression that fails to evaluate is a
 * failure as failurePolicy says. Expressions are metered at upstream's per-call cost limit.
 *
 * The Audit action, and the policy's auditAnnotations, go to the request's audit event.
 *
 * Not yet: status.typeChecking, the `authorizer` variable.
 */
import { errors, StatusError, type StatusReason } from '../../machinery/status.js';
import type { AdmissionAttributes, AdmissionPlugin } from '../../registry/admission.js';
import type { ApiRegistry, Endpoint } from '../../registry/registry.js';
import type { RestStore } from '../../registry/store.js';
import type { KObject } from '../../registry/types.js';
import { isRecord, records } from '../../util/json-object.js';
import { celValue, evaluateExpression, ruleMatches, selectsObject, strings } from './matching.js';

const GROUP = 'admissionregistration.k8s.io';
const reasonCodes: Record<string, number> = { Unauthorized: 401, Forbidden: 403, Invalid: 422, RequestEntityTooLarge: 413 };

export interface PolicyAdmissionOptions {
  policies: RestStore;
  bindings: RestStore;
  namespaces: RestStore;
  registry: ApiRegistry;
}

/** The ValidatingAdmissionPolicy plugin (validating admission, after the webhooks' kind of matching). */
export function validatingPolicyAdmission(opts: PolicyAdmissionOptions): AdmissionPlugin {
  const namespaceOf = (a: AdmissionAttributes): KObject | undefined =>
    a.namespace ? opts.namespaces.cache.get(opts.namespaces.key(undefined, a.namespace))?.object : undefined;

  const matches = (resources: unknown, a: AdmissionAttributes, name: string): boolean => {
    if (!isRecord(resources)) return true;
    const ns = a.resource.group === '' && a.resource.resource === 'namespaces' ? (a.object ?? a.oldObject) : a.namespace ? namespaceOf(a) : undefined;
    if (a.namespace !== '' || (a.resource.group === '' && a.resource.resource === 'namespaces')) {
      if (!selectsObject(resources.namespaceSelector, ns ?? { metadata: {} } as KObject)) return false;
    }
    if (!selectsObject(resources.objectSelector, a.object) && !selectsObject(resources.objectSelector, a.oldObject)) return false;
    const rules = records(resources.resourceRules);
    if (rules.length > 0 && !rules.some((r) => ruleMatches(r, a, name))) return false;
    return !records(resources.excludeResourceRules).some((r) => ruleMatches(r, a, name));
  };

  // The endpoint serving a param kind, looked up once per kind until the served resources change.
  let byKind = new Map<string, Endpoint | undefined>();
  opts.registry.onChange(() => (byKind = new Map()));
  const endpointOfKind = (group: string, version: string, kind: string): Endpoint | undefined => {
    const key = `${group}/${version}/${kind}`;
    if (!byKind.has(key)) byKind.set(key, opts.registry.all().find((e) => e.group === group && e.version === version && e.names.kind === kind));
    return byKind.get(key);
  };

  /** The params of a binding: the objects its paramRef names or selects (undefined: none found). */
  const paramsOf = async (policy: KObject, binding: KObject, a: AdmissionAttributes): Promise<Array<KObject | null> | undefined | 'misconfigured'> => {
    const kind = isRecord(policy.spec?.paramKind) ? policy.spec.paramKind : undefined;
    if (!kind) return [null];
    const ref = isRecord(binding.spec?.paramRef) ? binding.spec.paramRef : undefined;
    if (!ref) return 'misconfigured';
    const apiVersion = String(kind.apiVersion ?? '');
    const [group, version] = apiVersion.includes('/') ? apiVersion.split('/', 2) : ['', apiVersion];
    const endpoint = endpointOfKind(group, version, String(kind.kind ?? ''));
    if (!endpoint) return undefined;
    const namespace = endpoint.names.namespaced ? String(ref.namespace ?? '') || a.namespace : undefined;
    const store = endpoint.store;
    // Params are read from their resource's watch cache, brought up to date with what is stored.
    await store.start();
    await store.cache.sync();
    if (typeof ref.name === 'string' && ref.name) {
      const obj = store.cache.get(store.key(namespace, ref.name))?.object;
      return obj ? [endpoint.toVersion(obj)] : undefined;
    }
    const found = store.cache
      .list({ prefix: store.namespacePrefix(namespace) })
      .items.map((e) => e.object)
      .filter((o) => selectsObject(ref.selector, o));
    return found.length > 0 ? found.map((o) => endpoint.toVersion(o)) : undefined;
  };

  return {
    name: 'ValidatingAdmissionPolicy',
    validate(a) {
      if (a.resource.group === GROUP || opts.bindings.cache.size === 0) return;
      const bindings = opts.bindings.cache.list().items;
      if (bindings.length === 0) return;
      return judge(a, bindings.map((e) => e.object));
    },
  };

  async function judge(a: AdmissionAttributes, bindings: KObject[]): Promise<void> {
    const name = a.name || String(a.object?.metadata?.name ?? '');
    const warnings: string[] = [];
    const audits: Array<Record<string, unknown>> = [];
    let denial: StatusError | undefined;
    for (const binding of bindings) {
      const policyName = String(binding.spec?.policyName ?? '');
      const policy = opts.policies.cache.get(opts.policies.key(undefined, policyName))?.object;
      if (!policy || !isRecord(policy.spec)) continue;
      const spec = policy.spec;
      if (!matches(spec.matchConstraints, a, name) || !matches(binding.spec?.matchResources, a, name)) continue;
      const actions = strings(binding.spec?.validationActions);
      const failurePolicy = spec.failurePolicy === 'Ignore' ? 'Ignore' : 'Fail';
      const decide = (message: string, reason: string, expressionIndex?: number) => {
        if (actions.includes('Audit')) {
          audits.push({ message, policy: policyName, binding: binding.metadata.name, ...(expressionIndex !== undefined ? { expressionIndex } : {}), validationActions: actions });
        }
        const text = `ValidatingAdmissionPolicy '${policyName}' with binding '${binding.metadata.name}' denied request: ${message}`;
        if (actions.includes('Warn')) warnings.push(`Validation failed for ValidatingAdmissionPolicy '${policyName}' with binding '${binding.metadata.name}': ${message}`);
        if (actions.includes('Deny') && !denial) {
          const forbidden = errors.forbidden({ group: a.resource.group, resource: a.resource.resource }, name, text);
          const r = reason || 'Invalid';
          denial = new StatusError(reasonCodes[r] ?? 422, r as StatusReason, forbidden.message, { ...(forbidden.details ?? {}), causes: [{ message: text }] } as never);
        }
      };
      const params = await paramsOf(policy, binding, a);
      if (params === 'misconfigured') {
        if (failurePolicy === 'Fail') decide(`failed to configure binding: params referenced but no paramRef in binding`, 'Invalid');
        continue;
      }
      if (params === undefined) {
        if (binding.spec?.paramRef?.parameterNotFoundAction !== 'Allow' && failurePolicy === 'Fail') {
          decide(`failed to configure binding: no params found for policy binding with \`Deny\` parameterNotFoundAction`, 'Invalid');
        }
        continue;
      }
      for (const param of params) {
        const base: Record<string, unknown> = {
          object: celValue(a.object ?? null),
          oldObject: celValue(a.oldObject ?? null),
          request: celValue({ kind: a.kind, resource: a.resource, subResource: a.subresource, name, namespace: a.namespace, operation: a.operation, userInfo: a.user ? { username: a.user.name, uid: a.user.uid ?? '', groups: a.user.groups } : {}, dryRun: a.dryRun }),
          params: celValue(param),
          namespaceObject: celValue(namespaceOf(a) ?? null),
        };
        // Variables, each evaluated once, in order, seeing those before it.
        const variables: Record<string, unknown> = {};
        const ctx = { ...base, variables };
        let failed: string | undefined;
        for (const v of records(spec.variables)) {
          const r = evaluateExpression(String(v.expression ?? ''), ctx);
          if (r.error !== undefined) {
            failed ??= `variable '${String(v.name)}' resulted in error: ${r.error}`;
            continue;
          }
          variables[String(v.name)] = r.value;
        }
        let conditionsHold = true;
        for (const c of records(spec.matchConditions)) {
          const r = evaluateExpression(String(c.expression ?? ''), ctx);
          if (r.value === false) conditionsHold = false;
          else if (r.error !== undefined) failed ??= `expression '${String(c.name)}' resulted in error: ${r.error}`;
        }
        if (!conditionsHold) continue;
        for (const [index, validation] of records(spec.validations).entries()) {
          const expression = String(validation.expression ?? '');
          const r = evaluateExpression(expression, ctx);
          if (r.error !== undefined || (r.value !== true && r.value !== false)) {
            if (failurePolicy === 'Fail') decide(`expression '${expression}' resulted in error: ${r.error ?? 'must evaluate to bool'}`, 'Invalid', index);
            continue;
          }
          if (r.value === true) continue;
          let message = typeof validation.message === 'string' && validation.message ? validation.message : `failed expression: ${expression}`;
          if (typeof validation.messageExpression === 'string' && validation.messageExpression) {
            const m = evaluateExpression(validation.messageExpression, ctx);
            if (typeof m.value === 'string' && m.value.trim() && !m.value.includes('\n')) message = m.value.trim().slice(0, 5 * 1024);
          }
          decide(message, typeof validation.reason === 'string' ? validation.reason : '', index);
        }
        if (failed && failurePolicy === 'Fail') decide(failed, 'Invalid');
        // auditAnnotations: each a string (or null: none) for the audit event, named `<policy>/<key>`.
        for (const annotation of records(spec.auditAnnotations)) {
          const r = evaluateExpression(String(annotation.valueExpression ?? ''), ctx);
          if (typeof r.value === 'string' && a.auditAnnotations) a.auditAnnotations[`${policyName}/${String(annotation.key)}`] = r.value.slice(0, 10 * 1024);
        }
      }
    }
    for (const w of warnings) a.warnings?.push(w);
    if (audits.length > 0 && a.auditAnnotations) a.auditAnnotations['validation.policy.admission.k8s.io/validation_failure'] = JSON.stringify(audits);
    if (denial) throw denial;
  }
}
