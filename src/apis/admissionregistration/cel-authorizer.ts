/**
 * The `authorizer` variable of admission CEL (upstream's kubernetes.authz library): checks of what the
 * request's user (or a ServiceAccount) may do, asked of the server's authorizer:
 *   authorizer.group('apps').resource('deployments').namespace('ns').name('x').check('update').allowed()
 *   authorizer.path('/healthz').check('get').reason()
 *   authorizer.serviceAccount('ns', 'sa').group('').resource('pods').check('list').errored()
 *   authorizer.requestResource.check('custom-verb').allowed()
 * Each distinct check is asked once per request (upstream's caching authorizer). CEL evaluates synchronously;
 * an authorizer that answers with a promise has the expression evaluated again once the answers are in.
 */
import type { Environment } from '@marcbachmann/cel-js';
import type { AdmissionAttributes, AdmissionUser } from '../../registry/admission.js';
import type { UserInfo } from '../../api/authentication.js';
import type { Attributes, Authorizer, Decision } from '../../api/authorization.js';
import { isDNS1123Label, isDNS1123Subdomain } from '../../machinery/validation.js';

const T = 'kubernetes.authorization.';
/** Rounds of evaluation an expression gets while its authorizations are answered. */
const MAX_ROUNDS = 16;

class PendingAuthorization extends Error {
  constructor() {
    super('authorization check not yet answered');
  }
}

/** The authorizations one request's expressions asked for. */
export class AuthorizationSession {
  private readonly answers = new Map<string, Decision | Error>();
  private pending: Promise<void>[] = [];

  constructor(private readonly authorizer: Authorizer) {}

  decide(attributes: Attributes): DecisionValue {
    const u = attributes.user;
    const key = JSON.stringify([u?.name, u?.groups, attributes.verb, attributes.path, attributes.apiGroup, attributes.resource, attributes.subresource, attributes.namespace, attributes.name]);
    const known = this.answers.get(key);
    if (known) return new DecisionValue(known);
    let answer: Decision | Promise<Decision>;
    try {
      answer = this.authorizer.authorize(attributes);
    } catch (err) {
      this.answers.set(key, err instanceof Error ? err : new Error(String(err)));
      return new DecisionValue(this.answers.get(key)!);
    }
    if (answer instanceof Promise) {
      this.pending.push(
        answer.then(
          (d) => void this.answers.set(key, d),
          (err: unknown) => void this.answers.set(key, err instanceof Error ? err : new Error(String(err))),
        ),
      );
      throw new PendingAuthorization();
    }
    this.answers.set(key, answer);
    return new DecisionValue(answer);
  }

  /** `evaluate`'s result once every authorization it asked for is answered (at once for a synchronous authorizer). */
  async settle<R>(evaluate: () => R): Promise<R> {
    for (let round = 1; ; round++) {
      let result: { value: R } | { error: unknown };
      try {
        result = { value: evaluate() };
      } catch (error) {
        result = { error };
      }
      const pending = this.pending;
      this.pending = [];
      if (pending.length === 0 || round >= MAX_ROUNDS) {
        if ('error' in result) throw result.error;
        return result.value;
      }
      await Promise.all(pending);
    }
  }
}

export class AuthorizerValue {
  readonly requestResource: ResourceCheck;
  readonly user: UserInfo | undefined;
  constructor(
    readonly session: AuthorizationSession,
    user: AdmissionUser | undefined,
    request: { group: string; resource: string; subresource: string; namespace: string; name: string } = { group: '', resource: '', subresource: '', namespace: '', name: '' },
  ) {
    this.user = user && { name: user.name, uid: user.uid ?? '', groups: user.groups, ...(user.extra ? { extra: user.extra } : {}) };
    this.requestResource = new ResourceCheck(this, request.group, request.resource, request.subresource, request.namespace, request.name);
  }
}

class PathCheck {
  constructor(readonly authorizer: AuthorizerValue, readonly path: string) {}
}

class GroupCheck {
  constructor(readonly authorizer: AuthorizerValue, readonly group: string) {}
}

class ResourceCheck {
  constructor(
    readonly authorizer: AuthorizerValue,
    readonly group: string,
    readonly resource: string,
    readonly subresource = '',
    readonly namespace = '',
    readonly name = '',
  ) {}
  with(part: 'subresource' | 'namespace' | 'name', value: string): ResourceCheck {
    const next = { subresource: this.subresource, namespace: this.namespace, name: this.name, [part]: value };
    return new ResourceCheck(this.authorizer, this.group, this.resource, next.subresource, next.namespace, next.name);
  }
}

class DecisionValue {
  constructor(readonly answer: Decision | Error) {}
}

const nonEmpty = (what: string, v: string): string => {
  if (v.trim() === '') throw new Error(`${what} must not be empty`);
  return v;
};

/** Registers the library's types, its functions and the `authorizer` variable. */
export function registerAuthorizerLibrary(env: Environment): Environment {
  env
    .registerType(`${T}Authorizer`, { ctor: AuthorizerValue, fields: { requestResource: `${T}ResourceCheck` } } as never)
    .registerType(`${T}PathCheck`, PathCheck)
    .registerType(`${T}GroupCheck`, GroupCheck)
    .registerType(`${T}ResourceCheck`, ResourceCheck)
    .registerType(`${T}Decision`, DecisionValue)
    .registerVariable('authorizer', `${T}Authorizer`);
  const fn = (receiver: string, name: string, params: string[], returnType: string, handler: (...args: never[]) => unknown) =>
    env.registerFunction({ name, receiverType: `${T}${receiver}`, returnType, params: params.map((type, i) => ({ name: `a${i}`, type })), handler } as never);
  fn('Authorizer', 'path', ['string'], `${T}PathCheck`, (a: AuthorizerValue, path: string) => new PathCheck(a, nonEmpty('path', path)));
  fn('Authorizer', 'group', ['string'], `${T}GroupCheck`, (a: AuthorizerValue, group: string) => new GroupCheck(a, group));
  fn('Authorizer', 'serviceAccount', ['string', 'string'], `${T}Authorizer`, (a: AuthorizerValue, namespace: string, name: string) => {
    if (isDNS1123Subdomain(name).length > 0) throw new Error('Invalid service account name');
    if (isDNS1123Label(namespace).length > 0) throw new Error('Invalid service account namespace');
    const user = { name: `system:serviceaccount:${namespace}:${name}`, groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`] };
    return new AuthorizerValue(a.session, user);
  });
  fn('GroupCheck', 'resource', ['string'], `${T}ResourceCheck`, (g: GroupCheck, resource: string) => new ResourceCheck(g.authorizer, g.group, nonEmpty('resource', resource)));
  for (const part of ['subresource', 'namespace', 'name'] as const) {
    fn('ResourceCheck', part, ['string'], `${T}ResourceCheck`, (r: ResourceCheck, v: string) => r.with(part, v));
  }
  // Selectors narrow a check upstream; RBAC does not look at them, so they are accepted and kept out of the decision.
  for (const selector of ['fieldSelector', 'labelSelector']) fn('ResourceCheck', selector, ['string'], `${T}ResourceCheck`, (r: ResourceCheck) => r);
  fn('PathCheck', 'check', ['string'], `${T}Decision`, (p: PathCheck, verb: string) =>
    p.authorizer.session.decide({ user: p.authorizer.user, verb, resourceRequest: false, path: p.path, apiGroup: '', apiVersion: '', resource: '', subresource: '', namespace: '', name: '' }),
  );
  fn('ResourceCheck', 'check', ['string'], `${T}Decision`, (r: ResourceCheck, verb: string) =>
    r.authorizer.session.decide({
      user: r.authorizer.user,
      verb,
      resourceRequest: true,
      path: '',
      apiGroup: r.group,
      apiVersion: '*',
      resource: r.resource,
      subresource: r.subresource,
      namespace: r.namespace,
      name: r.name,
    }),
  );
  const decision = (d: DecisionValue) => (d.answer instanceof Error ? undefined : d.answer);
  fn('Decision', 'allowed', [], 'bool', (d: DecisionValue) => decision(d)?.decision === 'allow');
  fn('Decision', 'reason', [], 'string', (d: DecisionValue) => decision(d)?.reason ?? '');
  fn('Decision', 'errored', [], 'bool', (d: DecisionValue) => d.answer instanceof Error);
  fn('Decision', 'error', [], 'string', (d: DecisionValue) => (d.answer instanceof Error ? d.answer.message : ''));
  return env;
}

/** The `authorizer` of one write's expressions: its user, and its resource as `requestResource`. */
export function requestAuthorizer(session: AuthorizationSession | undefined, a: AdmissionAttributes): AuthorizerValue | undefined {
  if (!session) return undefined;
  const name = a.name || String(a.object?.metadata?.name ?? '');
  return new AuthorizerValue(session, a.user, { group: a.resource.group, resource: a.resource.resource, subresource: a.subresource, namespace: a.namespace, name });
}
