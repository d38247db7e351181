/**
 * Who may call the server, and what they may do: the static tokens (the admin's, --token-auth-file's, and one
 * for each in-process controller's identity), ServiceAccount tokens read as a GET reads their accounts, the
 * authorizer (RBAC from the watch caches of its four kinds, AlwaysAllow, an embedder's, or the core cluster's
 * SubjectAccessReviews behind it), and the review resources that answer with them (TokenReview,
 * SubjectAccessReview and their kin), installed into the registry.
 */
import type { Authorizer } from '../api/authorization.js';
import { authenticationReviews, type TokenLookup } from '../apis/authentication/reviews.js';
import type { ObjectGetter } from '../apis/authentication/service-account-tokens.js';
import { authorizationReviews } from '../apis/authorization/reviews.js';
import { RbacResolver, rbacAuthorizer } from '../apis/rbac/authorizer.js';
import { controllerIdentities, type ControllerIdentities } from '../controllers/identities.js';
import type { ApiRegistry } from '../registry/registry.js';
import { adminUserInfo, TokenAuthenticator } from '../server/authn.js';
import { alwaysAllow } from '../server/authz.js';
import { delegatedAuthorizer } from '../server/delegated.js';
import { registryRbacStores } from '../apis/rbac/install.js';
import type { ServerConfig } from './config.js';
import type { Delegation } from './delegation.js';
import type { KapiOptions } from './options.js';

export interface Access {
  authenticator: TokenAuthenticator;
  /** The in-process controllers' identities, each with its token. */
  identities: ControllerIdentities;
  /** A core-group object by resource, namespace and name (undefined when missing), as a GET reads it. */
  getObject: ObjectGetter;
  authorizer: Authorizer;
  /** RBAC's rule resolver (what the escalation check asks). */
  resolver: RbacResolver;
}

/** Builds authentication and authorization, and installs the review resources; RBAC's caches are started. */
export async function installAccess(registry: ApiRegistry, options: KapiOptions, config: ServerConfig, delegation: Delegation): Promise<Access> {
  const { adminToken, extraTokens, saTokens } = config;
  const tokens = new Map(extraTokens ?? []);
  tokens.set(adminToken, adminUserInfo());
  // The in-process controllers are clients of the API, each with its own identity and a token for it.
  const identities = controllerIdentities();
  for (const id of Object.values(identities)) tokens.set(id.token, id.user);
  const authenticator = new TokenAuthenticator(tokens);
  // ServiceAccount tokens name accounts (and what they are bound to), read as a GET reads them.
  const getObject: ObjectGetter = (resource, namespace, name) =>
    registry
      .lookup('', 'v1', resource)!
      .store.get(namespace, name)
      .catch((err: { code?: number }) => {
        if (err.code === 404) return undefined;
        throw err;
      });
  const lookupToken: TokenLookup = async (token, audiences) => {
    const user = authenticator.authenticateToken(token);
    // A static token is good for the API server's own audiences only (upstream's audience-agnostic wrapper).
    if (user) {
      const good = audiences.filter((a) => saTokens.apiAudiences.includes(a));
      return good.length > 0 ? { user, audiences: good } : undefined;
    }
    const verdict = await saTokens.authenticate(token, getObject, audiences);
    return verdict === undefined || verdict === 'invalid' ? undefined : verdict;
  };
  // The reviews: resources with no store, answered by the authenticator and the authorizer.
  for (const ep of authenticationReviews(lookupToken, saTokens.apiAudiences)) registry.add(ep);
  const rbac = registryRbacStores(registry);
  // RBAC decides from the watch caches of its four kinds, as upstream's authorizer from its informers.
  await Promise.all(Object.values(rbac).map((store) => store.start()));
  const resolver = new RbacResolver(rbac);
  const mode = options.authorizationMode ?? 'RBAC';
  const localAuthorizer = options.authorizer ?? (mode === 'RBAC' ? rbacAuthorizer(resolver) : alwaysAllow);
  const authorizer = delegation.authorizationCore ? delegatedAuthorizer(localAuthorizer, delegation.authorizationCore) : localAuthorizer;
  for (const ep of authorizationReviews(authorizer)) registry.add(ep);
  return { authenticator, identities, getObject, authorizer, resolver };
}
