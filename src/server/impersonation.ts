/**
 * Impersonation, as apiserver's WithImpersonation: `Impersonate-User`,
 * `Impersonate-Group` (one header per group), `Impersonate-Uid` and
 * `Impersonate-Extra-<key>` make the request run as another user, when the
 * authorizer allows the requester the `impersonate` verb on each: `users` (or
 * `serviceaccounts` for `system:serviceaccount:<ns>:<name>`) and `groups` in
 * the core group, `userextras/<key>` and `uids` in authentication.k8s.io.
 * Headers are read as sent, as Go's http.Header has them: the user and the uid are the first value of their
 * header (an empty one asks for nothing, as a missing one), every `Impersonate-Group` and extra value counts
 * (empty ones too). A request whose headers ask for nothing is served as its own user.
 */
import { errors } from '../machinery/status.js';
import type { UserInfo } from '../api/authentication.js';
import { forbidden } from './authz.js';
import type { Attributes, Authorizer } from '../api/authorization.js';
import type { Request } from './exchange.js';
import type { Exchange, Filter } from './filters.js';
import { unescapeExtraKey } from './request-header.js';

const SA_PREFIX = 'system:serviceaccount:';
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const EXTRA_PREFIX = 'impersonate-extra-';

/**
 * The header lines of a request, name lower-cased: as sent (a repeated header is several lines), or for a
 * request made in the process (loopback.ts: headers only) one line per value of each header.
 */
function rawHeaders(req: Request): Array<[string, string]> {
  const raw = (req as { rawHeaders?: string[] }).rawHeaders;
  const out: Array<[string, string]> = [];
  if (raw && raw.length > 0) {
    for (let i = 0; i + 1 < raw.length; i += 2) out.push([raw[i].toLowerCase(), raw[i + 1]]);
    return out;
  }
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) out.push([name.toLowerCase(), String(v)]);
  }
  return out;
}

/** upstream's ObjectReference for one impersonation, and its %v (Kind Namespace Name UID APIVersion ResourceVersion FieldPath). */
interface Wanted {
  kind: 'User' | 'ServiceAccount' | 'Group' | 'UserExtra' | 'UID';
  namespace?: string;
  name: string;
  fieldPath?: string;
}

function goValue(w: Wanted): string {
  const apiVersion = w.kind === 'UserExtra' || w.kind === 'UID' ? 'authentication.k8s.io/v1' : '';
  return `{${w.kind} ${w.namespace ?? ''} ${w.name}  ${apiVersion}  ${w.fieldPath ?? ''}}`;
}

function splitServiceAccount(user: string): { namespace: string; name: string } | undefined {
  if (!user.startsWith(SA_PREFIX)) return undefined;
  const parts = user.slice(SA_PREFIX.length).split(':');
  if (parts.length !== 2) return undefined;
  const [namespace, name] = parts;
  if (namespace.length > 63 || !DNS_LABEL.test(namespace) || name.length > 253 || !DNS_SUBDOMAIN.test(name)) return undefined;
  return { namespace, name };
}

/** What the request asks to impersonate; a 400 for groups, extras or a uid without a user. */
function wanted(req: Request): Wanted[] {
  const out: Wanted[] = [];
  let user: string | undefined;
  let uid: string | undefined;
  const rest: Wanted[] = [];
  for (const [name, value] of rawHeaders(req)) {
    if (name === 'impersonate-user') user ??= value;
    else if (name === 'impersonate-group') rest.push({ kind: 'Group', name: value });
    else if (name === 'impersonate-uid') uid ??= value;
    else if (name.startsWith(EXTRA_PREFIX)) {
      const key = unescapeExtraKey(name.slice(EXTRA_PREFIX.length));
      rest.push({ kind: 'UserExtra', name: value, fieldPath: key });
    }
  }
  if (user) {
    const sa = splitServiceAccount(user);
    out.push(sa ? { kind: 'ServiceAccount', ...sa } : { kind: 'User', name: user });
  }
  out.push(...rest);
  if (uid) out.push({ kind: 'UID', name: uid });
  if (!user && out.length > 0) throw errors.badRequest(`requested [${out.map(goValue).join(' ')}] without impersonating a user`);
  return out;
}

function attributesFor(w: Wanted, requester: UserInfo | undefined): Attributes {
  const base = { user: requester, verb: 'impersonate', resourceRequest: true, path: '', apiVersion: 'v1', subresource: '', namespace: '', name: w.name, apiGroup: '' };
  switch (w.kind) {
    case 'ServiceAccount':
      return { ...base, resource: 'serviceaccounts', namespace: w.namespace! };
    case 'User':
      return { ...base, resource: 'users' };
    case 'Group':
      return { ...base, resource: 'groups' };
    case 'UserExtra':
      return { ...base, apiGroup: 'authentication.k8s.io', resource: 'userextras', subresource: w.fieldPath ?? '' };
    default:
      return { ...base, apiGroup: 'authentication.k8s.io', resource: 'uids' };
  }
}

/** The impersonation filter: after authentication, before the request's own authorization. */
export function impersonation(authorizer: Authorizer): Filter {
  return async (x: Exchange, next) => {
    const h = x.req.headers;
    // Most requests carry no impersonation header: one look at the parsed headers decides.
    let any = h['impersonate-user'] !== undefined || h['impersonate-group'] !== undefined || h['impersonate-uid'] !== undefined;
    if (!any) for (const name in h) if (name.startsWith(EXTRA_PREFIX)) any = true;
    if (!any) return next(x);
    const requests = wanted(x.req);
    // Empty user and uid headers alone ask for nothing (upstream's len(requests) == 0): the requester stays who it is.
    if (requests.length === 0) return next(x);
    const groupsSpecified = requests.some((w) => w.kind === 'Group');
    let name = '';
    let uid = '';
    const groups: string[] = [];
    // Keys come from header names: no prototype to write into (`Impersonate-Extra-__proto__`).
    const extra = Object.create(null) as Record<string, string[]>;
    for (const w of requests) {
      const attributes = attributesFor(w, x.user);
      const d = await authorizer.authorize(attributes);
      if (d.decision !== 'allow') throw forbidden(attributes, d.reason);
      if (w.kind === 'ServiceAccount') {
        name = `${SA_PREFIX}${w.namespace}:${w.name}`;
        if (!groupsSpecified) groups.push('system:serviceaccounts', `system:serviceaccounts:${w.namespace}`);
      } else if (w.kind === 'User') name = w.name;
      else if (w.kind === 'Group') groups.push(w.name);
      else if (w.kind === 'UserExtra') (extra[w.fieldPath ?? ''] ??= []).push(w.name);
      else uid = w.name;
    }
    if (name !== 'system:anonymous') {
      if (!groups.includes('system:authenticated') && !groups.includes('system:unauthenticated')) groups.push('system:authenticated');
    } else if (!groups.includes('system:unauthenticated')) groups.push('system:unauthenticated');
    x.requester = x.user;
    x.user = { name, uid, groups, ...(Object.keys(extra).length ? { extra } : {}) };
    return next(x);
  };
}
