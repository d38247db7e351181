/**
 * What an authorizer is asked and answers: k8s.io/apiserver's authorizer.Attributes,
 * Decision and RuleResolver. Attributes are those of authorizer.AttributesRecord: the
 * user, the verb, and for resource requests the API group and version, resource,
 * subresource, namespace and name; for the others (discovery, /openapi, /metrics) the path.
 */
import type { UserInfo } from './authentication.js';

/**
 * What a request asks to do, as authorizer.AttributesRecord: the fields of a resource request, or the path of
 * a non-resource one (whose resource fields are empty strings).
 */
export interface Attributes {
  /** The authenticated (or impersonated) user; absent when there is none. */
  user?: UserInfo;
  /** The API verb (get, list, watch, create, update, patch, delete, deletecollection...), or for a non-resource request the HTTP method in lower case. */
  verb: string;
  /** Whether this is a request on an API resource (false: discovery, /openapi, /metrics, /healthz...). */
  resourceRequest: boolean;
  /** The request's URL path. */
  path: string;
  /** The API group ('' for the core group). */
  apiGroup: string;
  apiVersion: string;
  /** The resource's plural name, e.g. `pods`. */
  resource: string;
  /** e.g. `status` or `scale`; '' for the resource itself. */
  subresource: string;
  /** '' for cluster-scoped resources and for requests across all namespaces. */
  namespace: string;
  /** The object's name; '' for collection requests (list, watch, create without a name). */
  name: string;
}

/** An authorizer's answer, and why (RBAC's `RBAC: allowed by ...`, or what kept it from allowing). */
export type Decision = { decision: 'allow' | 'deny' | 'no-opinion'; reason?: string };

/** What a user may do on resources, as authorization.k8s.io's ResourceRule (`*` matches anything). */
export interface ResourceRule {
  verbs: string[];
  apiGroups?: string[];
  /** Resources, `<resource>/<subresource>` for a subresource. */
  resources?: string[];
  /** Only these objects (absent or empty: all of them). */
  resourceNames?: string[];
}

/** What a user may do on non-resource URLs, as authorization.k8s.io's NonResourceRule (a trailing `*` matches a prefix). */
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

/**
 * An authorizer, as k8s.io/apiserver's authorizer.Authorizer and RuleResolver: given as `authorizer` it takes
 * the place of the authorization mode's. A request is allowed only on `allow`; `deny` and `no-opinion` answer
 * 403 Forbidden (with `reason` appended to upstream's message), unless an --authorization-kubeconfig cluster
 * is asked next.
 */
export interface Authorizer {
  /** Decides on one set of attributes: every request after authentication, and impersonation, access reviews (SubjectAccessReview...) and CEL `authorizer` checks. */
  authorize(attributes: Attributes): Decision | Promise<Decision>;
  /** The rules that apply to a user in a namespace; an authorizer without it gives none and says they are incomplete. */
  rulesFor?(user: UserInfo, namespace: string): Rules | Promise<Rules>;
}
