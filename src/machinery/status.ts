/**
 * Kubernetes API errors: `metav1.Status` bodies with apimachinery's codes,
 * reasons and message texts (k8s.io/apimachinery/pkg/api/errors).
 */
import { aggregateMessage, fieldErrorBody, type FieldError } from './field-errors.js';

/** metav1.StatusReason: why a request failed, in a word that clients branch on ('' when unknown). */
export type StatusReason =
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Gone'
  | 'Invalid'
  | 'ServerTimeout'
  | 'Timeout'
  | 'TooManyRequests'
  | 'BadRequest'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'RequestEntityTooLarge'
  | 'UnsupportedMediaType'
  | 'InternalError'
  | 'Expired'
  | 'ServiceUnavailable'
  | '';

/** metav1.StatusCause: one cause of a failure, e.g. one field error of an Invalid Status. */
export interface StatusCause {
  /** For a field error its FieldErrorType, e.g. `FieldValueInvalid`. */
  reason?: string;
  message?: string;
  /** The field's path, e.g. `spec.replicas`. */
  field?: string;
}

/** metav1.StatusDetails: which object a failure is about, and its causes. */
export interface StatusDetails {
  name?: string;
  group?: string;
  /** The kind; upstream's errors (and kapi's) put the resource here, e.g. `pods`. */
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  /** Seconds to wait before trying again (sent as the Retry-After header too). */
  retryAfterSeconds?: number;
}

/** metav1.Status: the body of an API error (and of some successes, such as a delete's). */
export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, unknown>;
  status: 'Success' | 'Failure';
  message?: string;
  reason?: StatusReason;
  details?: StatusDetails;
  code?: number;
}

/** A group-qualified resource (`noxus.mygroup.example.com`) or kind (`WishIHadChosenNoxu.mygroup.example.com`). */
export interface GroupResource {
  group: string;
  resource: string;
}

export const qualified = (gr: GroupResource): string => (gr.group ? `${gr.resource}.${gr.group}` : gr.resource);

/**
 * A Kubernetes API error, as apimachinery's StatusError: what the server answers a failed request with, and
 * what the SDK's clients reject with (`err.code === 404`, `err.reason === 'Conflict'`...).
 */
export class StatusError extends Error {
  constructor(
    /** The HTTP status code, e.g. 404, 409, 422. */
    readonly code: number,
    readonly reason: StatusReason,
    message: string,
    /** Which object, and for 422 Invalid the field errors as causes. */
    readonly details?: StatusDetails,
  ) {
    super(message);
    this.name = 'StatusError';
  }

  /** The metav1.Status body of this error. */
  toStatus(): Status {
    const s: Status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: this.message };
    if (this.reason) s.reason = this.reason;
    if (this.details) s.details = wireDetails(this.details);
    s.code = this.code;
    return s;
  }
}

/**
 * StatusDetails as upstream's JSON has them: every field is omitempty (a core-group error has no
 * `group`, a nameless one no `name`), in the struct's order; causes likewise.
 */
function wireDetails(d: StatusDetails): StatusDetails {
  const out: StatusDetails = {};
  if (d.name) out.name = d.name;
  if (d.group) out.group = d.group;
  if (d.kind) out.kind = d.kind;
  if (d.uid) out.uid = d.uid;
  if (d.causes?.length) {
    out.causes = d.causes.map((c) => {
      const cause: StatusCause = {};
      if (c.reason) cause.reason = c.reason;
      if (c.message) cause.message = c.message;
      if (c.field) cause.field = c.field;
      return cause;
    });
  }
  if (d.retryAfterSeconds) out.retryAfterSeconds = d.retryAfterSeconds;
  return out;
}

export const errors = {
  notFound: (gr: GroupResource, name: string) =>
    new StatusError(404, 'NotFound', `${qualified(gr)} "${name}" not found`, { name, group: gr.group, kind: gr.resource }),
  alreadyExists: (gr: GroupResource, name: string, prefix = '') =>
    new StatusError(409, 'AlreadyExists', `${prefix}${qualified(gr)} "${name}" already exists`, { name, group: gr.group, kind: gr.resource }),
  conflict: (gr: GroupResource, name: string, why: string) =>
    new StatusError(409, 'Conflict', `Operation cannot be fulfilled on ${qualified(gr)} "${name}": ${why}`, { name, group: gr.group, kind: gr.resource }),
  /** `gk` is a group-qualified kind, e.g. {group: 'mygroup.example.com', resource: 'WishIHadChosenNoxu'}. */
  invalid: (gk: GroupResource, name: string, errs: FieldError[]) =>
    new StatusError(422, 'Invalid', errs.length ? `${qualified(gk)} "${name}" is invalid: ${aggregateMessage(errs)}` : `${qualified(gk)} "${name}" is invalid`, {
      name,
      group: gk.group,
      kind: gk.resource,
      causes: errs.map((e) => ({ reason: e.type, message: fieldErrorBody(e), field: e.field })),
    }),
  badRequest: (message: string) => new StatusError(400, 'BadRequest', message),
  unauthorized: (message = 'Unauthorized') => new StatusError(401, 'Unauthorized', message),
  forbidden: (gr: GroupResource, name: string, why: string) =>
    new StatusError(403, 'Forbidden', name ? `${qualified(gr)} "${name}" is forbidden: ${why}` : `${qualified(gr)} is forbidden: ${why}`, {
      name: name || undefined,
      group: gr.group,
      kind: gr.resource,
    }),
  methodNotSupported: (gr: GroupResource, verb: string) =>
    new StatusError(405, 'MethodNotAllowed', `${verb} is not supported on resources of kind "${qualified(gr)}"`, { group: gr.group, kind: gr.resource }),
  notAcceptable: (accepted: string[]) =>
    new StatusError(406, 'NotAcceptable', `only the following media types are accepted: ${accepted.join(', ')}`),
  unsupportedMediaType: (accepted: readonly string[]) =>
    new StatusError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`),
  tooLarge: (limit: number) => new StatusError(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${limit}`),
  expired: (message: string) => new StatusError(410, 'Expired', message),
  gone: (message: string) => new StatusError(410, 'Gone', message),
  internal: (message: string) =>
    new StatusError(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] }),
  serviceUnavailable: (message: string, retryAfterSeconds?: number) =>
    new StatusError(503, 'ServiceUnavailable', message, retryAfterSeconds ? { retryAfterSeconds } : undefined),
  timeout: (message: string, retryAfterSeconds = 0) =>
    new StatusError(504, 'Timeout', `Timeout: ${message}`, retryAfterSeconds ? { retryAfterSeconds } : undefined),
  tooManyRequests: (message: string, retryAfterSeconds: number) =>
    new StatusError(429, 'TooManyRequests', message, { retryAfterSeconds }),
};

/** The body of a successful delete: no code (omitempty), details naming what was deleted. */
export function successStatus(details?: StatusDetails): Status {
  const s: Status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success' };
  if (details) s.details = wireDetails(details);
  return s;
}
