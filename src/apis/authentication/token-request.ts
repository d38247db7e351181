/**
 * `serviceaccounts/<name>/token` (TokenRequest, `kubectl create token`), as upstream's TokenREST: a token
 * for an existing account, for the audiences asked (default: the API server's), for as long as asked
 * (default 1 h, at least 10 minutes, at most --service-account-max-token-expiration), optionally bound
 * to a Pod, Secret or Node of the account, which must exist (with the uid given, if one is).
 */
import { field } from '../../machinery/field-errors.js';
import { errors, StatusError } from '../../machinery/status.js';
import { toRfc3339 } from '../../machinery/time.js';
import type { KObject } from '../../api/object.js';
import type { SubresourceCreateRequest, SubresourceStorage } from '../../registry/registry.js';
import type { ServiceAccountTokens, TokenRequestSpec } from './service-account-tokens.js';
import { isRecord } from '../../util/json-object.js';

const GROUP_KIND = { group: 'authentication.k8s.io', resource: 'TokenRequest' };
const BOUND_RESOURCES = { Pod: 'pods', Secret: 'secrets', Node: 'nodes' } as const;

/** The storage of `serviceaccounts/<name>/token`, issuing with `tokens` (none: there is no such subresource, 404). */
export const tokenRequestStorage = (tokens: ServiceAccountTokens | undefined): SubresourceStorage => ({
  create: async (req) => {
    if (!tokens) throw errors.notFound({ group: '', resource: 'serviceaccounts' }, req.name);
    return issueToken(tokens, req);
  },
});

async function issueToken(tokens: ServiceAccountTokens, req: SubresourceCreateRequest): Promise<KObject> {
  const request = req.body;
  const namespace = req.namespace!;
  const name = req.name;
  const spec = isRecord(request.spec) ? request.spec : {};
  const requested = spec.expirationSeconds === undefined || spec.expirationSeconds === null ? 3600 : spec.expirationSeconds;
  if (typeof requested !== 'number' || !Number.isInteger(requested)) throw errors.badRequest('spec.expirationSeconds must be an integer');
  const errs = [];
  if (requested < 600) errs.push(field.invalid('spec.expirationSeconds', requested, 'may not specify a duration less than 10 minutes'));
  if (requested > 2 ** 32) errs.push(field.invalid('spec.expirationSeconds', requested, 'may not specify a duration larger than 2^32 seconds'));
  if (errs.length > 0) throw errors.invalid(GROUP_KIND, name, errs);
  const account = await req.store.get(namespace, name);
  const audiences = Array.isArray(spec.audiences) && spec.audiences.length > 0 ? spec.audiences.map(String) : tokens.apiAudiences;
  const expirationSeconds = tokens.maxExpirationSeconds !== undefined ? Math.min(requested, tokens.maxExpirationSeconds) : requested;
  const out: TokenRequestSpec = { audiences, expirationSeconds };
  const ref = isRecord(spec.boundObjectRef) ? spec.boundObjectRef : undefined;
  if (ref) {
    const kind = typeof ref.kind === 'string' ? ref.kind : '';
    const apiVersion = typeof ref.apiVersion === 'string' ? ref.apiVersion : '';
    const refName = typeof ref.name === 'string' ? ref.name : '';
    const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
    const version = apiVersion.includes('/') ? apiVersion.slice(apiVersion.indexOf('/') + 1) : apiVersion;
    if (group !== '' || !(kind in BOUND_RESOURCES)) throw errors.badRequest(`cannot bind token to object of type ${group}/${version}, Kind=${kind}`);
    const resource = BOUND_RESOURCES[kind as keyof typeof BOUND_RESOURCES];
    const store = req.lookup('', 'v1', resource)?.store;
    if (!store) throw errors.badRequest(`cannot bind token to object of type /${version}, Kind=${kind}`);
    const bound = await store.get(kind === 'Node' ? undefined : namespace, refName);
    if (kind === 'Pod' && (bound.spec as { serviceAccountName?: string } | undefined)?.serviceAccountName !== name) {
      throw errors.badRequest(`cannot bind token for serviceaccount ${JSON.stringify(name)} to pod running with different serviceaccount name.`);
    }
    if (typeof ref.uid === 'string' && ref.uid !== '' && ref.uid !== bound.metadata.uid) {
      throw new StatusError(409, 'Conflict', `Operation cannot be fulfilled on ${kind} ${JSON.stringify(refName)}: the UID in the bound object reference (${ref.uid}) does not match the UID in record. The object might have been deleted and then recreated`, { name: refName, kind });
    }
    out.bound = { kind: kind as 'Pod' | 'Secret' | 'Node', name: refName, uid: String(bound.metadata.uid) };
  }
  const now = new Date();
  const { token, expirationTimestamp } = await tokens.issue(account, out, now.getTime());
  const response = {
    kind: 'TokenRequest',
    apiVersion: 'authentication.k8s.io/v1',
    metadata: { name, namespace, creationTimestamp: toRfc3339(now) },
    spec: { audiences, expirationSeconds, boundObjectRef: ref ?? null },
    status: { token, expirationTimestamp: toRfc3339(expirationTimestamp) },
  };
  return response as KObject;
}
