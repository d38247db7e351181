/**
 * Dynamic admission webhooks, as kube-apiserver's MutatingAdmissionWebhook and ValidatingAdmissionWebhook
 * plugins: every write is matched against the stored webhook configurations (in name order, webhooks in
 * their order) by rules (operations, groups, versions, resources and subresources, scope), the namespace's
 * labels (the object's own for a Namespace) and the object's; a match gets an AdmissionReview (v1, or
 * v1beta1 when that is all it speaks) over HTTPS to its URL or Service, with `?timeout=<n>s` and a real
 * deadline. Mutating webhooks run one after another before the object is validated, their JSONPatch
 * applied in turn; validating ones run together after. A denial is the client's error as upstream words
 * it (`admission webhook "x" denied the request: ...`); a webhook that cannot be reached fails the request
 * (failurePolicy Fail) or is skipped (Ignore). A dry run is refused by webhooks with side effects. Writes of
 * the admission configuration kinds themselves are never sent to webhooks.
 *
 * matchConditions (CEL over object, oldObject and request) must all hold for a webhook to be called.
 *
 * A mutating webhook with reinvocationPolicy IfNeeded is called again when a later one changed the object.
 *
 * A webhook sees the write in the version its rules matched: the request's own, or with matchPolicy Equivalent
 * (the default) another version of the same stored resource, converted, with requestKind and requestResource
 * naming what was written; a patch to it is converted back.
 */
import { randomUUID } from 'node:crypto';
import { errors, StatusError, type StatusReason } from '../../machinery/status.js';
import { applyJsonPatch, decodeJsonPatch } from '../../machinery/json-patch.js';
import { deepCloneMutable, parseJson, stringifyJson } from '../../machinery/json.js';
import type { LabelSelectorSpec } from '../../machinery/labels.js';
import { postJson, webhookTarget, type ServiceResolver } from '../../machinery/webhook-client.js';
import { matchConditionsHold } from './match-conditions.js';
import { matchedVersion, replaceContents, selectsObject, strings, versionedAttributes, type MatchedVersion, type VersionedAttributes } from './matching.js';
import type { ApiRegistry } from '../../registry/registry.js';
import type { Authorizer } from '../../api/authorization.js';
import { AuthorizationSession, requestAuthorizer } from './cel-authorizer.js';
import type { AdmissionAttributes, AdmissionPlugin } from '../../registry/admission.js';
import type { RestStore } from '../../registry/store.js';
import type { KObject } from '../../api/object.js';
import { isRecord, records, type JsonRecord } from '../../util/json-object.js';
import { deepEqual } from '../../util/deep-equal.js';

const GROUP = 'admissionregistration.k8s.io';

/**
 * An admission hook in the process (--admission-hooks): matched as a webhook is (`rules`, selectors), given
 * the AdmissionReview's `request` and answering what a webhook's `response` says (`allowed`, `status`,
 * `warnings`; a mutating hook's `patch` as JSONPatch operations), without a server or a certificate.
 */
export interface AdmissionHook {
  /** The webhook's name, as denials and metrics name it (`admission webhook "<name>" denied the request: ...`); required. */
  name: string;
  /** Mutating hooks run one after another before validation; validating ones together after it. */
  type: 'Mutating' | 'Validating';
  /** A webhook's rules (operations, apiGroups, apiVersions, resources, scope); at least one, else `start` rejects. */
  rules: unknown[];
  /** Only writes in namespaces whose labels match (a Namespace: its own; cluster-scoped objects always pass); absent or empty: all. */
  namespaceSelector?: LabelSelectorSpec;
  /** Only objects (new or old) whose labels match; absent or empty: all. */
  objectSelector?: LabelSelectorSpec;
  /** What a hook that throws, times out (10 s) or answers nothing means: Fail (the default) refuses the write, Ignore skips the hook. */
  failurePolicy?: 'Fail' | 'Ignore';
  /** Default None; a dry-run request is refused (400) by a hook whose side effects are Some or Unknown. */
  sideEffects?: 'None' | 'NoneOnDryRun' | 'Some' | 'Unknown';
  /** A mutating hook's: IfNeeded asks it again when a later hook or webhook changed the object. */
  reinvocationPolicy?: 'Never' | 'IfNeeded';
  /** Answers an AdmissionReview's `request` (a copy: uid, kind, resource, operation, object, oldObject, userInfo, dryRun...). */
  review(request: JsonRecord): AdmissionHookResponse | Promise<AdmissionHookResponse>;
}

/** An admission hook's answer: what an AdmissionReview's `response` says (the uid is filled in). */
export interface AdmissionHookResponse {
  /** false refuses the write, with `status` as the client's error. */
  allowed: boolean;
  /** A denial's code (default 400), reason and message, shown as `admission webhook "<name>" denied the request: <message>`. */
  status?: { code?: number; reason?: string; message?: string };
  /** Warnings for the client (Warning headers; at most 64, each cut to 1024 characters). */
  warnings?: string[];
  /** JSONPatch operations on the object (mutating hooks), or their base64 JSON as a webhook sends them. */
  patch?: unknown[] | string;
}

export interface WebhookAdmissionOptions {
  validating: RestStore;
  mutating: RestStore;
  namespaces: RestStore;
  resolveService: ServiceResolver;
  /** The server's authorizer, asked by matchConditions' `authorizer` checks. */
  authorizer?: Authorizer;
  /** The served resources: a webhook matching another version of the written resource (matchPolicy Equivalent) sees the object in that version. */
  registry?: ApiRegistry;
  /** Hooks in the process, asked before the stored webhooks. */
  hooks?: AdmissionHook[];
  /** Told of every call (upstream's admission webhook metrics). */
  observe?: (name: string, type: 'admit' | 'validating', operation: string, seconds: number, outcome: { rejected: boolean; code: number; error?: 'calling_webhook_error' | 'no_error' }) => void;
}

interface Hook {
  configuration: string;
  webhook: JsonRecord;
  review?: AdmissionHook['review'];
}

/** A webhook whose rules match a write, and the version they matched it in. */
interface Invocation {
  hook: Hook;
  matched: MatchedVersion;
}

/** A failure to call a webhook (not its answer): what failurePolicy decides on. */
class CallError extends Error {}
/** A patch that cannot be applied, or that changes what a webhook may not: always the request's failure. */
class PatchError extends CallError {}

/** Admission hooks' shapes, checked before anything opens: a clear error rather than a failure on the first write. */
export function checkAdmissionHooks(hooks: readonly AdmissionHook[]): void {
  hooks.forEach(checkHook);
}

function checkHook(h: AdmissionHook, i: number): void {
  const what = `admission hook ${i}${typeof h?.name === 'string' ? ` (${h.name})` : ''}`;
  if (typeof h?.name !== 'string' || h.name === '') throw new Error(`${what}: needs a name`);
  if (h.type !== 'Mutating' && h.type !== 'Validating') throw new Error(`${what}: type must be Mutating or Validating`);
  if (!Array.isArray(h.rules) || h.rules.length === 0) throw new Error(`${what}: needs rules (operations, apiGroups, apiVersions, resources), as a webhook's`);
  if (typeof h.review !== 'function') throw new Error(`${what}: needs a review(request) function`);
}

export function webhookAdmission(opts: WebhookAdmissionOptions): AdmissionPlugin[] {
  const inProcess = (type: AdmissionHook['type']): Hook[] =>
    (opts.hooks ?? [])
      .filter((h) => h.type === type)
      .map((h) => ({ configuration: '', webhook: { sideEffects: 'None', failurePolicy: 'Fail', ...(h as unknown as JsonRecord) }, review: h.review.bind(h) }));
  const hooksOf = (store: RestStore): Hook[] => {
    const out: Hook[] = inProcess(store === opts.mutating ? 'Mutating' : 'Validating');
    for (const { object } of store.cache.list().items) for (const webhook of records(object.webhooks)) out.push({ configuration: object.metadata.name, webhook });
    return out;
  };

  const namespaceMatches = (w: JsonRecord, a: AdmissionAttributes): boolean => {
    const selector = w.namespaceSelector;
    if (!isRecord(selector) || Object.keys(selector).length === 0) return true;
    if (a.resource.group === '' && a.resource.resource === 'namespaces' && a.subresource === '') return selectsObject(selector, a.object ?? a.oldObject);
    if (a.namespace === '') return true;
    const ns = opts.namespaces.cache.get(opts.namespaces.key(undefined, a.namespace))?.object;
    return selectsObject(selector, ns ?? ({ metadata: {} } as KObject));
  };

  /** The webhooks whose rules match the request (selectors are asked as each is called: a mutation may change the labels). */
  const matching = (store: RestStore, a: AdmissionAttributes): Invocation[] => {
    // Most writes meet no webhook at all: nothing to list.
    if (a.resource.group === GROUP || (store.cache.size === 0 && !opts.hooks?.length)) return [];
    const out: Invocation[] = [];
    for (const hook of hooksOf(store)) {
      const matched = matchedVersion(records(hook.webhook.rules), hook.webhook.matchPolicy, a, opts.registry);
      if (matched) out.push({ hook, matched });
    }
    return out;
  };

  /** The namespace and object selectors, on the object as it is now (a missing object matches no selector but the empty one). */
  const selected = (w: JsonRecord, a: AdmissionAttributes): boolean => {
    if (!namespaceMatches(w, a)) return false;
    const selector = w.objectSelector;
    if (!isRecord(selector) || Object.keys(selector).length === 0) return true;
    return selectsObject(selector, a.object) || selectsObject(selector, a.oldObject);
  };

  const call = async (hook: Hook, a: VersionedAttributes, mutating: boolean): Promise<KObject | undefined> => {
    const w = hook.webhook;
    const name = String(w.name);
    if (a.dryRun && w.sideEffects !== 'None' && w.sideEffects !== 'NoneOnDryRun') throw errors.badRequest(`admission webhook ${JSON.stringify(name)} does not support dry run`);
    const versions = strings(w.admissionReviewVersions);
    const reviewVersion = versions.find((v) => v === 'v1' || v === 'v1beta1') ?? 'v1';
    const uid = randomUUID();
    const timeoutSeconds = typeof w.timeoutSeconds === 'number' ? w.timeoutSeconds : 10;
    const clientConfig = isRecord(w.clientConfig) ? w.clientConfig : {};
    const request = reviewRequest(a, uid);
    const apiVersion = `admission.k8s.io/${reviewVersion}`;
    if (hook.review) return answered(hook, a, mutating, uid, await askInProcess(hook.review, request, uid, timeoutSeconds));
    const body = stringifyJson({ kind: 'AdmissionReview', apiVersion, request });
    let reply: { status: number; body: string };
    let url = '';
    try {
      const target = await webhookTarget({ url: clientConfig.url as string | undefined, service: clientConfig.service as never }, opts.resolveService);
      target.url.searchParams.set('timeout', `${timeoutSeconds}s`);
      url = target.url.href;
      const ca = typeof clientConfig.caBundle === 'string' && clientConfig.caBundle ? Buffer.from(clientConfig.caBundle, 'base64').toString('utf8') : undefined;
      reply = await postJson(target, body, ca, timeoutSeconds * 1000);
    } catch (err) {
      throw new CallError(`failed to call webhook: ${(err as Error).message}`);
    }
    if (reply.status < 200 || reply.status >= 300) throw new CallError(`failed to call webhook: the server responded with the status code ${reply.status}, calling ${url}`);
    let parsed: unknown;
    try {
      parsed = parseJson(reply.body);
    } catch (err) {
      throw new CallError(`received invalid webhook response: ${(err as Error).message}`);
    }
    const review = isRecord(parsed) ? parsed : {};
    if (reviewVersion === 'v1' && (review.apiVersion !== apiVersion || review.kind !== 'AdmissionReview')) {
      throw new CallError(`expected webhook response of ${apiVersion}, Kind=AdmissionReview, got ${String(review.apiVersion ?? '')}, Kind=${String(review.kind ?? '')}`);
    }
    return answered(hook, a, mutating, uid, isRecord(review.response) ? review.response : undefined, reviewVersion === 'v1beta1');
  };

  /**
   * What a webhook's (or hook's) response means: a denial, the patched object, or nothing to change. A v1
   * response must name the request's uid and its patch's type; v1beta1 ones need not, as upstream.
   */
  const answered = (hook: Hook, a: VersionedAttributes, mutating: boolean, uid: string, response: JsonRecord | undefined, lenient = false): KObject | undefined => {
    const name = String(hook.webhook.name);
    if (!response) throw new CallError('webhook response was absent');
    if (!lenient && response.uid !== uid) throw new CallError(`expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(String(response.uid ?? ''))}`);
    for (const warning of strings(response.warnings).slice(0, 64)) a.warnings?.push(warning.slice(0, 1024));
    // Audit annotations, named by the webhook (`<webhook>/<key>`), as upstream records them.
    if (isRecord(response.auditAnnotations) && a.auditAnnotations) {
      for (const [key, value] of Object.entries(response.auditAnnotations).slice(0, 64)) {
        if (typeof value === 'string') a.auditAnnotations[`${name}/${key}`.slice(0, 317)] = value.slice(0, 10 * 1024);
      }
    }
    if (response.allowed !== true) throw denied(name, isRecord(response.status) ? response.status : undefined);
    if (response.patch === undefined || response.patch === null) return undefined;
    if (!mutating) throw new CallError('validating webhook may not return a patch');
    const patchType = response.patchType ?? (lenient ? 'JSONPatch' : undefined);
    if (!hook.review && patchType !== 'JSONPatch') throw new CallError(`unsupported patch type ${JSON.stringify(String(response.patchType ?? ''))}`);
    if (!a.object) throw new PatchError('the webhook attempted to modify an object that is being deleted');
    let patched: KObject;
    try {
      const ops = decodeJsonPatch(Array.isArray(response.patch) ? response.patch : parseJson(Buffer.from(String(response.patch), 'base64').toString('utf8')));
      patched = deepCloneMutable(a.object) as KObject;
      applyJsonPatch(patched as never, ops);
    } catch (err) {
      throw new PatchError(`failed to apply the webhook's patch: ${(err as Error).message}`);
    }
    // What the patched object must still be: an object of the same kind and version, with its metadata.
    if (!isRecord(patched) || !isRecord(patched.metadata) || patched.apiVersion !== a.object.apiVersion || patched.kind !== a.object.kind || Object.hasOwn(patched, '__proto__')) {
      throw new PatchError('the webhook\'s patch changed the object\'s kind, apiVersion or metadata into something it cannot be');
    }
    return patched;
  };

  /**
   * Runs one webhook (when its selectors and matchConditions hold) on the write in the version it matched, with
   * its failure policy; a CallError with Fail is upstream's internal error. A patched object comes back in the
   * write's version.
   */
  const run = async ({ hook, matched }: Invocation, write: AdmissionAttributes, mutating: boolean): Promise<KObject | undefined> => {
    if (!selected(hook.webhook, write)) return undefined;
    const a = await versionedAttributes(write, matched, opts.registry);
    try {
      const conditions = hook.webhook.matchConditions;
      const session = opts.authorizer && records(conditions).length > 0 ? new AuthorizationSession(opts.authorizer) : undefined;
      const vars = { object: a.object, oldObject: a.oldObject, request: reviewRequest(a, ''), authorizer: requestAuthorizer(session, a) };
      const held = session ? await session.settle(() => matchConditionsHold(conditions, vars)) : matchConditionsHold(conditions, vars);
      if (held === false) return undefined;
      if (typeof held === 'string') {
        if (hook.webhook.failurePolicy === 'Ignore') return undefined;
        // As upstream: conditions that cannot be evaluated fail closed, a 403 naming the webhook.
        const name = a.name || String(a.object?.metadata?.name ?? '');
        throw errors.forbidden({ group: write.resource.group, resource: write.resource.resource }, name, `failed calling webhook ${JSON.stringify(String(hook.webhook.name))}: failed evaluating match conditions, failing closed: ${held}`);
      }
      const started = process.hrtime.bigint();
      const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
      const type = mutating ? 'admit' : 'validating';
      const name = String(hook.webhook.name);
      try {
        const patched = await call(hook, a, mutating);
        opts.observe?.(name, type, a.operation, seconds(), { rejected: false, code: 200 });
        if (!patched) return undefined;
        // As upstream's dispatcher: the patched object is defaulted (in the webhook's version) before anything else sees it.
        write.defaulter?.(patched);
        return await a.toWrite(patched);
      } catch (err) {
        // As upstream counts them: a denial with its code; a failure to call it rejects unless ignored.
        if (err instanceof CallError) {
          const ignored = hook.webhook.failurePolicy === 'Ignore' && !(err instanceof PatchError);
          opts.observe?.(name, type, a.operation, seconds(), { rejected: !ignored, code: 0, error: 'calling_webhook_error' });
        } else {
          opts.observe?.(name, type, a.operation, seconds(), { rejected: true, code: err instanceof StatusError ? err.code : 0, error: 'no_error' });
        }
        throw err;
      }
    } catch (err) {
      if (!(err instanceof CallError)) throw err;
      // An answer that cannot be applied is the webhook's fault whatever its policy, as upstream.
      if (hook.webhook.failurePolicy === 'Ignore' && !(err instanceof PatchError)) return undefined;
      throw errors.internal(`failed calling webhook ${JSON.stringify(String(hook.webhook.name))}: ${err.message}`);
    }
  };

  /**
   * Per write: the object as the mutating webhooks left it; the IfNeeded webhooks a later one changed the
   * object after (called again in the reinvocation phase in any case); and every IfNeeded webhook called
   * (called again if a later plugin changed the object). Each is called at most twice, as upstream.
   */
  const reinvocable = new WeakMap<AdmissionAttributes, { output: KObject; changedAfter: Invocation[]; invoked: Invocation[] }>();
  const mutatingPlugin: AdmissionPlugin = {
    name: 'MutatingAdmissionWebhook',
    reportsChanges: true,
    admit(a) {
      const hooks = matching(opts.mutating, a);
      if (hooks.length === 0) return;
      return (async () => {
        let lastChange = -1;
        for (const [i, hook] of hooks.entries()) {
          const patched = await run(hook, a, true);
          if (patched && a.object && !deepEqual(patched, a.object)) {
            replaceContents(a.object, patched);
            lastChange = i;
          }
        }
        const invoked = hooks.filter((h) => h.hook.webhook.reinvocationPolicy === 'IfNeeded');
        const changedAfter = invoked.filter((h) => hooks.indexOf(h) < lastChange);
        if (invoked.length > 0 && a.object) reinvocable.set(a, { output: deepCloneMutable(a.object), changedAfter, invoked });
      })();
    },
    reinvoke(a) {
      const state = reinvocable.get(a);
      if (!state || !a.object) return;
      const again = !deepEqual(a.object, state.output) ? state.invoked : state.changedAfter;
      if (again.length === 0) return;
      return (async () => {
        for (const hook of again) {
          const patched = await run(hook, a, true);
          if (patched && a.object) replaceContents(a.object, patched);
        }
      })();
    },
  };
  const validatingPlugin: AdmissionPlugin = {
    name: 'ValidatingAdmissionWebhook',
    validate(a) {
      const hooks = matching(opts.validating, a);
      if (hooks.length === 0) return;
      // Together, as upstream; the first to fail is the request's answer.
      return new Promise<void>((resolve, reject) => {
        let left = hooks.length;
        for (const hook of hooks) {
          run(hook, a, false).then(() => {
            if (--left === 0) resolve();
          }, reject);
        }
      });
    },
  };
  return [mutatingPlugin, validatingPlugin];
}

/** The AdmissionReview's request for this write, as upstream builds it (in the version the webhook matched). */
function reviewRequest(a: VersionedAttributes, uid: string): JsonRecord {
  const user = a.user;
  const name = a.name || (a.operation === 'CREATE' ? String(a.object?.metadata?.name ?? '') : '');
  return {
    uid,
    kind: a.kind,
    resource: a.resource,
    ...(a.subresource ? { subResource: a.subresource } : {}),
    requestKind: a.requestKind,
    requestResource: a.requestResource,
    ...(a.subresource ? { requestSubResource: a.subresource } : {}),
    ...(name ? { name } : {}),
    ...(a.namespace ? { namespace: a.namespace } : {}),
    operation: a.operation,
    userInfo: user ? { username: user.name, ...(user.uid ? { uid: user.uid } : {}), groups: user.groups, ...(user.extra ? { extra: user.extra } : {}) } : {},
    object: a.object ?? null,
    oldObject: a.oldObject ?? null,
    dryRun: a.dryRun,
    options: { kind: a.operation === 'CREATE' ? 'CreateOptions' : a.operation === 'UPDATE' ? 'UpdateOptions' : 'DeleteOptions', apiVersion: 'meta.k8s.io/v1', ...(a.dryRun ? { dryRun: ['All'] } : {}) },
  };
}

/** An in-process hook's answer, as a response to this review (what it throws is a failure to call it). */
async function askInProcess(review: NonNullable<Hook['review']>, request: JsonRecord, uid: string, timeoutSeconds: number): Promise<JsonRecord> {
  let answer: unknown;
  let timer: NodeJS.Timeout | undefined;
  try {
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeoutSeconds}s`)), timeoutSeconds * 1000);
    });
    answer = await Promise.race([Promise.resolve().then(() => review(deepCloneMutable(request))), deadline]);
  } catch (err) {
    throw new CallError(`admission hook failed: ${(err as Error)?.message ?? String(err)}`);
  } finally {
    clearTimeout(timer);
  }
  if (!isRecord(answer)) throw new CallError('admission hook returned no response');
  return { ...answer, uid };
}

/** upstream's ToStatusErr: the webhook's Status, its message prefixed with who denied. */
function denied(name: string, status: JsonRecord | undefined): StatusError {
  const deniedBy = `admission webhook ${JSON.stringify(name)} denied the request`;
  const code = typeof status?.code === 'number' && status.code >= 400 ? status.code : 400;
  const reason = typeof status?.reason === 'string' ? status.reason : '';
  const message = typeof status?.message === 'string' && status.message ? `${deniedBy}: ${status.message}` : reason ? `${deniedBy}: ${reason}` : `${deniedBy} without explanation`;
  return new StatusError(code, reason as StatusReason, message, isRecord(status?.details) ? (status.details as never) : {});
}
