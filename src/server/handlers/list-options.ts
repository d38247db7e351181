/**
 * The query parameters of list, watch and deletecollection: selectors,
 * pagination and resourceVersion semantics, validated with apiserver's messages.
 */
import { decodeContinue, encodeContinue } from '../../machinery/continue-token.js';
import { field, type FieldError } from '../../machinery/field-errors.js';
import { stringifyJson } from '../../machinery/json.js';
import { goQuote } from '../../machinery/go-text.js';
import { parseFieldSelector, type FieldRequirement } from '../../machinery/fields.js';
import { parseLabelSelector, plainLabels } from '../../machinery/labels.js';
import { errors, StatusError } from '../../machinery/status.js';
import type { StoreListOptions } from '../../registry/store.js';
import type { KObject } from '../../api/object.js';
import { isTrue } from '../request-info.js';
import type { HandlerContext } from './context.js';
import { int64Param } from './query-params.js';

export interface ListParams {
  store: StoreListOptions;
  /** For watches: events after this revision; undefined: start with the current objects. */
  watchFrom?: number;
  timeoutSeconds?: number;
  bookmarks: boolean;
  /** Watch-list: the current objects first (true) or not (false), then a bookmark marking their end. */
  sendInitialEvents?: boolean;
  /**
   * What the request selects on the object in its version, after `endpoint.prepare` (field selectors
   * on selectable fields a conversion may move); `store.filter` has the rest, `store.select` applies it to lists.
   */
  converted?: (objectInVersion: KObject) => boolean;
}

export const EXPIRED_CONTINUE =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

const listOptionsKind = { group: 'meta.k8s.io', resource: 'ListOptions' };

export function parseResourceVersion(rv: string, fieldName = 'resourceVersion'): number {
  if (!/^[0-9]+$/.test(rv)) {
    throw errors.badRequest(`${fieldName}: Invalid value: ${JSON.stringify(rv)}: strconv.ParseUint: parsing ${JSON.stringify(rv)}: invalid syntax`);
  }
  return Number(rv);
}

export function parseListParams(ctx: HandlerContext): ListParams {
  const q = ctx.query;
  const { endpoint, info } = ctx;
  const filters: Array<(o: KObject) => boolean> = [];

  const labelText = q.get('labelSelector') ?? '';
  let labels: StoreListOptions['labels'];
  if (labelText) {
    const sel = asBadRequest(() => parseLabelSelector(labelText));
    if (!sel.empty) {
      labels = (l) => sel.matches(l);
      filters.push((o) => sel.matches(plainLabels(o.metadata?.labels)));
    }
  }
  const fieldText = q.get('fieldSelector') ?? '';
  const fieldSel = fieldText ? asBadRequest(() => parseFieldSelector(fieldText)) : undefined;
  // Each label as the paths it reads: a built-in's as its kind's field label conversion has it, a custom
  // resource's metadata.name, metadata.namespace (namespaced) and its version's selectableFields.
  const requirements = (fieldSel?.requirements ?? []).map((r): FieldRequirement => {
    if (endpoint.fieldLabel) {
      const resolved = endpoint.fieldLabel(r.field);
      if ('error' in resolved) throw errors.badRequest(resolved.error);
      return resolved.path === r.field ? r : { ...r, field: resolved.path };
    }
    const supported =
      r.field === 'metadata.name' || (r.field === 'metadata.namespace' && endpoint.names.namespaced) || (endpoint.selectableFields?.includes(r.field) ?? false);
    if (!supported) throw errors.badRequest(`field label not supported: ${r.field}`);
    return r;
  });
  if (info.name !== undefined) {
    const other = fieldSel?.requirements.find((r) => r.field === 'metadata.name' && (r.operator !== '=' || r.value !== info.name));
    if (other) throw errors.badRequest('fieldSelector metadata.name doesn\'t match requested name');
    filters.push((o) => o.metadata?.name === info.name);
  }
  // Selectable fields are the request version's: with a conversion that may move them (webhook,
  // in-process), they are read from the converted object, after the conversion.
  const inVersion = endpoint.prepare ? requirements.filter((r) => !r.field.startsWith('metadata.')) : [];
  const byMetadata = inVersion.length > 0 ? requirements.filter((r) => r.field.startsWith('metadata.')) : requirements;
  // A built-in's fields are those of the request's version (events.k8s.io Events are stored as core ones).
  const view = endpoint.scope.convertsInHandler ? endpoint.toVersion : (o: KObject) => o;
  const builtin = endpoint.fieldLabel !== undefined;
  if (byMetadata.length > 0) filters.push((o) => byMetadata.every((r) => requirementMatches(r, view(o), builtin)));
  const converted = inVersion.length > 0 ? (o: KObject) => inVersion.every((r) => requirementMatches(r, o, builtin)) : undefined;

  const rv = q.get('resourceVersion') ?? '';
  const match = q.get('resourceVersionMatch') ?? '';
  const cont = q.get('continue') ?? '';
  const limit = int64Param(q, 'limit') ?? 0;
  const timeoutSeconds = int64Param(q, 'timeoutSeconds');
  const sendInitialEvents = goBoolParam(q, 'sendInitialEvents');
  const watch = info.verb === 'watch';
  const problems = watch ? watchOptionErrors(match, cont, sendInitialEvents) : listOptionErrors(match, rv, cont, sendInitialEvents);
  if (problems.length > 0) throw errors.invalid(listOptionsKind, '', problems);

  const store: StoreListOptions = {
    namespace: info.namespace,
    filter: filters.length === 0 ? undefined : filters.length === 1 ? filters[0] : (o) => filters.every((f) => f(o)),
    labels,
    // One name (the object of a named watch, or metadata.name=): the cache reads that key alone.
    name: info.name ?? requirements.find((r) => r.field === 'metadata.name' && r.operator === '=')?.value,
    // A list of many objects goes no further once its client is gone or has its answer (a timeout's 504).
    aborted: () => ctx.res.destroyed || ctx.res.writableEnded,
    // The watch cache ignores the limit of a list at resourceVersion "0" (cacher's computeListLimit).
    limit: limit > 0 && !(rv === '0' && !cont) ? limit : undefined,
  };
  if (converted) {
    const prepare = endpoint.prepare!;
    store.select = async (objects) => {
      await prepare(objects);
      return objects.filter((o) => converted(endpoint.toVersion(o)));
    };
  }
  if (cont) {
    if (rv && rv !== '0') throw errors.badRequest('specifying resource version is not allowed when using continue');
    let token: { rv: number; start: string };
    try {
      token = decodeContinue(cont);
    } catch (err) {
      throw errors.badRequest(`invalid continue token: ${(err as Error).message}`);
    }
    store.revision = token.rv;
    store.startKey = endpoint.store.prefix + token.start;
  } else if (rv === '') {
    store.consistent = true;
  } else if (rv !== '0') {
    const n = parseResourceVersion(rv);
    if (match === 'Exact' || (!match && store.limit)) store.revision = n;
    else store.minRevision = n;
  }

  // Watch-list asks for the state at least as new as resourceVersion (any, for "" and "0"), from the cache.
  const fromState = sendInitialEvents === true;
  return {
    store,
    watchFrom: rv === '' || rv === '0' || fromState ? undefined : parseResourceVersion(rv),
    timeoutSeconds: timeoutSeconds === undefined ? undefined : Math.max(0, timeoutSeconds),
    bookmarks: isTrue(q.get('allowWatchBookmarks')),
    sendInitialEvents,
    converted,
  };
}

/** ValidateListOptions for a list (and deletecollection). */
function listOptionErrors(match: string, rv: string, cont: string, sendInitialEvents: boolean | undefined): FieldError[] {
  const errs: FieldError[] = [];
  if (match) {
    if (!rv) errs.push(field.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden unless resourceVersion is provided'));
    if (cont) errs.push(field.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
    if (match !== 'Exact' && match !== 'NotOlderThan') errs.push(field.notSupported('resourceVersionMatch', match, ['Exact', 'NotOlderThan', '']));
    if (match === 'Exact' && rv === '0') errs.push(field.forbidden('resourceVersionMatch', 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'));
  }
  if (sendInitialEvents !== undefined) errs.push(field.forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for list'));
  return errs;
}

/** validateWatchOptions, with the WatchList feature on (as it is by default upstream). */
function watchOptionErrors(match: string, cont: string, sendInitialEvents: boolean | undefined): FieldError[] {
  const errs: FieldError[] = [];
  if (sendInitialEvents !== undefined && match !== 'NotOlderThan') {
    errs.push(field.forbidden('resourceVersionMatch', 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan'));
  }
  if (match) {
    if (sendInitialEvents === undefined) errs.push(field.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided'));
    if (match !== 'NotOlderThan') errs.push(field.notSupported('resourceVersionMatch', match, ['NotOlderThan']));
    if (cont) errs.push(field.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
  }
  return errs;
}

/** A boolean query parameter as Go's strconv.ParseBool reads it; absent: undefined. */
function goBoolParam(q: URLSearchParams, name: string): boolean | undefined {
  const v = q.get(name);
  if (v === null) return undefined;
  if (['1', 't', 'T', 'true', 'TRUE', 'True'].includes(v)) return true;
  if (['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(v)) return false;
  throw errors.badRequest(`strconv.ParseBool: parsing ${goQuote(v.length > 64 ? v.slice(0, 64) : v)}: invalid syntax`);
}

/** Continue token for the next page, relative to the resource's key prefix. */
export function continueToken(ctx: HandlerContext, revision: number, continueKey: string | undefined): string {
  return continueKey === undefined ? '' : encodeContinue(revision, continueKey.slice(ctx.endpoint.store.prefix.length));
}

/** Map an expired snapshot to the 410 a paginating client expects. */
export function expiredContinue(err: unknown, usedContinue: boolean): unknown {
  if (usedContinue && err instanceof StatusError && err.code === 410) return errors.expired(EXPIRED_CONTINUE);
  return err;
}

/** Selector syntax errors are the client's: 400 with the parser's message. */
function asBadRequest<T>(parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    if (err instanceof StatusError) throw err;
    throw errors.badRequest((err as Error).message);
  }
}

function requirementMatches(r: FieldRequirement, obj: KObject, builtin: boolean): boolean {
  return (fieldValue(obj, r.field, builtin) === r.value) === (r.operator === '=');
}

/**
 * The built-in field labels that are not strings: a built-in's field set prints the Go value, so an absent one is
 * its zero value (`spec.unschedulable=false` selects a Node that does not say it, as kube-controller-manager and the
 * e2e framework ask).
 */
const BUILTIN_ZERO_VALUES: Readonly<Record<string, string>> = { 'spec.unschedulable': 'false', 'spec.hostNetwork': 'false', 'status.replicas': '0', 'status.successful': '0' };

function fieldValue(obj: KObject, path: string, builtin: boolean): string {
  const absent = builtin ? (BUILTIN_ZERO_VALUES[path] ?? '') : ''; // a custom resource's absent field: the empty string, as upstream
  let cur: unknown = obj;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return absent;
    cur = (cur as Record<string, unknown>)[part];
  }
  if (cur === undefined || cur === null) return absent;
  return typeof cur === 'object' ? stringifyJson(cur) : String(cur);
}
