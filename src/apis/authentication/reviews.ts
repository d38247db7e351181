/**
 * authentication.k8s.io/v1 reviews, served without a store: TokenReview (is
 * this bearer token valid, and whose is it) and SelfSubjectReview (who am I:
 * `kubectl auth whoami`), as upstream's registry/authentication answers them.
 */
import { errors } from '../../machinery/status.js';
import type { AdmissionUser } from '../../registry/admission.js';
import type { VirtualEndpoint } from '../../registry/registry.js';
import type { KObject } from '../../api/object.js';
import { virtualEndpoint } from '../virtual.js';

const GROUP = 'authentication.k8s.io';

/** authentication.k8s.io UserInfo: uid and extra are left out when empty. */
export function userInfoObject(user: AdmissionUser): KObject {
  const info: KObject = { username: user.name };
  if (user.uid) info.uid = user.uid;
  info.groups = [...user.groups];
  if (user.extra && Object.keys(user.extra).length > 0) info.extra = user.extra;
  return info;
}

/**
 * Finds the user a bearer token belongs to, for one of `audiences`, and the audiences it is good for
 * (undefined: not a valid token). A token bound to no audience is good for those asked.
 */
export type TokenLookup = (token: string, audiences: string[]) => Promise<{ user: AdmissionUser; audiences: string[] } | undefined>;

/** `apiAudiences`: what a review that names no audiences asks for (the API server's own). */
export function authenticationReviews(lookupToken: TokenLookup, apiAudiences: string[]): VirtualEndpoint[] {
  return [
    virtualEndpoint(GROUP, 'v1', 'tokenreviews', 'TokenReview', async (review) => {
      const token = review.spec?.token;
      if (typeof token !== 'string' || token === '') throw errors.badRequest('token is required for TokenReview in authentication');
      const asked = Array.isArray(review.spec?.audiences) && review.spec.audiences.length > 0 ? review.spec.audiences.map(String) : apiAudiences;
      const found = await lookupToken(token, asked);
      const status: KObject = {};
      if (found) status.authenticated = true;
      status.user = found ? userInfoObject(found.user) : {};
      if (found && found.audiences.length > 0) status.audiences = found.audiences;
      return { ...review, metadata: { ...review.metadata, creationTimestamp: review.metadata?.creationTimestamp ?? null }, status };
    }),
    virtualEndpoint(GROUP, 'v1', 'selfsubjectreviews', 'SelfSubjectReview', (review, request) => {
      if (!request.user) throw errors.badRequest('no user present on request');
      return {
        apiVersion: review.apiVersion,
        kind: review.kind,
        metadata: { creationTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z') },
        status: { userInfo: userInfoObject(request.user) },
      };
    }),
  ];
}
