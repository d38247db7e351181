/**
 * What ValidatingAdmissionPolicy and MutatingAdmissionPolicy share, as upstream's generic policy dispatcher:
 * every binding whose policy exists is asked about each write its policy's matchConstraints (and the
 * binding's matchResources) match: rules with resource names and exclusions, namespace and object selectors.
 * Its params are the objects paramRef names (or those its selector selects) of the policy's paramKind; with
 * none, parameterNotFoundAction decides. Each evaluation sees `object`, `oldObject`, `request`, `params`,
 * `namespaceObject` and the policy's `variables` (each evaluated in order, seeing those before it), and
 * the policy's matchConditions must hold.
 */
import type { AdmissionAttributes } from '../../registry/admission.js';
import type { ApiRegistry, Endpoint } from '../../registry/registry.js';
import type { RestStore } from '../../registry/store.js';
import type { KObject } from '../../api/object.js';
import type { Authorizer } from '../../api/authorization.js';
import { isRecord, records, type JsonRecord } from '../../util/json-object.js';
import { AuthorizationSession, requestAuthorizer } from './cel-authorizer.js';
import { celValue, evaluateExpression, matchedVersion, selectsObject, versionedAttributes, type MatchedVersion, type VersionedAttributes } from './matching.js';
import { objectForScan } from '../../cache/watch-cache.js';

const GROUP = 'admissionregistration.k8s.io';

export interface PolicyStores {
  policies: RestStore;
  bindings: RestStore;
  namespaces: RestStore;
  registry: ApiRegistry;
  /** The server's authorizer, asked by the expressions' `authorizer` checks. */
  authorizer?: Authorizer;
}

/** One binding of a policy that matches a write: its params, or why it could not be configured. */
export interface PolicyInvocation {
  policy: KObject;
  binding: KObject;
  spec: JsonRecord;
  policyName: string;
  bindingName: string;
  failurePolicy: 'Fail' | 'Ignore';
  /** The version the policy's matchConstraints matched the write in (matchPolicy Equivalent: perhaps another). */
  matched: MatchedVersion;
  /** The objects the policy is evaluated with, once each (`null`: the policy takes no params). */
  params: Array<KObject | null>;
  /** What went wrong finding them (upstream's `failed to configure binding: ...`). */
  configError?: string;
}

/** An evaluation's CEL variables, and what went wrong evaluating the policy's `variables`. */
export interface PolicyContext {
  ctx: Record<string, unknown>;
  failed?: string;
}

export interface PolicyBindings {
  /** Whether a write may meet a policy at all (cheap: most writes meet none). */
  active(a: AdmissionAttributes): boolean;
  /** The bindings matching a write, each with its policy and params. */
  invocations(a: AdmissionAttributes): Promise<PolicyInvocation[]>;
  /** The write as an invocation sees it: in the version its policy matched. */
  versioned(a: AdmissionAttributes, inv: PolicyInvocation): Promise<VersionedAttributes>;
  /** The variables one evaluation sees (`mutation`: the policy's expressions may construct objects). */
  context(a: AdmissionAttributes | VersionedAttributes, spec: JsonRecord, param: KObject | null, session: AuthorizationSession | undefined, mutation?: boolean): PolicyContext;
  /** The authorizations one write's expressions ask for (none without an authorizer). */
  session(): AuthorizationSession | undefined;
  /** The endpoint serving a kind in a version (looked up once until the served resources change). */
  endpoint(group: string, version: string, kind: string): Endpoint | undefined;
  /** The policy's matchConditions: all true, one false, or the first error. */
  conditions(spec: JsonRecord, ctx: Record<string, unknown>): true | false | string;
}

/** The name a write is about (a create's from its object). */
export const writeName = (a: AdmissionAttributes): string => a.name || String(a.object?.metadata?.name ?? '');

export function policyBindings(opts: PolicyStores): PolicyBindings {
  const namespaceOf = (a: AdmissionAttributes): KObject | undefined =>
    a.namespace ? opts.namespaces.cache.get(opts.namespaces.key(undefined, a.namespace))?.object : undefined;

  /** The version `resources` match the write in, or undefined: they do not. */
  const matches = (resources: unknown, a: AdmissionAttributes, name: string): MatchedVersion | undefined => {
    const own = { resource: a.resource, kind: a.kind };
    if (!isRecord(resources)) return own;
    const isNamespace = a.resource.group === '' && a.resource.resource === 'namespaces';
    if (a.namespace !== '' || isNamespace) {
      const ns = isNamespace ? (a.object ?? a.oldObject) : namespaceOf(a);
      if (!selectsObject(resources.namespaceSelector, ns ?? ({ metadata: {} } as KObject))) return undefined;
    }
    if (!selectsObject(resources.objectSelector, a.object) && !selectsObject(resources.objectSelector, a.oldObject)) return undefined;
    const excluded = records(resources.excludeResourceRules);
    if (excluded.length > 0 && matchedVersion(excluded, resources.matchPolicy, a, opts.registry, name)) return undefined;
    const rules = records(resources.resourceRules);
    return rules.length > 0 ? matchedVersion(rules, resources.matchPolicy, a, opts.registry, name) : own;
  };

  // The endpoint serving a param kind, looked up once per kind until the served resources change.
  let byKind = new Map<string, Endpoint | undefined>();
  opts.registry.onChange(() => (byKind = new Map()));
  const endpointOfKind = (group: string, version: string, kind: string): Endpoint | undefined => {
    const key = `${group}/${version}/${kind}`;
    if (!byKind.has(key)) byKind.set(key, opts.registry.all().find((e) => e.group === group && e.version === version && e.names.kind === kind));
    return byKind.get(key);
  };

  /** The params of a binding: the objects its paramRef names or selects, or why there are none to use. */
  const paramsOf = async (spec: JsonRecord, binding: KObject, a: AdmissionAttributes): Promise<{ params: Array<KObject | null>; configError?: string }> => {
    const kind = isRecord(spec.paramKind) ? spec.paramKind : undefined;
    if (!kind) return { params: [null] };
    const ref = isRecord(binding.spec?.paramRef) ? binding.spec.paramRef : undefined;
    if (!ref) return { params: [], configError: 'failed to configure binding: params referenced but no paramRef in binding' };
    const notFound = {
      params: [],
      configError: ref.parameterNotFoundAction === 'Allow' ? undefined : 'failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction',
    };
    const apiVersion = String(kind.apiVersion ?? '');
    const [group, version] = apiVersion.includes('/') ? apiVersion.split('/', 2) : ['', apiVersion];
    const endpoint = endpointOfKind(group, version, String(kind.kind ?? ''));
    if (!endpoint) return notFound;
    const namespace = endpoint.names.namespaced ? String(ref.namespace ?? '') || a.namespace : undefined;
    const store = endpoint.store;
    // Params are read from their resource's watch cache, brought up to date with what is stored.
    await store.start();
    await store.cache.sync();
    if (typeof ref.name === 'string' && ref.name) {
      const obj = store.cache.get(store.key(namespace, ref.name))?.object;
      return obj ? { params: [endpoint.toVersion(obj)] } : notFound;
    }
    const found = store.cache
      .list({ prefix: store.namespacePrefix(namespace) })
      .items.map(objectForScan)
      .filter((o) => selectsObject(ref.selector, o));
    return found.length > 0 ? { params: found.map((o) => endpoint.toVersion(o)) } : notFound;
  };

  return {
    endpoint: endpointOfKind,
    versioned: (a, inv) => versionedAttributes(a, inv.matched, opts.registry),
    active: (a) => a.resource.group !== GROUP && opts.bindings.cache.size > 0,

    async invocations(a) {
      const name = writeName(a);
      const out: PolicyInvocation[] = [];
      for (const { object: binding } of opts.bindings.cache.list().items) {
        const policyName = String(binding.spec?.policyName ?? '');
        const policy = opts.policies.cache.get(opts.policies.key(undefined, policyName))?.object;
        if (!policy || !isRecord(policy.spec)) continue;
        const spec = policy.spec;
        const matched = matches(spec.matchConstraints, a, name);
        if (!matched || !matches(binding.spec?.matchResources, a, name)) continue;
        const failurePolicy = spec.failurePolicy === 'Ignore' ? 'Ignore' : 'Fail';
        out.push({ policy, binding, spec, policyName, bindingName: binding.metadata.name, failurePolicy, matched, ...(await paramsOf(spec, binding, a)) });
      }
      return out;
    },

    session: () => (opts.authorizer ? new AuthorizationSession(opts.authorizer) : undefined),

    context(a, spec, param, session, mutation = false) {
      const user = a.user;
      const variables: Record<string, unknown> = {};
      const ctx: Record<string, unknown> = {
        object: celValue(a.object ?? null),
        oldObject: celValue(a.oldObject ?? null),
        request: celValue({
          kind: a.kind,
          resource: a.resource,
          subResource: a.subresource,
          requestKind: 'requestKind' in a ? a.requestKind : a.kind,
          requestResource: 'requestResource' in a ? a.requestResource : a.resource,
          requestSubResource: a.subresource,
          name: writeName(a),
          namespace: a.namespace,
          operation: a.operation,
          userInfo: user ? { username: user.name, uid: user.uid ?? '', groups: user.groups } : {},
          dryRun: a.dryRun,
        }),
        params: celValue(param),
        namespaceObject: celValue(namespaceOf(a) ?? null),
        authorizer: requestAuthorizer(session, a),
        variables,
      };
      let failed: string | undefined;
      for (const v of records(spec.variables)) {
        const r = evaluateExpression(String(v.expression ?? ''), ctx, mutation);
        if (r.error !== undefined) {
          failed ??= `variable '${String(v.name)}' resulted in error: ${r.error}`;
          continue;
        }
        variables[String(v.name)] = r.value;
      }
      return { ctx, failed };
    },

    conditions(spec, ctx) {
      let error: string | undefined;
      for (const c of records(spec.matchConditions)) {
        const r = evaluateExpression(String(c.expression ?? ''), ctx);
        if (r.value === false) return false;
        if (r.error !== undefined) error ??= `expression '${String(c.name)}' resulted in error: ${r.error}`;
      }
      return error ?? true;
    },
  };
}
