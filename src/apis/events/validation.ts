/**
 * ValidateEventCreate: every Event passes the legacy checks (the involved object's namespace, and for
 * an Event with an eventTime the reporting fields and their lengths); one created through
 * events.k8s.io/v1 must also be of the new model (eventTime, a Normal or Warning type, none of the
 * deprecated fields). Objects are in their storage form (core/v1 names); errors name the fields as
 * the request's group does.
 */
import { field, type FieldError } from '../../machinery/field-errors.js';
import { isDNS1123Subdomain, isQualifiedName } from '../../machinery/validation.js';
import type { Strategy } from '../../registry/types.js';
import type { KObject } from '../../api/object.js';
import { isRecord } from '../../util/json-object.js';

const LIMIT = { reportingInstance: 128, action: 128, reason: 128, note: 1024 };
const text = (v: unknown) => (typeof v === 'string' ? v : '');

function validateEventCreate(event: KObject, group: string): FieldError[] {
  const errs: FieldError[] = [];
  const strict = group === 'events.k8s.io';
  const namespace = text(event.metadata.namespace);
  const involved = isRecord(event.involvedObject) ? event.involvedObject : {};
  const involvedNamespace = text(involved.namespace);
  const mismatch = () => field.invalid('involvedObject.namespace', involvedNamespace, 'does not match event.namespace');
  if (!event.eventTime) {
    if (!involvedNamespace ? namespace !== '' && namespace !== 'default' : namespace !== involvedNamespace) errs.push(mismatch());
  } else {
    if (!involvedNamespace && namespace !== 'default' && namespace !== 'kube-system') errs.push(mismatch());
    const controller = strict ? 'reportingController' : 'reportingComponent';
    const reporting = text(event.reportingComponent);
    if (!reporting) errs.push(field.required(controller, ''));
    for (const msg of isQualifiedName(reporting)) errs.push(field.invalid(controller, reporting, msg));
    for (const [name, path, limit] of [
      ['reportingInstance', 'reportingInstance', LIMIT.reportingInstance],
      ['action', 'action', LIMIT.action],
      ['reason', 'reason', LIMIT.reason],
    ] as const) {
      const value = text(event[name]);
      if (!value) errs.push(field.required(path, ''));
      if (value.length > limit) errs.push(field.invalid(path, '', `can have at most ${limit} characters`));
    }
    if (text(event.message).length > LIMIT.note) errs.push(field.invalid('message', '', `can have at most ${LIMIT.note} characters`));
  }
  for (const msg of isDNS1123Subdomain(namespace)) errs.push(field.invalid('namespace', namespace, msg));
  if (!strict) return errs;
  if (!event.eventTime) errs.push(field.required('eventTime', ''));
  if (event.type !== 'Normal' && event.type !== 'Warning') errs.push(field.invalid('type', '', `has invalid value: ${text(event.type)}`));
  if (event.firstTimestamp) errs.push(field.invalid('deprecatedFirstTimestamp', '', 'needs to be unset'));
  if (event.lastTimestamp) errs.push(field.invalid('deprecatedLastTimestamp', '', 'needs to be unset'));
  if (typeof event.count === 'number' && event.count !== 0) errs.push(field.invalid('deprecatedCount', '', 'needs to be unset'));
  const source = isRecord(event.source) ? event.source : {};
  if (text(source.component) || text(source.host)) errs.push(field.invalid('deprecatedSource', '', 'needs to be unset'));
  return errs;
}

export function eventStrategy(base: Strategy): Strategy {
  return {
    ...base,
    validate: (event, ctx) => [...validateEventCreate(event, ctx.group ?? ''), ...(base.validate?.(event, ctx) ?? [])],
  };
}
