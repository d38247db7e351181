/**
 * Delegated authentication and authorization, as an extension API server does them against its core
 * cluster (--authentication-kubeconfig, --authorization-kubeconfig): a bearer token kapi does not know is
 * reviewed by the core cluster (a TokenReview), and a request the local authorizer does not allow is asked
 * of it (a SubjectAccessReview). Answers are cached as upstream caches them (10 s, both ways), in bounded
 * caches keyed by a digest of the token and by the request's attributes.
 */
import { createHash } from 'node:crypto';
import type { Client } from '../sdk/client.js';
import type { UserInfo } from '../api/authentication.js';
import type { Attributes, Authorizer, Decision } from '../api/authorization.js';

const TTL_MS = 10_000;
const MAX_ENTRIES = 10_000;

/** A bounded map whose entries live `ttlMs`. */
class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; expires: number }>();
  constructor(private readonly ttlMs: number) {}

  get(key: string): V | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.expires < Date.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return e.value;
  }

  set(key: string, value: V): void {
    if (this.entries.size >= MAX_ENTRIES) {
      // The oldest first (insertion order).
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(key, { value, expires: Date.now() + this.ttlMs });
  }
}

/** Bearer tokens reviewed by the core cluster. */
export class DelegatedAuthenticator {
  private readonly cache = new TtlCache<UserInfo | null>(TTL_MS);
  private readonly inFlight = new Map<string, Promise<UserInfo | undefined>>();

  constructor(
    private readonly client: Client,
    private readonly audiences: string[] = [],
  ) {}

  async authenticate(token: string): Promise<UserInfo | undefined> {
    const key = createHash('sha256').update(token).digest('base64url');
    const cached = this.cache.get(key);
    if (cached !== undefined) return cached ?? undefined;
    let pending = this.inFlight.get(key);
    if (!pending) {
      pending = this.review(token).finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, pending);
    }
    return pending;
  }

  private async review(token: string): Promise<UserInfo | undefined> {
    const reviews = this.client.resource({ group: 'authentication.k8s.io', version: 'v1', resource: 'tokenreviews' });
    const answer = await reviews.create(undefined, {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      metadata: {},
      spec: { token, ...(this.audiences.length > 0 ? { audiences: this.audiences } : {}) },
    });
    const status = answer.status ?? {};
    const key = createHash('sha256').update(token).digest('base64url');
    if (status.authenticated !== true || typeof status.user?.username !== 'string') {
      this.cache.set(key, null);
      return undefined;
    }
    const u = status.user;
    const user: UserInfo = {
      name: u.username,
      uid: typeof u.uid === 'string' ? u.uid : '',
      groups: Array.isArray(u.groups) ? u.groups.map(String) : [],
      ...(u.extra && typeof u.extra === 'object' ? { extra: u.extra as Record<string, string[]> } : {}),
    };
    this.cache.set(key, user);
    return user;
  }
}

/**
 * The local authorizer first (kapi's own controllers, system:masters), then the core cluster's decision
 * through a SubjectAccessReview, as an extension server's delegating authorizer.
 */
export function delegatedAuthorizer(local: Authorizer, client: Client): Authorizer {
  const cache = new TtlCache<Decision>(TTL_MS);
  const reviews = client.resource({ group: 'authorization.k8s.io', version: 'v1', resource: 'subjectaccessreviews' });
  const ask = async (a: Attributes): Promise<Decision> => {
    const u = a.user!;
    const spec = {
      user: u.name,
      uid: u.uid,
      groups: u.groups,
      ...(u.extra ? { extra: u.extra } : {}),
      ...(a.resourceRequest
        ? {
            resourceAttributes: {
              namespace: a.namespace,
              verb: a.verb,
              group: a.apiGroup,
              version: a.apiVersion,
              resource: a.resource,
              subresource: a.subresource,
              name: a.name,
            },
          }
        : { nonResourceAttributes: { path: a.path, verb: a.verb } }),
    };
    const answer = await reviews.create(undefined, { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', metadata: {}, spec });
    const status = answer.status ?? {};
    const reason = typeof status.reason === 'string' ? status.reason : typeof status.evaluationError === 'string' ? status.evaluationError : '';
    return { decision: status.allowed === true ? 'allow' : status.denied === true ? 'deny' : 'no-opinion', reason };
  };
  return {
    async authorize(a) {
      const mine = await local.authorize(a);
      if (mine.decision === 'allow' || !a.user) return mine;
      const key = JSON.stringify([a.user.name, a.user.uid, a.user.groups, a.user.extra ?? null, a.resourceRequest, a.verb, a.path, a.apiGroup, a.apiVersion, a.resource, a.subresource, a.namespace, a.name]);
      const cached = cache.get(key);
      if (cached) return cached;
      const decision = await ask(a);
      cache.set(key, decision);
      return decision;
    },
  };
}
