/**
 * Authorization: the slot in the filter chain where an authorizer decides on a
 * request's attributes, as apiserver's WithAuthorization does (RBAC will fill
 * it). Attributes are those of authorizer.AttributesRecord: the user, the verb,
 * and for resource requests the API group and version, resource, subresource,
 * namespace and name; for the others (discovery, /openapi, /metrics) the path.
 */
import { goQuote } from '../machinery/go-text.js';
import { StatusError } from '../machinery/status.js';
import type { Exchange, Filter } from './filters.js';
import type { Attributes, Authorizer } from '../api/authorization.js';


/** The authorizer until RBAC: every request is allowed (kube-apiserver's --authorization-mode=AlwaysAllow). */
export const alwaysAllow: Authorizer = {
  authorize: () => ({ decision: 'allow' }),
  rulesFor: () => ({
    resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
    nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
    incomplete: false,
  }),
};

/** A request's attributes, from its parsed target (RequestInfo) and its user. */
export function attributesOf(x: Exchange): Attributes {
  const info = x.info;
  if (info?.kind === 'resource') {
    return {
      user: x.user,
      verb: info.verb,
      resourceRequest: true,
      path: x.path,
      apiGroup: info.group,
      apiVersion: info.version,
      resource: info.resource,
      subresource: info.subresource ?? '',
      namespace: info.namespace ?? '',
      name: info.name ?? info.selectedName ?? '',
    };
  }
  return { user: x.user, verb: (x.req.method ?? 'GET').toLowerCase(), resourceRequest: false, path: x.path, apiGroup: '', apiVersion: '', resource: '', subresource: '', namespace: '', name: '' };
}

/** `&`, `<`, `>` escaped, as apiserver's responsewriters sanitize the message. */
function sanitize(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** upstream's ForbiddenStatusError: 403 Forbidden, with forbiddenMessage's text. */
export function forbidden(a: Attributes, reason = ''): StatusError {
  const user = goQuote(a.user?.name ?? '');
  let msg: string;
  if (!a.resourceRequest) {
    msg = `User ${user} cannot ${a.verb} path ${goQuote(a.path)}`;
  } else {
    const resource = goQuote(a.subresource ? `${a.resource}/${a.subresource}` : a.resource);
    msg = a.namespace
      ? `User ${user} cannot ${a.verb} resource ${resource} in API group ${goQuote(a.apiGroup)} in the namespace ${goQuote(a.namespace)}`
      : `User ${user} cannot ${a.verb} resource ${resource} in API group ${goQuote(a.apiGroup)} at the cluster scope`;
  }
  const why = sanitize(msg) + (reason ? `: ${reason}` : '');
  const qualified = a.resource ? (a.apiGroup ? `${a.resource}.${a.apiGroup}` : a.resource) : '';
  const message = !qualified ? `forbidden: ${why}` : a.name ? `${qualified} ${goQuote(a.name)} is forbidden: ${why}` : `${qualified} is forbidden: ${why}`;
  const details: Record<string, string> = {};
  if (a.name) details.name = a.name;
  if (a.apiGroup) details.group = a.apiGroup;
  if (a.resource) details.kind = a.resource;
  return new StatusError(403, 'Forbidden', message, details);
}

/** The authorization filter: a request the authorizer does not allow gets 403 with upstream's message. */
export function authorization(authorizer: Authorizer): Filter {
  return async (x, next) => {
    const attributes = attributesOf(x);
    const d = await authorizer.authorize(attributes);
    x.authorization = { decision: d.decision === 'allow' ? 'allow' : 'forbid', reason: d.reason ?? '' };
    if (d.decision !== 'allow') throw forbidden(attributes, d.reason);
    return next(x);
  };
}
