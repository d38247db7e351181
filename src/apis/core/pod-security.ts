/**
 * The PodSecurity admission plugin (pod-security-admission's admission package, as kube-apiserver runs it):
 * a namespace's `pod-security.kubernetes.io/<mode>[-version]` labels choose a level and version for each mode;
 * `enforce` refuses a pod that breaks its level (403 `violates PodSecurity "<level>:<version>": …`), `warn`
 * tells the client (a warning, for pods and for the objects that make them: Deployments, Jobs…), `audit` adds an
 * annotation to the request's audit event. Namespace labels are checked on write, and raising a namespace's
 * enforce level warns about the pods already there. The defaults and exemptions come from the plugin's
 * PodSecurityConfiguration (--admission-control-config-file); without one, every mode is privileged:latest.
 */
import type { KObject } from '../../api/object.js';
import { errors, type StatusError } from '../../machinery/status.js';
import { field, type FieldError } from '../../machinery/field-errors.js';
import { isDNS1123Label, isDNS1123Subdomain } from '../../machinery/validation.js';
import { compareGoStrings } from '../../machinery/go-text.js';
import type { AdmissionAttributes } from '../../registry/admission.js';
import type { RestStore } from '../../registry/store.js';
import { isRecord, records } from '../../util/json-object.js';
import { admissionForbidden, type AdmissionContext, type AdmissionPluginDefinition } from '../admission-plugins.js';
import { KUBERNETES_VERSION } from '../../api/version.js';
import { objectForScan } from '../../cache/watch-cache.js';
import {
  aggregate,
  LATEST,
  LEVEL_ERROR,
  levelVersionString,
  parseLevel,
  parseVersion,
  PodSecurityEvaluator,
  VERSION_ERROR,
  type Level,
  type LevelVersion,
  type Version,
} from './pod-security-policy.js';

const PREFIX = 'pod-security.kubernetes.io/';
type Mode = 'enforce' | 'audit' | 'warn';
const MODES: readonly Mode[] = ['enforce', 'audit', 'warn'];

export interface Policy {
  enforce: LevelVersion;
  audit: LevelVersion;
  warn: LevelVersion;
}

/** What a PodSecurityConfiguration says. */
export interface PodSecurityConfig {
  defaults: Policy;
  exemptions: { usernames: string[]; runtimeClasses: string[]; namespaces: string[] };
}

const PRIVILEGED_LATEST: LevelVersion = { level: 'privileged', version: LATEST };
const DEFAULT_CONFIG: PodSecurityConfig = {
  defaults: { enforce: PRIVILEGED_LATEST, audit: PRIVILEGED_LATEST, warn: PRIVILEGED_LATEST },
  exemptions: { usernames: [], runtimeClasses: [], namespaces: [] },
};

const CONFIG_VERSIONS = ['pod-security.admission.config.k8s.io/v1', 'pod-security.admission.config.k8s.io/v1beta1', 'pod-security.admission.config.k8s.io/v1alpha1'];

/**
 * A PodSecurityConfiguration (its defaulting and ValidatePodSecurityConfiguration); throws with upstream's field
 * errors. Undefined gives the default configuration.
 */
export function parsePodSecurityConfig(doc: unknown): PodSecurityConfig {
  if (doc === undefined || doc === null) return DEFAULT_CONFIG;
  if (!isRecord(doc) || doc.kind !== 'PodSecurityConfiguration' || !CONFIG_VERSIONS.includes(String(doc.apiVersion))) {
    const d = isRecord(doc) ? doc : {};
    throw new Error(`no kind "${String(d.kind ?? '')}" is registered for version "${String(d.apiVersion ?? '')}"`);
  }
  const defaults = isRecord(doc.defaults) ? doc.defaults : {};
  const exemptions = isRecord(doc.exemptions) ? doc.exemptions : {};
  const errs: FieldError[] = [];
  const levelVersion = (mode: Mode): LevelVersion => {
    const levelText = typeof defaults[mode] === 'string' && defaults[mode] !== '' ? (defaults[mode] as string) : 'privileged';
    const versionKey = `${mode}-version`;
    const versionText = typeof defaults[versionKey] === 'string' && defaults[versionKey] !== '' ? (defaults[versionKey] as string) : 'latest';
    const level = parseLevel(levelText);
    const version = parseVersion(versionText);
    if (!level) errs.push(field.invalid(`defaults.${mode}`, levelText, LEVEL_ERROR));
    if (!version) errs.push(field.invalid(`defaults.${versionKey}`, versionText, VERSION_ERROR));
    return { level: level ?? 'restricted', version: version ?? LATEST };
  };
  const policy: Policy = { enforce: levelVersion('enforce'), audit: PRIVILEGED_LATEST, warn: PRIVILEGED_LATEST };
  policy.warn = levelVersion('warn');
  policy.audit = levelVersion('audit');
  const list = (key: string, check: (s: string) => string[]): string[] => {
    const seen = new Set<string>();
    const items = Array.isArray(exemptions[key]) ? (exemptions[key] as unknown[]) : [];
    items.forEach((item, i) => {
      const s = typeof item === 'string' ? item : '';
      const problems = check(s);
      if (problems.length > 0) errs.push(field.invalid(`exemptions.${key}[${i}]`, s, problems.join(', ')));
      else if (seen.has(s)) errs.push(field.duplicate(`exemptions.${key}[${i}]`, s));
      else seen.add(s);
    });
    return [...seen];
  };
  const config: PodSecurityConfig = {
    defaults: policy,
    exemptions: {
      namespaces: list('namespaces', isDNS1123Label),
      runtimeClasses: list('runtimeClasses', isDNS1123Subdomain),
      usernames: list('usernames', (s) => (s === '' ? ['username must not be empty'] : [])),
    },
  };
  if (errs.length > 0) throw new Error(errs.map(fieldErrorText).join(', '));
  return config;
}

const fieldErrorText = (e: FieldError): string => `${e.field}: ${e.type === 'FieldValueDuplicate' ? 'Duplicate value' : 'Invalid value'}: ${JSON.stringify(e.badValue)}${e.detail ? `: ${e.detail}` : ''}`;

/** api.PolicyToEvaluate: the namespace's labels over the defaults, with the errors of labels that do not parse. */
export function policyToEvaluate(labels: Record<string, unknown>, defaults: Policy): { policy: Policy; errs: FieldError[] } {
  const p: Policy = { enforce: { ...defaults.enforce }, audit: { ...defaults.audit }, warn: { ...defaults.warn } };
  const errs: FieldError[] = [];
  const has = (k: string) => Object.hasOwn(labels, PREFIX + k);
  const value = (k: string) => String(labels[PREFIX + k]);
  let enforceLevelSet = false;
  for (const mode of MODES) {
    if (has(mode)) {
      const level = parseLevel(value(mode));
      if (level) p[mode].level = level;
      else {
        errs.push(field.invalid(`metadata.labels[${PREFIX}${mode}]`, value(mode), LEVEL_ERROR));
        // An enforce level that does not parse enforces restricted; audit and warn fail open.
        p[mode].level = mode === 'enforce' ? 'restricted' : 'privileged';
      }
      if (mode === 'enforce') enforceLevelSet = level !== undefined;
    }
    if (has(`${mode}-version`)) {
      const version = parseVersion(value(`${mode}-version`));
      if (!version) errs.push(field.invalid(`metadata.labels[${PREFIX}${mode}-version]`, value(`${mode}-version`), VERSION_ERROR));
      p[mode].version = version ?? LATEST;
    }
  }
  // A namespace that says only an enforce level is warned at that level too.
  if (!has('warn') && enforceLevelSet && compareLevels(p.enforce.level, p.warn.level) > 0) {
    p.warn.level = p.enforce.level;
    if (!has('warn-version')) p.warn.version = p.enforce.version;
  }
  return { policy: p, errs };
}

const LEVEL_RANK: Record<Level, number> = { privileged: 0, baseline: 1, restricted: 2 };
const compareLevels = (a: Level, b: Level): number => LEVEL_RANK[a] - LEVEL_RANK[b];
const sameVersion = (a: Version, b: Version) => a.latest === b.latest && (a.latest || b.latest || a.minor === b.minor);
const sameLevelVersion = (a: LevelVersion, b: LevelVersion) => a.level === b.level && sameVersion(a.version, b.version);
const equivalent = (a: LevelVersion, b: LevelVersion) => (a.level === 'privileged' && b.level === 'privileged') || sameLevelVersion(a, b);
const fullyPrivileged = (p: Policy) => MODES.every((m) => p[m].level === 'privileged');

/** The resources whose objects carry a pod template (DefaultPodSpecExtractor), and where their template is. */
const POD_CONTROLLERS: Record<string, (o: KObject) => unknown> = {
  '/replicationcontrollers': (o) => o.spec?.template,
  '/podtemplates': (o) => o.template,
  'apps/replicasets': (o) => o.spec?.template,
  'apps/deployments': (o) => o.spec?.template,
  'apps/statefulsets': (o) => o.spec?.template,
  'apps/daemonsets': (o) => o.spec?.template,
  'batch/jobs': (o) => o.spec?.template,
  'batch/cronjobs': (o) => o.spec?.jobTemplate?.spec?.template,
};

/** Pod subresources the plugin lets through (anything else may change the pod's spec). */
const IGNORED_POD_SUBRESOURCES = new Set(['exec', 'attach', 'binding', 'eviction', 'log', 'portforward', 'proxy', 'status']);
/** At most this many of a namespace's pods are checked when its enforce level rises (upstream's). */
const MAX_PODS_TO_CHECK = 3000;
const PODS_PER_TURN = 250;

export class PodSecurityAdmission {
  private readonly evaluator = new PodSecurityEvaluator(Number(KUBERNETES_VERSION.minor));

  constructor(
    private readonly config: PodSecurityConfig,
    private readonly namespaceOf: (name: string) => Promise<KObject | undefined>,
    private readonly pods: RestStore | undefined,
  ) {}

  /** Synchronous (no promise) for every resource that has no pod template. */
  validate(a: AdmissionAttributes): void | Promise<void> {
    if (a.operation === 'DELETE' || !a.object) return;
    const { group, resource } = a.resource;
    if (group === '') {
      if (resource === 'namespaces') return this.validateNamespace(a);
      if (resource === 'pods') return this.validatePod(a);
    }
    const template = POD_CONTROLLERS[`${group}/${resource}`];
    if (template) return this.validatePodController(a, template);
  }

  private labelsOf(ns: KObject | undefined): Record<string, unknown> {
    return isRecord(ns?.metadata?.labels) ? ns.metadata.labels : {};
  }

  private exemptNamespace(name: string): boolean {
    return name !== '' && this.config.exemptions.namespaces.includes(name);
  }

  private validateNamespace(a: AdmissionAttributes): void | Promise<void> {
    if (a.subresource) return;
    const ns = a.object!;
    const name = String(ns.metadata?.name ?? a.name);
    const next = policyToEvaluate(this.labelsOf(ns), this.config.defaults);
    const invalid = () => errors.invalid({ group: '', resource: 'Namespace' }, name, next.errs);
    if (a.operation === 'CREATE') {
      if (next.errs.length > 0) throw invalid();
      if (this.exemptNamespace(a.namespace)) this.warnExempt(a, name, next.policy, this.labelsOf(ns));
      return;
    }
    const before = policyToEvaluate(this.labelsOf(a.oldObject), this.config.defaults);
    const sameErrors = JSON.stringify(next.errs) === JSON.stringify(before.errs);
    if (next.errs.length > 0 && (before.errs.length === 0 || !sameErrors)) throw invalid();
    const [enforce, was] = [next.policy.enforce, before.policy.enforce];
    if (sameLevelVersion(enforce, was) || enforce.level === 'privileged') return;
    if (sameVersion(enforce.version, was.version) && compareLevels(enforce.level, was.level) < 1) return;
    if (this.exemptNamespace(a.namespace)) return this.warnExempt(a, name, next.policy, this.labelsOf(ns));
    return this.checkPodsIn(name, enforce).then((warnings) => void a.warnings?.push(...warnings));
  }

  /** Warnings for a namespace that is exempt yet says a policy (exemptNamespaceWarning). */
  private warnExempt(a: AdmissionAttributes, name: string, p: Policy, labels: Record<string, unknown>): void {
    if (fullyPrivileged(p) || MODES.every((m) => equivalent(p[m], this.config.defaults[m]))) return;
    const said = MODES.filter((m) => p[m].level !== 'privileged' && (Object.hasOwn(labels, PREFIX + m) || Object.hasOwn(labels, `${PREFIX}${m}-version`)));
    const text = said.map((m) => `${m}=${levelVersionString(p[m])}`).join(', ');
    a.warnings?.push(`namespace ${JSON.stringify(name)} is exempt from Pod Security, and the policy (${text}) will be ignored`);
  }

  /**
   * EvaluatePodsInNamespace: the namespace's pods against a new enforce level, one pod per controller first
   * (PODS_PER_TURN to a turn of the event loop: 3,000 pods are some tens of milliseconds).
   */
  private async checkPodsIn(namespace: string, enforce: LevelVersion): Promise<string[]> {
    if (!this.pods) return [];
    const all = this.pods.cache.list({ prefix: this.pods.namespacePrefix(namespace) }).items.map(objectForScan);
    const first: KObject[] = [];
    const later: KObject[] = [];
    const controllers = new Set<string>();
    for (const pod of all) {
      const runtimeClass = pod.spec?.runtimeClassName;
      if (typeof runtimeClass === 'string' && runtimeClass !== '' && this.config.exemptions.runtimeClasses.includes(runtimeClass)) continue;
      const controller = records(pod.metadata?.ownerReferences).find((r) => r.controller === true);
      if (!controller) first.push(pod);
      else if (controllers.has(String(controller.uid))) later.push(pod);
      else {
        controllers.add(String(controller.uid));
        first.push(pod);
      }
    }
    const ordered = [...first, ...later];
    const checked = ordered.slice(0, MAX_PODS_TO_CHECK);
    const byWarning = new Map<string, { name: string; count: number }>();
    for (const [i, pod] of checked.entries()) {
      if (i > 0 && i % PODS_PER_TURN === 0) await new Promise((resolve) => setImmediate(resolve));
      const r = aggregate(this.evaluator.evaluate(enforce, pod.metadata ?? {}, isRecord(pod.spec) ? pod.spec : {}));
      if (r.allowed) continue;
      const podName = String(pod.metadata?.name ?? '');
      const seen = byWarning.get(r.reason);
      if (!seen) byWarning.set(r.reason, { name: podName, count: 1 });
      else {
        seen.count++;
        if (compareGoStrings(podName, seen.name) < 0) seen.name = podName;
      }
    }
    const warnings: string[] = [];
    if (checked.length < ordered.length) warnings.push(`new PodSecurity enforce level only checked against the first ${checked.length} of ${ordered.length} existing pods`);
    if (byWarning.size > 0) warnings.push(`existing pods in namespace ${JSON.stringify(namespace)} violate the new PodSecurity enforce level ${JSON.stringify(levelVersionString(enforce))}`);
    const podWarnings = [...byWarning].map(([warning, c]) =>
      c.count === 1 ? `${c.name}: ${warning}` : c.count === 2 ? `${c.name} (and 1 other pod): ${warning}` : `${c.name} (and ${c.count - 1} other pods): ${warning}`,
    );
    return [...warnings, ...podWarnings.sort(compareGoStrings)];
  }

  private async validatePod(a: AdmissionAttributes): Promise<void> {
    if (IGNORED_POD_SUBRESOURCES.has(a.subresource)) return;
    if (this.exempt(a)) return;
    const ns = await this.lookUpNamespace(a.namespace);
    if (!ns) {
      const err = errors.internal(`failed to lookup namespace ${JSON.stringify(a.namespace)}`);
      this.annotate(a, { error: `${err.message}: namespaces ${JSON.stringify(a.namespace)} not found` });
      throw err;
    }
    const { policy, errs } = policyToEvaluate(this.labelsOf(ns), this.config.defaults);
    if (errs.length === 0 && fullyPrivileged(policy)) {
      this.annotate(a, { 'enforce-policy': levelVersionString(PRIVILEGED_LATEST) });
      return;
    }
    const pod = a.object!;
    if (a.operation === 'UPDATE' && a.oldObject && !significantPodUpdate(pod, a.oldObject)) return;
    this.evaluate(a, policy, errs, pod.metadata ?? {}, isRecord(pod.spec) ? pod.spec : {}, true);
  }

  private async validatePodController(a: AdmissionAttributes, templateOf: (o: KObject) => unknown): Promise<void> {
    if (a.subresource) return;
    if (this.exempt(a)) return;
    const ns = await this.lookUpNamespace(a.namespace);
    if (!ns) return this.annotate(a, { error: `failed to lookup namespace ${JSON.stringify(a.namespace)}: namespaces ${JSON.stringify(a.namespace)} not found` });
    const { policy, errs } = policyToEvaluate(this.labelsOf(ns), this.config.defaults);
    if (errs.length === 0 && policy.warn.level === 'privileged' && policy.audit.level === 'privileged') return;
    const template = templateOf(a.object!);
    if (!isRecord(template)) return;
    this.evaluate(a, policy, errs, isRecord(template.metadata) ? template.metadata : {}, isRecord(template.spec) ? template.spec : {}, false);
  }

  /** The namespace the object goes to; undefined when it cannot be read. */
  private async lookUpNamespace(name: string): Promise<KObject | undefined> {
    try {
      return await this.namespaceOf(name);
    } catch {
      return undefined;
    }
  }

  /** Exempt by namespace or user: let through, and say why in the audit event. */
  private exempt(a: AdmissionAttributes): boolean {
    const by = this.exemptNamespace(a.namespace) ? 'namespace' : a.user?.name && this.config.exemptions.usernames.includes(a.user.name) ? 'user' : undefined;
    if (by) this.annotate(a, { exempt: by });
    return by !== undefined;
  }

  /** EvaluatePod: enforce (pods only), audit, warn, each level-version evaluated once. */
  private evaluate(a: AdmissionAttributes, policy: Policy, policyErrs: FieldError[], meta: KObject, spec: KObject, enforce: boolean): void {
    const runtimeClass = spec.runtimeClassName;
    if (typeof runtimeClass === 'string' && runtimeClass !== '' && this.config.exemptions.runtimeClasses.includes(runtimeClass)) {
      return this.annotate(a, { exempt: 'runtimeClass' });
    }
    const annotations: Record<string, string> = {};
    if (policyErrs.length > 0) annotations.error = `Failed to parse policy: ${aggregateText(policyErrs)}`;
    const results = new Map<string, ReturnType<typeof aggregate>>();
    const evaluate = (lv: LevelVersion) => {
      const key = levelVersionString(lv);
      let r = results.get(key);
      if (!r) results.set(key, (r = aggregate(this.evaluator.evaluate(lv, meta, spec))));
      return r;
    };
    let refusal: StatusError | undefined;
    if (enforce) {
      annotations['enforce-policy'] = levelVersionString(policy.enforce);
      const r = evaluate(policy.enforce);
      if (!r.allowed) refusal = admissionForbidden(a, `violates PodSecurity ${JSON.stringify(levelVersionString(policy.enforce))}: ${r.detail}`);
    }
    const audit = evaluate(policy.audit);
    if (!audit.allowed) annotations['audit-violations'] = `would violate PodSecurity ${JSON.stringify(levelVersionString(policy.audit))}: ${audit.detail}`;
    if (!refusal) {
      const warn = evaluate(policy.warn);
      if (!warn.allowed) a.warnings?.push(`would violate PodSecurity ${JSON.stringify(levelVersionString(policy.warn))}: ${warn.detail}`);
    }
    this.annotate(a, annotations);
    if (refusal) throw refusal;
  }

  private annotate(a: AdmissionAttributes, annotations: Record<string, string>): void {
    if (!a.auditAnnotations) return;
    for (const [k, v] of Object.entries(annotations)) a.auditAnnotations[PREFIX + k] = v;
  }
}

/** utilerrors.NewAggregate's text of field errors: one, or "[a, b]". */
function aggregateText(errs: FieldError[]): string {
  const texts = errs.map(fieldErrorText);
  return texts.length === 1 ? texts[0] : `[${texts.join(', ')}]`;
}

/** isSignificantPodUpdate: only a change of the containers (their number or images) is checked again. */
function significantPodUpdate(pod: KObject, old: KObject): boolean {
  const [spec, oldSpec] = [isRecord(pod.spec) ? pod.spec : {}, isRecord(old.spec) ? old.spec : {}];
  for (const key of ['containers', 'initContainers']) {
    const [now, before] = [records(spec[key]), records(oldSpec[key])];
    if (now.length !== before.length) return true;
    if (now.some((c, i) => c.image !== before[i].image)) return true;
  }
  const oldEphemeral = records(oldSpec.ephemeralContainers);
  for (const c of records(spec.ephemeralContainers)) {
    const o = oldEphemeral.find((e) => e.name === c.name);
    if (!o || o.image !== c.image) return true;
  }
  return false;
}

export const POD_SECURITY_ADMISSION: AdmissionPluginDefinition = {
  name: 'PodSecurity',
  caches: (ctx) => [ctx.namespaces, ctx.registry.lookup('', 'v1', 'pods')?.store].filter((x) => x !== undefined),
  parseConfig: (doc) => {
    try {
      return parsePodSecurityConfig(doc);
    } catch (err) {
      throw new Error(`PodSecurity invalid: ${(err as Error).message}`);
    }
  },
  make: (ctx: AdmissionContext) => {
    const config = (ctx.pluginConfig?.('PodSecurity') as PodSecurityConfig | undefined) ?? DEFAULT_CONFIG;
    const namespaces = ctx.namespaces;
    const namespaceOf = async (name: string): Promise<KObject | undefined> => {
      if (ctx.coreNamespaces) return ctx.coreNamespaces(name);
      return namespaces.cache.get(namespaces.key(undefined, name))?.object ?? (await namespaces.get(undefined, name));
    };
    const plugin = new PodSecurityAdmission(config, namespaceOf, ctx.registry.lookup('', 'v1', 'pods')?.store);
    return { name: 'PodSecurity', validate: (a) => plugin.validate(a) };
  },
};
