/**
 * ValidatingWebhookConfiguration and MutatingWebhookConfiguration validation, as upstream's
 * admissionregistration validation (v1): each webhook named as a domain of three or more segments, once;
 * rules with operations, groups, versions and resources (`*` alone), a known scope; exactly one of a
 * client URL (https) or a service; sideEffects None or NoneOnDryRun; admissionReviewVersions naming v1 or
 * v1beta1; a timeout of 1 to 30 seconds; known failure, match and reinvocation policies.
 */
import { field, type FieldError } from '../../machinery/field-errors.js';
import { isDNS1123Subdomain } from '../../machinery/validation.js';
import type { Strategy } from '../../registry/types.js';
import type { KObject } from '../../api/object.js';
import { isRecord, records, type JsonRecord } from '../../util/json-object.js';
import { matchConditionErrors } from './match-conditions.js';
import { compileExpression } from './matching.js';
import { validateLabelSelector, type LabelSelectorSpec } from '../../machinery/labels.js';

const OPERATIONS = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE'];
const SCOPES = ['*', 'Cluster', 'Namespaced'];
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : []);

function starAlone(list: string[], path: string, what: string, errs: FieldError[]): void {
  if (list.includes('*') && list.length > 1) errs.push(field.invalid(path, list, `if '*' is present, must not specify other ${what}`));
}

function ruleErrors(rule: Record<string, unknown>, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const ops = strings(rule.operations);
  if (ops.length === 0) errs.push(field.required(`${path}.operations`, ''));
  starAlone(ops, `${path}.operations`, 'operations', errs);
  ops.forEach((op, i) => {
    if (!OPERATIONS.includes(op)) errs.push(field.notSupported(`${path}.operations[${i}]`, op, OPERATIONS));
  });
  const groups = strings(rule.apiGroups);
  if (groups.length === 0) errs.push(field.required(`${path}.apiGroups`, ''));
  starAlone(groups, `${path}.apiGroups`, 'API groups', errs);
  const versions = strings(rule.apiVersions);
  if (versions.length === 0) errs.push(field.required(`${path}.apiVersions`, ''));
  versions.forEach((v, i) => {
    if (v === '') errs.push(field.required(`${path}.apiVersions[${i}]`, ''));
  });
  starAlone(versions, `${path}.apiVersions`, 'API versions', errs);
  const resources = strings(rule.resources);
  if (resources.length === 0) errs.push(field.required(`${path}.resources`, ''));
  resources.forEach((r, i) => {
    if (r === '') errs.push(field.required(`${path}.resources[${i}]`, ''));
    const [res, sub] = r.split('/', 2);
    if (r.includes('/') && (res === '' || sub === '')) errs.push(field.invalid(`${path}.resources[${i}]`, r, 'must not have an empty resource or subresource'));
  });
  if (resources.includes('*/*') && resources.length > 1) errs.push(field.invalid(`${path}.resources`, resources, "if '*/*' is present, must not specify other resources"));
  if (rule.scope !== undefined && !SCOPES.includes(String(rule.scope))) errs.push(field.notSupported(`${path}.scope`, rule.scope, SCOPES));
  return errs;
}

function clientConfigErrors(config: unknown, path: string): FieldError[] {
  const c = isRecord(config) ? config : {};
  const hasUrl = typeof c.url === 'string' && c.url !== '';
  const hasService = isRecord(c.service);
  if (hasUrl === hasService) return [field.required(path, 'exactly one of url or service is required')];
  const errs: FieldError[] = [];
  if (hasUrl) {
    let url: URL | undefined;
    try {
      url = new URL(String(c.url));
    } catch {
      errs.push(field.invalid(`${path}.url`, c.url, 'host must be specified'));
    }
    if (url && url.protocol !== 'https:') errs.push(field.invalid(`${path}.url`, c.url, "'https' is the only allowed URL scheme"));
    if (url && (url.username || url.password)) errs.push(field.invalid(`${path}.url`, c.url, 'user information is not permitted in the URL'));
    if (url && url.hash) errs.push(field.invalid(`${path}.url`, c.url, 'fragments are not permitted in the URL'));
    if (url && url.search) errs.push(field.invalid(`${path}.url`, c.url, 'query parameters are not permitted in the URL'));
  } else {
    const svc = c.service as Record<string, unknown>;
    if (!svc.name) errs.push(field.required(`${path}.service.name`, 'service name is required'));
    if (!svc.namespace) errs.push(field.required(`${path}.service.namespace`, 'service namespace is required'));
    if (typeof svc.path === 'string' && svc.path !== '' && !svc.path.startsWith('/')) errs.push(field.invalid(`${path}.service.path`, svc.path, "must start with a '/'"));
    if (svc.port !== undefined && (typeof svc.port !== 'number' || svc.port < 1 || svc.port > 65535)) errs.push(field.invalid(`${path}.service.port`, svc.port, 'port is not valid: must be between 1 and 65535, inclusive'));
  }
  return errs;
}

function webhookErrors(w: Record<string, unknown>, path: string, mutating: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const name = typeof w.name === 'string' ? w.name : '';
  if (!name) errs.push(field.required(`${path}.name`, ''));
  else {
    const msgs = isDNS1123Subdomain(name);
    if (msgs.length > 0) for (const m of msgs) errs.push(field.invalid(`${path}.name`, name, m));
    else if (name.split('.').length < 3) errs.push(field.invalid(`${path}.name`, name, 'should be a domain with at least three segments separated by dots'));
  }
  records(w.rules).forEach((r, j) => errs.push(...ruleErrors(r, `${path}.rules[${j}]`)));
  const policy = (key: string, values: string[]) => {
    if (w[key] !== undefined && !values.includes(String(w[key]))) errs.push(field.notSupported(`${path}.${key}`, w[key], values));
  };
  policy('failurePolicy', ['Fail', 'Ignore']);
  policy('matchPolicy', ['Equivalent', 'Exact']);
  if (mutating) policy('reinvocationPolicy', ['IfNeeded', 'Never']);
  if (w.sideEffects === undefined || w.sideEffects === null || w.sideEffects === '') errs.push(field.required(`${path}.sideEffects`, 'must specify one of None, NoneOnDryRun'));
  else policy('sideEffects', ['None', 'NoneOnDryRun']);
  const versions = strings(w.admissionReviewVersions);
  if (versions.length === 0 || !versions.some((v) => v === 'v1' || v === 'v1beta1')) {
    errs.push(field.required(`${path}.admissionReviewVersions`, 'must specify one of v1, v1beta1'));
  }
  if (typeof w.timeoutSeconds === 'number' && (w.timeoutSeconds < 1 || w.timeoutSeconds > 30)) {
    errs.push(field.invalid(`${path}.timeoutSeconds`, w.timeoutSeconds, 'the timeout value must be between 1 and 30 seconds'));
  }
  errs.push(...clientConfigErrors(w.clientConfig, `${path}.clientConfig`));
  for (const key of ['namespaceSelector', 'objectSelector']) if (isRecord(w[key])) errs.push(...validateLabelSelector(w[key] as LabelSelectorSpec, `${path}.${key}`));
  errs.push(...matchConditionErrors(w.matchConditions, `${path}.matchConditions`));
  return errs;
}

function configurationErrors(obj: KObject, mutating: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  records(obj.webhooks).forEach((w, i) => {
    errs.push(...webhookErrors(w, `webhooks[${i}]`, mutating));
    const name = typeof w.name === 'string' ? w.name : '';
    if (name && seen.has(name)) errs.push(field.duplicate(`webhooks[${i}].name`, name));
    seen.add(name);
  });
  return errs;
}

export function webhookConfigurationStrategy(mutating: boolean): Strategy {
  return {
    allowUnconditionalUpdate: true,
    generation: 'spec',
    validate: (obj) => configurationErrors(obj, mutating),
    validateUpdate: (obj) => configurationErrors(obj, mutating),
  };
}

/** A CEL expression of a policy that does not compile, as upstream refuses it at `path`. */
function expressionErrors(expression: unknown, path: string, required = true, mutation = false): FieldError[] {
  if (typeof expression !== 'string' || expression.trim() === '') return required ? [field.required(path, '')] : [];
  const { error } = compileExpression(expression, mutation);
  return error !== undefined ? [field.invalid(path, expression, error)] : [];
}

/**
 * ValidatingAdmissionPolicy validation (the part users meet first): validations, variables, match conditions,
 * audit annotations and message expressions that compile; a known failure policy.
 */
function admissionPolicyErrors(obj: KObject): FieldError[] {
  const spec = isRecord(obj.spec) ? obj.spec : {};
  const errs: FieldError[] = [];
  if (spec.failurePolicy !== undefined && !['Fail', 'Ignore'].includes(String(spec.failurePolicy))) errs.push(field.notSupported('spec.failurePolicy', spec.failurePolicy, ['Fail', 'Ignore']));
  const validations = records(spec.validations);
  if (validations.length === 0 && records(spec.auditAnnotations).length === 0) errs.push(field.required('spec.validations', 'validations or auditAnnotations must contain at least one item'));
  validations.forEach((v, i) => {
    errs.push(...expressionErrors(v.expression, `spec.validations[${i}].expression`));
    errs.push(...expressionErrors(v.messageExpression, `spec.validations[${i}].messageExpression`, false));
  });
  records(spec.variables).forEach((v, i) => errs.push(...expressionErrors(v.expression, `spec.variables[${i}].expression`)));
  records(spec.auditAnnotations).forEach((v, i) => errs.push(...expressionErrors(v.valueExpression, `spec.auditAnnotations[${i}].valueExpression`)));
  errs.push(...matchConditionErrors(spec.matchConditions, 'spec.matchConditions'));
  return errs;
}

export const admissionPolicyStrategy: Strategy = {
  allowUnconditionalUpdate: true,
  generation: 'spec',
  resetFieldsOnMainEndpoint: ['status'],
  validate: admissionPolicyErrors,
  validateUpdate: admissionPolicyErrors,
};

/** One of a MutatingAdmissionPolicy's mutations: its patch type, and that type's expression only. */
function mutationErrors(m: JsonRecord, path: string): FieldError[] {
  if (typeof m.patchType !== 'string' || m.patchType === '') return [field.required(`${path}.patchType`, '')];
  const errs: FieldError[] = [];
  const types = { JSONPatch: 'jsonPatch', ApplyConfiguration: 'applyConfiguration' } as const;
  const own = types[m.patchType as keyof typeof types];
  if (!own) return [field.notSupported(`${path}.patchType`, m.patchType, Object.keys(types).sort())];
  const part = m[own];
  if (!isRecord(part)) errs.push(field.required(`${path}.${own}`, `must be specified when patchType is ${m.patchType}`));
  else errs.push(...expressionErrors(typeof part.expression === 'string' ? part.expression.trim() : part.expression, `${path}.${own}.expression`, true, true));
  for (const other of Object.values(types)) {
    if (other !== own && m[other] !== undefined && m[other] !== null) errs.push(field.invalid(`${path}.${other}`, `{${other}}`, `must not be specified when patchType is ${m.patchType}`));
  }
  return errs;
}

/** MutatingAdmissionPolicy validation: mutations (at least one), variables and match conditions that compile, known policies. */
function mutatingPolicyErrors(obj: KObject): FieldError[] {
  const spec = isRecord(obj.spec) ? obj.spec : {};
  const errs: FieldError[] = [];
  if (spec.failurePolicy !== undefined && !['Fail', 'Ignore'].includes(String(spec.failurePolicy))) errs.push(field.notSupported('spec.failurePolicy', spec.failurePolicy, ['Fail', 'Ignore']));
  if (spec.reinvocationPolicy !== undefined && !['IfNeeded', 'Never'].includes(String(spec.reinvocationPolicy))) {
    errs.push(field.notSupported('spec.reinvocationPolicy', spec.reinvocationPolicy, ['IfNeeded', 'Never']));
  }
  const mutations = records(spec.mutations);
  if (mutations.length === 0) errs.push(field.required('spec.mutations', 'mutations must contain at least one item'));
  mutations.forEach((m, i) => errs.push(...mutationErrors(m, `spec.mutations[${i}]`)));
  records(spec.variables).forEach((v, i) => errs.push(...expressionErrors(v.expression, `spec.variables[${i}].expression`, true, true)));
  errs.push(...matchConditionErrors(spec.matchConditions, 'spec.matchConditions'));
  return errs;
}

export const mutatingPolicyStrategy: Strategy = {
  allowUnconditionalUpdate: true,
  generation: 'spec',
  validate: mutatingPolicyErrors,
  validateUpdate: mutatingPolicyErrors,
};
