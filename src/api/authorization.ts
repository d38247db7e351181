/**
 * What an authorizer is asked and answers: k8s.io/apiserver's authorizer.Attributes,
 * Decision and RuleResolver. Attributes are those of authorizer.AttributesRecord: the
 * user, the verb, and for resource requests the API group and version, resource,
 * subresource, namespace and name; for the others (discovery, /openapi, /metrics) the path.
 */
import type { UserInfo } from './authentication.js';

export interface Attributes {
  user?: UserInfo;
  verb: string;
  resourceRequest: boolean;
  path: string;
  apiGroup: string;
  apiVersion: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
}

/** An authorizer's answer, and why (RBAC's `RBAC: allowed by ...`, or what kept it from allowing). */
export type Decision = { decision: 'allow' | 'deny' | 'no-opinion'; reason?: string };

export interface ResourceRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
}

export interface NonResourceRule {
  verbs: string[];
  nonResourceURLs?: string[];
}

/** What a user may do in a namespace, as far as the authorizer can tell (SelfSubjectRulesReview, `kubectl auth can-i --list`). */
export interface Rules {
  resourceRules: ResourceRule[];
  nonResourceRules: NonResourceRule[];
  /** The rules may not be all there are (an authorizer that cannot list its rules, or one that met errors). */
  incomplete: boolean;
  /** What kept the rules from being complete (SelfSubjectRulesReview's status.evaluationError). */
  evaluationError?: string;
}

export interface Authorizer {
  authorize(attributes: Attributes): Decision | Promise<Decision>;
  /** The rules that apply to a user in a namespace; an authorizer without it gives none and says they are incomplete. */
  rulesFor?(user: UserInfo, namespace: string): Rules | Promise<Rules>;
}
