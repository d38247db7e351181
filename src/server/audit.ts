/**
 * Auditing, as kube-apiserver's: a policy (audit.k8s.io/v1 Policy, from
 * --audit-policy-file) decides per request the level (None, Metadata, Request,
 * RequestResponse) and the stages recorded; each recorded stage is an
 * audit.k8s.io/v1 Event handed to a backend (--audit-log-path: one JSON event
 * per line). The filter runs after authentication, so events name the
 * authenticated user (and the impersonated one).
 */
import { appendFileSync, closeSync, openSync } from 'node:fs';
import type { Status } from '../machinery/status.js';
import { stringifyJson } from '../machinery/json.js';
import { parseYaml } from '../machinery/yaml.js';
import type { UserInfo } from '../api/authentication.js';
import type { Exchange, Filter } from './filters.js';
import { isLongRunning } from './filters.js';
import type { KObject } from '../api/object.js';

export type AuditLevel = 'None' | 'Metadata' | 'Request' | 'RequestResponse';
export type AuditStage = 'RequestReceived' | 'ResponseStarted' | 'ResponseComplete' | 'Panic';

const LEVELS: readonly AuditLevel[] = ['None', 'Metadata', 'Request', 'RequestResponse'];
const STAGES: readonly AuditStage[] = ['RequestReceived', 'ResponseStarted', 'ResponseComplete', 'Panic'];

export interface GroupResources {
  group?: string;
  resources?: string[];
  resourceNames?: string[];
}

export interface PolicyRule {
  level: AuditLevel;
  users?: string[];
  userGroups?: string[];
  verbs?: string[];
  resources?: GroupResources[];
  namespaces?: string[];
  nonResourceURLs?: string[];
  omitStages?: AuditStage[];
  omitManagedFields?: boolean;
}

export interface AuditPolicy {
  rules: PolicyRule[];
  omitStages?: AuditStage[];
  omitManagedFields?: boolean;
}

/** An audit.k8s.io/v1 Event. */
export type AuditEvent = Record<string, unknown>;

/**
 * Where audit events go, as kube-apiserver's audit backends: given as `auditBackend` of `start` (with an
 * `auditPolicyFile`, without which nothing is audited), it takes the place of --audit-log-path's file.
 */
export interface AuditBackend {
  /** Takes one event, synchronously, in the request's path (each stage the policy records). */
  write(event: AuditEvent): void;
  /** Called once when the server stops. */
  close?(): void;
}

/** The request attributes a rule looks at (those of authorization). */
interface RuleAttributes {
  user?: UserInfo;
  verb: string;
  resourceRequest: boolean;
  path: string;
  apiGroup: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
}

/** Parse and check a policy file (YAML or JSON), with upstream's validation of levels and stages. */
export function parseAuditPolicy(text: string, source = 'audit policy'): AuditPolicy {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new Error(`${source}: ${(err as Error).message}`);
  }
  const p = doc as Record<string, unknown> | null;
  if (!p || typeof p !== 'object') throw new Error(`${source}: not a Policy`);
  if (p.kind !== 'Policy' || !/^audit\.k8s\.io\/v1(beta1|alpha1)?$/.test(String(p.apiVersion))) {
    throw new Error(`${source}: want apiVersion audit.k8s.io/v1 and kind Policy, got ${JSON.stringify(p.apiVersion)} ${JSON.stringify(p.kind)}`);
  }
  const problems: string[] = [];
  const stages = (v: unknown, path: string): AuditStage[] | undefined => {
    if (v === undefined || v === null) return undefined;
    if (!Array.isArray(v)) {
      problems.push(`${path}: must be a list`);
      return undefined;
    }
    for (const [i, s] of v.entries()) if (!STAGES.includes(s)) problems.push(`${path}[${i}]: Unsupported value: ${JSON.stringify(s)}: supported values: ${STAGES.map((x) => JSON.stringify(x)).join(', ')}`);
    return v as AuditStage[];
  };
  const strings = (v: unknown, path: string): string[] | undefined => {
    if (v === undefined || v === null) return undefined;
    if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) {
      problems.push(`${path}: must be a list of strings`);
      return undefined;
    }
    return v as string[];
  };
  const rulesIn = Array.isArray(p.rules) ? p.rules : [];
  if (rulesIn.length === 0) problems.push('rules: Required value: at least one rule is required');
  const rules: PolicyRule[] = rulesIn.map((r: Record<string, unknown>, i: number) => {
    const path = `rules[${i}]`;
    if (!LEVELS.includes(r?.level as AuditLevel)) problems.push(`${path}.level: Unsupported value: ${JSON.stringify(r?.level ?? '')}: supported values: ${LEVELS.map((x) => JSON.stringify(x)).join(', ')}`);
    const rule: PolicyRule = {
      level: r?.level as AuditLevel,
      users: strings(r?.users, `${path}.users`),
      userGroups: strings(r?.userGroups, `${path}.userGroups`),
      verbs: strings(r?.verbs, `${path}.verbs`),
      namespaces: strings(r?.namespaces, `${path}.namespaces`),
      nonResourceURLs: strings(r?.nonResourceURLs, `${path}.nonResourceURLs`),
      omitStages: stages(r?.omitStages, `${path}.omitStages`),
      omitManagedFields: typeof r?.omitManagedFields === 'boolean' ? r.omitManagedFields : undefined,
    };
    if (Array.isArray(r?.resources)) rule.resources = (r.resources as GroupResources[]).map((g) => ({ group: g?.group ?? '', resources: g?.resources, resourceNames: g?.resourceNames }));
    if ((rule.nonResourceURLs?.length ?? 0) > 0 && ((rule.resources?.length ?? 0) > 0 || (rule.namespaces?.length ?? 0) > 0)) {
      problems.push(`${path}.nonResourceURLs: Invalid value: rules cannot apply to both regular resources and non-resource URLs`);
    }
    return rule;
  });
  const policy: AuditPolicy = { rules, omitStages: stages(p.omitStages, 'omitStages'), omitManagedFields: p.omitManagedFields === true };
  if (problems.length > 0) throw new Error(`${source}: ${problems.join('; ')}`);
  return policy;
}

const has = (list: string[] | undefined, v: string) => list !== undefined && list.includes(v);

function matches(rule: PolicyRule, a: RuleAttributes): boolean {
  if (rule.users?.length && !has(rule.users, a.user?.name ?? '')) return false;
  if (rule.userGroups?.length && !(a.user?.groups ?? []).some((g) => rule.userGroups!.includes(g))) return false;
  if (rule.verbs?.length && !has(rule.verbs, a.verb)) return false;
  if (rule.namespaces?.length || rule.resources?.length) return a.resourceRequest && matchesResource(rule, a);
  if (rule.nonResourceURLs?.length) return !a.resourceRequest && rule.nonResourceURLs.some((u) => u === a.path || (u.endsWith('*') && a.path.startsWith(u.slice(0, -1))));
  return true;
}

function matchesResource(rule: PolicyRule, a: RuleAttributes): boolean {
  if (rule.namespaces?.length && !has(rule.namespaces, a.namespace)) return false;
  if (!rule.resources?.length) return true;
  const combined = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  for (const gr of rule.resources) {
    if ((gr.group ?? '') !== a.apiGroup) continue;
    if (!gr.resources?.length) return true;
    if (gr.resourceNames?.length && !gr.resourceNames.includes(a.name)) continue;
    for (const res of gr.resources) {
      if (res === combined || res === '*') return true;
      if (a.subresource && res.startsWith('*/') && res.slice(2) === a.subresource) return true;
      if (res.endsWith('/*') && res.slice(0, -2) === a.resource) return true;
    }
  }
  return false;
}

/** The level and the stages left out for a request: its first matching rule's (None when none matches). */
export function evaluatePolicy(policy: AuditPolicy, a: RuleAttributes): { level: AuditLevel; omitStages: Set<AuditStage>; omitManagedFields: boolean } {
  for (const rule of policy.rules) {
    if (!matches(rule, a)) continue;
    return {
      level: rule.level,
      omitStages: new Set([...(policy.omitStages ?? []), ...(rule.omitStages ?? [])]),
      omitManagedFields: rule.omitManagedFields ?? policy.omitManagedFields ?? false,
    };
  }
  return { level: 'None', omitStages: new Set(), omitManagedFields: false };
}

/** RFC 3339 with microseconds, as metav1.MicroTime. */
function microTime(ms: number, hr: bigint): string {
  const micros = String(Number(hr / 1000n) % 1000).padStart(3, '0');
  return `${new Date(ms).toISOString().slice(0, 23)}${micros}Z`;
}

function userOf(u: UserInfo | undefined): Record<string, unknown> | undefined {
  if (!u) return undefined;
  const out: Record<string, unknown> = { username: u.name };
  if (u.uid) out.uid = u.uid;
  if (u.groups.length) out.groups = u.groups;
  if (u.extra && Object.keys(u.extra).length) out.extra = u.extra;
  return out;
}

/** Bodies kept for Request and RequestResponse events: above this, left out. */
const MAX_AUDITED_BODY = 3 * 1024 * 1024;

function parsedBody(body: Buffer | undefined, contentType: string | undefined, omitManagedFields: boolean): unknown {
  if (!body || body.length === 0 || body.length > MAX_AUDITED_BODY) return undefined;
  if (contentType && !/json/i.test(contentType)) return undefined;
  try {
    const obj = JSON.parse(body.toString('utf8'));
    if (omitManagedFields) stripManagedFields(obj);
    return obj;
  } catch {
    return undefined;
  }
}

/** Drops metadata.managedFields of an object and of the items of lists in it (as deep as lists nest). */
function stripManagedFields(root: unknown): void {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const obj = stack.pop();
    if (!obj || typeof obj !== 'object') continue;
    const o = obj as KObject;
    if (o.metadata && typeof o.metadata === 'object') delete o.metadata.managedFields;
    if (Array.isArray(o.items)) for (const item of o.items) stack.push(item);
  }
}

/** The request body a handler read (body.ts keeps it for the audit). */
const requestBodies = new WeakMap<object, Buffer>();

export function rememberRequestBody(req: object, body: Buffer): void {
  requestBodies.set(req, body);
}

function sourceIPs(x: Exchange): string[] {
  const ips: string[] = [];
  const forwarded = x.req.headers['x-forwarded-for'];
  if (typeof forwarded === 'string') {
    for (const ip of forwarded.slice(0, 1024).split(',')) {
      const t = ip.trim();
      if (t && ips.length < 16) ips.push(t);
    }
  }
  const remote = x.req.socket?.remoteAddress;
  if (remote && !ips.includes(remote)) ips.push(remote);
  return ips;
}

function ruleAttributes(x: Exchange, user: UserInfo | undefined): RuleAttributes {
  const info = x.info;
  if (info?.kind === 'resource') {
    return { user, verb: info.verb, resourceRequest: true, path: x.path, apiGroup: info.group, resource: info.resource, subresource: info.subresource ?? '', namespace: info.namespace ?? '', name: info.name ?? '' };
  }
  return { user, verb: (x.req.method ?? 'GET').toLowerCase(), resourceRequest: false, path: x.path, apiGroup: '', resource: '', subresource: '', namespace: '', name: '' };
}

/**
 * The audit filter. Place it after authentication and before impersonation and
 * authorization: `user` is who authenticated; the impersonated user, the
 * authorizer's decision and the response's Status are read from the exchange
 * once the request is done.
 */
export function audit(policy: AuditPolicy, backend: AuditBackend): Filter {
  return async (x, next) => {
    const authenticated = x.user;
    const decided = evaluatePolicy(policy, ruleAttributes(x, authenticated));
    if (decided.level === 'None') return next(x);
    const receivedMs = Date.now();
    const receivedHr = process.hrtime.bigint();
    const info = x.info;
    const base: AuditEvent = {
      kind: 'Event',
      apiVersion: 'audit.k8s.io/v1',
      level: decided.level,
      auditID: x.auditId,
      stage: 'RequestReceived',
      requestURI: (x.req.url ?? '').slice(0, 8192),
      verb: info?.kind === 'resource' ? info.verb : (x.req.method ?? 'GET').toLowerCase(),
      user: userOf(authenticated),
      sourceIPs: sourceIPs(x),
    };
    const ua = x.req.headers['user-agent'];
    if (typeof ua === 'string') base.userAgent = ua.slice(0, 1024);
    if (info?.kind === 'resource') {
      const ref: Record<string, unknown> = { resource: info.resource };
      if (info.namespace) ref.namespace = info.namespace;
      if (info.name) ref.name = info.name;
      if (info.group) ref.apiGroup = info.group;
      ref.apiVersion = info.version;
      if (info.subresource) ref.subresource = info.subresource;
      base.objectRef = ref;
    }
    base.requestReceivedTimestamp = microTime(receivedMs, receivedHr);
    const emit = (stage: AuditStage, extra: AuditEvent = {}) => {
      if (decided.omitStages.has(stage)) return;
      const event: AuditEvent = { ...base, stage, ...extra };
      if (x.user !== authenticated && x.user) event.impersonatedUser = userOf(x.user);
      event.stageTimestamp = microTime(Date.now(), process.hrtime.bigint());
      event.annotations = {
        ...(x.auditAnnotations ?? {}),
        'authorization.k8s.io/decision': x.authorization?.decision ?? 'allow',
        'authorization.k8s.io/reason': x.authorization?.reason ?? '',
      };
      backend.write(event);
    };
    emit('RequestReceived');
    // A long-running request's response starts (its headers go out) before it completes.
    if (isLongRunning(x)) {
      const res = x.res;
      const writeHead = res.writeHead.bind(res);
      let started = false;
      res.writeHead = ((code: number, headers?: Record<string, unknown>) => {
        if (!started) {
          started = true;
          emit('ResponseStarted', { responseStatus: { metadata: {}, code } });
        }
        return writeHead(code, headers as never);
      }) as typeof res.writeHead;
    }
    let responseBody: Buffer[] | undefined;
    if (decided.level === 'RequestResponse' && !isLongRunning(x)) {
      responseBody = [];
      let size = 0;
      const res = x.res;
      const write = res.write.bind(res);
      const end = res.end.bind(res);
      const keep = (chunk: unknown) => {
        if (!responseBody || chunk === undefined || chunk === null) return;
        const b = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
        size += b.length;
        if (size > MAX_AUDITED_BODY) responseBody = undefined;
        else responseBody.push(b);
      };
      res.write = ((chunk: string | Buffer) => {
        keep(chunk);
        return write(chunk);
      }) as typeof res.write;
      res.end = ((chunk?: string | Buffer) => {
        keep(chunk);
        return end(chunk);
      }) as typeof res.end;
    }
    const complete = () => {
      const status: Status | undefined = x.status;
      const code = x.timedOut ? 504 : x.res.statusCode;
      const extra: AuditEvent = {};
      if (status && status.status === 'Failure') {
        const rs: Record<string, unknown> = { metadata: {}, status: 'Failure', message: status.message };
        if (status.reason) rs.reason = status.reason;
        if (status.details) rs.details = status.details;
        rs.code = status.code ?? code;
        extra.responseStatus = rs;
      } else {
        extra.responseStatus = { metadata: {}, code };
      }
      if (decided.level !== 'Metadata') {
        const requestObject = parsedBody(requestBodies.get(x.req), x.req.headers['content-type'] as string | undefined, decided.omitManagedFields);
        if (requestObject !== undefined) extra.requestObject = requestObject;
      }
      if (responseBody) {
        const responseObject = parsedBody(Buffer.concat(responseBody), undefined, decided.omitManagedFields);
        if (responseObject !== undefined) extra.responseObject = responseObject;
      }
      emit('ResponseComplete', extra);
    };
    try {
      await next(x);
    } catch (err) {
      // Unexpected exceptions become the Panic stage; Statuses (401, 403, 429...) end the request as usual.
      if (!(err instanceof Error && 'code' in err && typeof (err as { code: unknown }).code === 'number')) {
        emit('Panic', { responseStatus: { metadata: {}, status: 'Failure', message: `APIServer panic'd: ${String((err as Error)?.message ?? err).slice(0, 1024)}`, reason: 'InternalError', code: 500 } });
        throw err;
      }
      x.status = (err as { toStatus?: () => Status }).toStatus?.();
      // The last-resort handler writes the answer; the event describes it.
      x.res.once('close', complete);
      throw err;
    }
    if (x.res.writableEnded || x.res.destroyed) complete();
    else x.res.once('close', complete);
  };
}

/**
 * --audit-log-path: events as JSON lines, appended to a file ('-': standard output). A write that fails
 * (a full disk, a closed pipe) drops the event and is reported, at most once a minute; it never fails the
 * request or the process.
 */
export function auditLogBackend(path: string, report: (message: string) => void = (m) => process.stderr.write(`${m}\n`)): AuditBackend {
  let lastReport = 0;
  let dropped = 0;
  const failed = (err: unknown) => {
    dropped++;
    if (Date.now() - lastReport < 60_000) return;
    lastReport = Date.now();
    report(`kapi: audit log ${path}: ${(err as Error)?.message ?? err}; ${dropped} event(s) dropped so far`);
  };
  if (path === '-') {
    process.stdout.on('error', failed);
    return {
      write: (e) => {
        try {
          process.stdout.write(`${stringifyJson(e)}\n`);
        } catch (err) {
          failed(err);
        }
      },
    };
  }
  const fd = openSync(path, 'a', 0o600);
  return {
    write: (e) => {
      try {
        appendFileSync(fd, `${stringifyJson(e)}\n`);
      } catch (err) {
        failed(err);
      }
    },
    close: () => closeSync(fd),
  };
}
