/**
 * apiregistration.k8s.io/v1 APIService, as kube-aggregator serves it: validation (the name is
 * `<version>.<group>`; priorities in range; a service reference or none, for a local group-version; a CA
 * bundle or insecureSkipTLSVerify, not both), and the local APIServices kube-apiserver registers for the
 * group-versions it serves itself, with upstream's priorities (CRDs' at 1000/100), always Available.
 */
import { field, type FieldError } from '../../machinery/field-errors.js';
import { isDNS1035Label, isDNS1123Subdomain, validatePathSegmentName } from '../../machinery/validation.js';
import type { Strategy } from '../../registry/types.js';
import type { KObject } from '../../api/object.js';
import { isRecord } from '../../util/json-object.js';

/** kube-apiserver's apiVersionPriorities: group priority, version priority. */
const PRIORITIES: Record<string, [number, number]> = {
  '/v1': [18000, 1],
  'apps/v1': [17800, 15],
  'events.k8s.io/v1': [17750, 15],
  'authentication.k8s.io/v1': [17700, 15],
  'authorization.k8s.io/v1': [17600, 15],
  'autoscaling/v1': [17500, 15],
  'autoscaling/v2': [17500, 30],
  'batch/v1': [17400, 15],
  'certificates.k8s.io/v1': [17300, 15],
  'networking.k8s.io/v1': [17200, 15],
  'policy/v1': [17100, 15],
  'rbac.authorization.k8s.io/v1': [17000, 15],
  'storage.k8s.io/v1': [16800, 15],
  'apiextensions.k8s.io/v1': [16700, 15],
  'admissionregistration.k8s.io/v1': [16700, 15],
  'scheduling.k8s.io/v1': [16600, 15],
  'coordination.k8s.io/v1': [16500, 15],
  'node.k8s.io/v1': [16300, 15],
  'discovery.k8s.io/v1': [16200, 15],
  'flowcontrol.apiserver.k8s.io/v1': [16100, 21],
  'apiregistration.k8s.io/v1': [18000, 15],
};

/** Labels of the APIServices kapi registers itself (upstream's autoregister values). */
export const AUTOMANAGED = 'kube-aggregator.kubernetes.io/automanaged';

/** The local APIService of a group-version kapi serves (`custom`: a CRD's), with upstream's priorities. */
export function localAPIService(group: string, version: string, custom: boolean): KObject {
  const [groupPriorityMinimum, versionPriority] = custom ? [1000, 100] : (PRIORITIES[`${group}/${version}`] ?? [1000, 100]);
  return {
    apiVersion: 'apiregistration.k8s.io/v1',
    kind: 'APIService',
    metadata: { name: `${version}.${group}`, labels: { [AUTOMANAGED]: custom ? 'true' : 'onstart' } },
    // As stored: the core group's empty name is left out (omitempty).
    spec: { ...(group ? { group } : {}), version, groupPriorityMinimum, versionPriority },
  };
}

/** The Available condition of a local APIService. */
export function localAvailable(now: string): KObject {
  return { type: 'Available', status: 'True', lastTransitionTime: now, reason: 'Local', message: 'Local APIServices are always available' };
}

function apiServiceErrors(obj: KObject): FieldError[] {
  const errs: FieldError[] = [];
  const spec = isRecord(obj.spec) ? obj.spec : {};
  const group = typeof spec.group === 'string' ? spec.group : '';
  const version = typeof spec.version === 'string' ? spec.version : '';
  const expected = `${version}.${group}`;
  if (obj.metadata?.name !== expected) errs.push(field.invalid('metadata.name', obj.metadata?.name, `must be \`spec.version+"."+spec.group\`: "${expected}"`));
  if (!version) errs.push(field.required('spec.version', ''));
  else for (const m of isDNS1035Label(version)) errs.push(field.invalid('spec.version', version, m));
  if (group) for (const m of isDNS1123Subdomain(group)) errs.push(field.invalid('spec.group', group, m));
  const gp = spec.groupPriorityMinimum;
  if (typeof gp !== 'number' || gp <= 0 || gp > 20000) errs.push(field.invalid('spec.groupPriorityMinimum', gp, 'must be positive and less than 20000'));
  const vp = spec.versionPriority;
  if (typeof vp !== 'number' || vp <= 0 || vp > 1000) errs.push(field.invalid('spec.versionPriority', vp, 'must be positive and less than 1000'));
  const service = isRecord(spec.service) ? spec.service : undefined;
  if (!service) {
    if (spec.insecureSkipTLSVerify) errs.push(field.invalid('spec.insecureSkipTLSVerify', spec.insecureSkipTLSVerify, 'must not be set if service is not set'));
    if (spec.caBundle) errs.push(field.invalid('spec.caBundle', '<omitted>', 'must not be set if service is not set'));
  } else {
    if (typeof service.namespace !== 'string' || !service.namespace) errs.push(field.required('spec.service.namespace', ''));
    if (typeof service.name !== 'string' || !service.name) errs.push(field.required('spec.service.name', ''));
    const port = service.port ?? 443;
    if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535) errs.push(field.invalid('spec.service.port', port, 'port is not valid: must be between 1 and 65535, inclusive'));
    if (spec.insecureSkipTLSVerify && spec.caBundle) errs.push(field.invalid('spec.insecureSkipTLSVerify', spec.insecureSkipTLSVerify, 'may not be true if caBundle is present'));
  }
  return errs;
}

export const apiServiceStrategy: Strategy = {
  allowUnconditionalUpdate: true,
  // As upstream: any path segment (the core group's is "v1.").
  nameRule: validatePathSegmentName,
  generation: 'spec',
  resetFieldsOnMainEndpoint: ['status'],
  defaulting(obj) {
    if (isRecord(obj.spec) && isRecord(obj.spec.service) && obj.spec.service.port === undefined) obj.spec.service.port = 443;
  },
  validate: apiServiceErrors,
  validateUpdate: apiServiceErrors,
};
