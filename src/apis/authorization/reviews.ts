/**
 * authorization.k8s.io/v1 reviews, served without a store, as upstream's
 * registry/authorization answers them: SubjectAccessReview (may this user do
 * this), SelfSubjectAccessReview (may I: `kubectl auth can-i`),
 * LocalSubjectAccessReview (the same within a namespace) and
 * SelfSubjectRulesReview (what may I do here: `kubectl auth can-i --list`).
 * They ask the server's authorizer.
 */
import { field, type FieldError } from '../../machinery/field-errors.js';
import { errors } from '../../machinery/status.js';
import type { AdmissionUser } from '../../registry/admission.js';
import type { VirtualEndpoint } from '../../registry/registry.js';
import type { KObject } from '../../api/object.js';
import type { Attributes, Authorizer } from '../../api/authorization.js';
import { virtualEndpoint } from '../virtual.js';

const GROUP = 'authorization.k8s.io';

function isObject(v: unknown): v is KObject {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** The checks of ValidateSubjectAccessReviewSpec (self: without the user). */
function specErrors(spec: KObject, self: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const resource = isObject(spec.resourceAttributes) ? spec.resourceAttributes : undefined;
  const nonResource = isObject(spec.nonResourceAttributes) ? spec.nonResourceAttributes : undefined;
  if (resource && nonResource) errs.push(field.invalid('spec.nonResourceAttributes', nonResource, 'cannot be specified in combination with resourceAttributes'));
  if (!resource && !nonResource) errs.push(field.invalid('spec.resourceAttributes', null, 'exactly one of nonResourceAttributes or resourceAttributes must be specified'));
  if (!self && !str(spec.user) && !(Array.isArray(spec.groups) && spec.groups.length > 0)) {
    errs.push(field.invalid('spec.user', str(spec.user), 'at least one of user or group must be specified'));
  }
  return errs;
}

/** Whether metadata is empty but for what is allowed (namespace for a local review; managedFields always). */
function metadataErrors(metadata: KObject | undefined, allowNamespace: boolean): FieldError[] {
  const rest = Object.entries(metadata ?? {}).filter(([k, v]) => k !== 'managedFields' && !(allowNamespace && k === 'namespace') && v !== undefined && v !== null && v !== '');
  if (rest.length === 0) return [];
  return [field.invalid('metadata', Object.fromEntries(rest), allowNamespace ? 'must be empty except for namespace' : 'must be empty')];
}

/** authorizationutil.ResourceAttributesFrom / NonResourceAttributesFrom. */
function attributesFrom(user: AdmissionUser, spec: KObject): Attributes {
  const r = isObject(spec.resourceAttributes) ? spec.resourceAttributes : undefined;
  if (r) {
    return {
      user: { name: user.name, uid: user.uid ?? '', groups: user.groups, extra: user.extra },
      verb: str(r.verb),
      resourceRequest: true,
      path: '',
      apiGroup: str(r.group),
      apiVersion: str(r.version) || '*',
      resource: str(r.resource),
      subresource: str(r.subresource),
      namespace: str(r.namespace),
      name: str(r.name),
    };
  }
  const n = (spec.nonResourceAttributes ?? {}) as KObject;
  return {
    user: { name: user.name, uid: user.uid ?? '', groups: user.groups, extra: user.extra },
    verb: str(n.verb),
    resourceRequest: false,
    path: str(n.path),
    apiGroup: '',
    apiVersion: '',
    resource: '',
    subresource: '',
    namespace: '',
    name: '',
  };
}

async function decide(authorizer: Authorizer, attributes: Attributes): Promise<KObject> {
  const d = await authorizer.authorize(attributes);
  const status: KObject = { allowed: d.decision === 'allow' };
  if (d.decision === 'deny') status.denied = true;
  if (d.reason) status.reason = d.reason;
  return status;
}

function invalid(kind: string, errs: FieldError[]) {
  return errors.invalid({ group: GROUP, resource: kind }, '', errs);
}

/** A review as upstream answers it: the object sent, metadata as a typed object serializes, and the status. */
function answer(review: KObject, status: KObject): KObject {
  return { ...review, metadata: { ...review.metadata, creationTimestamp: review.metadata?.creationTimestamp ?? null }, status };
}

function userOfSpec(spec: KObject): AdmissionUser {
  const extra = isObject(spec.extra) ? (spec.extra as Record<string, string[]>) : undefined;
  return { name: str(spec.user), uid: str(spec.uid), groups: Array.isArray(spec.groups) ? spec.groups.map(String) : [], extra };
}

export function authorizationReviews(authorizer: Authorizer): VirtualEndpoint[] {
  return [
    virtualEndpoint(GROUP, 'v1', 'subjectaccessreviews', 'SubjectAccessReview', async (review) => {
      const spec = isObject(review.spec) ? review.spec : {};
      const errs = [...specErrors(spec, false), ...metadataErrors(review.metadata, false)];
      if (errs.length > 0) throw invalid('SubjectAccessReview', errs);
      return answer(review, await decide(authorizer, attributesFrom(userOfSpec(spec), spec)));
    }),
    virtualEndpoint(GROUP, 'v1', 'selfsubjectaccessreviews', 'SelfSubjectAccessReview', async (review, request) => {
      const spec = isObject(review.spec) ? review.spec : {};
      const errs = [...specErrors(spec, true), ...metadataErrors(review.metadata, false)];
      if (errs.length > 0) throw invalid('SelfSubjectAccessReview', errs);
      if (!request.user) throw errors.badRequest('no user present on request');
      return answer(review, await decide(authorizer, attributesFrom(request.user, spec)));
    }),
    virtualEndpoint(
      GROUP,
      'v1',
      'localsubjectaccessreviews',
      'LocalSubjectAccessReview',
      async (review, request) => {
        const spec = isObject(review.spec) ? review.spec : {};
        const namespace = str(review.metadata?.namespace) || (request.namespace ?? '');
        if (review.metadata?.namespace && review.metadata.namespace !== request.namespace) {
          throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
        }
        const errs = [...specErrors(spec, false), ...metadataErrors(review.metadata, true)];
        if (isObject(spec.resourceAttributes) && str(spec.resourceAttributes.namespace) !== namespace) {
          errs.push(field.invalid('spec.resourceAttributes.namespace', str(spec.resourceAttributes.namespace), 'must match metadata.namespace'));
        }
        if (isObject(spec.nonResourceAttributes)) errs.push(field.invalid('spec.nonResourceAttributes', spec.nonResourceAttributes, 'disallowed on this kind of request'));
        if (errs.length > 0) throw invalid('LocalSubjectAccessReview', errs);
        const sent = { ...review, metadata: { ...review.metadata, namespace } };
        return answer(sent, await decide(authorizer, attributesFrom(userOfSpec(spec), spec)));
      },
      true,
    ),
    virtualEndpoint(GROUP, 'v1', 'selfsubjectrulesreviews', 'SelfSubjectRulesReview', async (review, request) => {
      if (!request.user) throw errors.badRequest('no user present on request');
      const namespace = str(review.spec?.namespace);
      if (!namespace) throw errors.badRequest('no namespace on request');
      const user = request.user;
      const rules = authorizer.rulesFor
        ? await authorizer.rulesFor({ name: user.name, uid: user.uid ?? '', groups: user.groups, extra: user.extra }, namespace)
        : { resourceRules: [], nonResourceRules: [], incomplete: true };
      return {
        apiVersion: review.apiVersion,
        kind: review.kind,
        metadata: { creationTimestamp: null },
        spec: {},
        status: {
          resourceRules: rules.resourceRules,
          nonResourceRules: rules.nonResourceRules,
          incomplete: rules.incomplete,
          ...(rules.evaluationError ? { evaluationError: rules.evaluationError } : {}),
        },
      };
    }),
  ];
}
