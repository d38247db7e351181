/**
 * API approval for protected groups (A-16, apihelpers.GetAPIApprovalState and
 * the KubernetesAPIApprovalPolicyConformant condition controller).
 */
import { isObject, str } from './json-util.js';
import { API_APPROVAL_ANNOTATION, type AnyCRD, type CRDCondition } from '../../api/apiextensions.js';
import { parseGoURL } from './webhook-validation.js';

export type APIApprovalState = 'Invalid' | 'Approved' | 'Bypassed' | 'Missing';

/** `k8s.io`, `kubernetes.io` and their subdomains are reserved for the Kubernetes community. */
export function isProtectedCommunityGroup(group: string): boolean {
  return group === 'k8s.io' || group.endsWith('.k8s.io') || group === 'kubernetes.io' || group.endsWith('.kubernetes.io');
}

function isApprovalURL(value: string): boolean {
  try {
    const u = parseGoURL(value);
    return u.scheme.length > 0 && u.host.length > 0;
  } catch {
    return false;
  }
}

export function apiApprovalState(annotation: string | undefined): { state: APIApprovalState; reason: string } {
  const value = annotation ?? '';
  const q = JSON.stringify(API_APPROVAL_ANNOTATION);
  if (value.length === 0) {
    return { state: 'Missing', reason: `protected groups must have approval annotation ${q}, see https://github.com/kubernetes/enhancements/pull/1111` };
  }
  if (value.startsWith('unapproved')) return { state: 'Bypassed', reason: `not approved: ${JSON.stringify(value)}` };
  if (isApprovalURL(value)) return { state: 'Approved', reason: `approved in ${value}` };
  return {
    state: 'Invalid',
    reason: `protected groups must have approval annotation ${q} with either a URL or a reason starting with "unapproved", see https://github.com/kubernetes/enhancements/pull/1111`,
  };
}

const CONDITION_BY_STATE: Record<APIApprovalState, { status: string; reason: string }> = {
  Invalid: { status: 'False', reason: 'InvalidAnnotation' },
  Missing: { status: 'False', reason: 'MissingAnnotation' },
  Approved: { status: 'True', reason: 'ApprovedAnnotation' },
  Bypassed: { status: 'False', reason: 'UnapprovedAnnotation' },
};

/**
 * The KubernetesAPIApprovalPolicyConformant condition (without lastTransitionTime;
 * set it with setCondition), or null for groups that are not protected.
 */
export function apiApprovalCondition(crd: AnyCRD): CRDCondition | null {
  if (!isProtectedCommunityGroup(str(crd.spec?.group))) return null;
  const annotations = crd.metadata?.annotations;
  const { state, reason } = apiApprovalState(isObject(annotations) ? str(annotations[API_APPROVAL_ANNOTATION]) : '');
  return { type: 'KubernetesAPIApprovalPolicyConformant', ...CONDITION_BY_STATE[state], message: reason };
}
