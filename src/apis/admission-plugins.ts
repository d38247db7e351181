/**
 * Admission plugins by name, as kube-apiserver has them: each group gives the plugins it implements
 * (its install.ts), and a server runs those that are on, in upstream's order (AllOrderedPlugins of
 * kubeapiserver/options/plugins.go), whatever order the groups list them in. What is on is upstream's
 * default set, plus --enable-admission-plugins, less --disable-admission-plugins.
 */
import type { Authorizer } from '../api/authorization.js';
import type { KObject } from '../api/object.js';
import type { AdmissionAttributes, AdmissionPlugin } from '../registry/admission.js';
import { errors, type StatusError } from '../machinery/status.js';
import type { ApiRegistry } from '../registry/registry.js';
import type { RestStore } from '../registry/store.js';
import type { AdmissionHook } from './admissionregistration/webhook-admission.js';
import type { ServiceResolver } from '../machinery/webhook-client.js';

/** Every admission plugin kube-apiserver registers, in the order they run (webhooks, quota and deny last). */
export const ALL_ORDERED_PLUGINS: readonly string[] = [
  'AlwaysAdmit',
  'NamespaceAutoProvision',
  'NamespaceLifecycle',
  'NamespaceExists',
  'LimitPodHardAntiAffinityTopology',
  'LimitRanger',
  'ServiceAccount',
  'NodeRestriction',
  'TaintNodesByCondition',
  'AlwaysPullImages',
  'ImagePolicyWebhook',
  'PodSecurity',
  'PodNodeSelector',
  'Priority',
  'DefaultTolerationSeconds',
  'PodTolerationRestriction',
  'EventRateLimit',
  'ExtendedResourceToleration',
  'DefaultStorageClass',
  'StorageObjectInUseProtection',
  'PodGroupProtection',
  'OwnerReferencesPermissionEnforcement',
  'PersistentVolumeClaimResize',
  'RuntimeClass',
  'CertificateApproval',
  'CertificateSigning',
  'ClusterTrustBundleAttest',
  'CertificateSubjectRestriction',
  'DefaultIngressClass',
  'DenyServiceExternalIPs',
  'PodTopologyLabels',
  'PodGroupWorkloadExists',
  'NodeDeclaredFeatureValidator',
  'JobValidation',
  'PodResizeValidator',
  // Plugins of the embedder (KapiOptions.admission) run here, as upstream inserts new plugins above the last ones.
  'MutatingAdmissionPolicy',
  'MutatingAdmissionWebhook',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionWebhook',
  'ResourceQuota',
  'AlwaysDeny',
];

/** The plugins on when no flag says otherwise (DefaultOffAdmissionPlugins' complement). */
export const DEFAULT_ON_PLUGINS: ReadonlySet<string> = new Set([
  'NamespaceLifecycle',
  'LimitRanger',
  'ServiceAccount',
  'DefaultStorageClass',
  'PersistentVolumeClaimResize',
  'DefaultTolerationSeconds',
  'MutatingAdmissionWebhook',
  'ValidatingAdmissionWebhook',
  'ResourceQuota',
  'StorageObjectInUseProtection',
  'PodGroupProtection',
  'Priority',
  'TaintNodesByCondition',
  'RuntimeClass',
  'CertificateApproval',
  'CertificateSigning',
  'ClusterTrustBundleAttest',
  'CertificateSubjectRestriction',
  'DefaultIngressClass',
  'PodSecurity',
  'PodTopologyLabels',
  'MutatingAdmissionPolicy',
  'ValidatingAdmissionPolicy',
  'PodGroupWorkloadExists',
  'NodeDeclaredFeatureValidator',
  'JobValidation',
  'PodResizeValidator',
]);

/** What the groups' plugins are made from: the server's stores, authorizer and settings. */
export interface AdmissionContext {
  registry: ApiRegistry;
  /** kapi's namespaces (their watch cache: labels for selectors). */
  namespaces: RestStore;
  /** Behind an aggregator: the core cluster's namespaces, which decide where objects may go. */
  coreNamespaces?: (name: string) => Promise<KObject>;
  authorizer: Authorizer;
  resolveService: ServiceResolver;
  /** Admission hooks in the process (KapiOptions.admissionHooks). */
  hooks?: AdmissionHook[];
  /**
   * A plugin's configuration from --admission-control-config-file (its `configuration`, or the file its `path`
   * names), if any; for a plugin with parseConfig, what that returned.
   */
  pluginConfig?: (name: string) => unknown;
  /** Told of every webhook call (upstream's admission webhook metrics). */
  observeWebhook?: (name: string, type: 'admit' | 'validating', operation: string, seconds: number, outcome: { rejected: boolean; code: number; error?: 'calling_webhook_error' | 'no_error' }) => void;
}

/** An admission plugin a group implements, by upstream's name. */
export interface AdmissionPluginDefinition {
  readonly name: string;
  /** The plugin; absent for one built into a strategy, which asks whether it is on (BuiltinContext.admissionPlugins). */
  make?(ctx: AdmissionContext): AdmissionPlugin;
  /** The stores whose watch caches the plugin decides from: started, when it is on, before the server serves. */
  caches?(ctx: AdmissionContext): RestStore[];
  /**
   * Reads the plugin's configuration (from --admission-control-config-file; undefined when it has none) and throws,
   * with the message the server fails to start with, when it is wrong. Called with the other settings, before
   * anything is opened; `make` is then given the value it returned (AdmissionContext.pluginConfig).
   */
  parseConfig?(config: unknown): unknown;
}

/** What --enable-admission-plugins and --disable-admission-plugins may not say (upstream's messages). */
export function admissionFlagErrors(enable: readonly string[], disable: readonly string[]): string[] {
  const known = new Set(ALL_ORDERED_PLUGINS);
  const errs: string[] = [];
  for (const name of enable) if (!known.has(name)) errs.push(`enable-admission-plugins plugin ${JSON.stringify(name)} is unknown`);
  for (const name of disable) if (!known.has(name)) errs.push(`disable-admission-plugins plugin ${JSON.stringify(name)} is unknown`);
  const off = new Set(disable);
  const both = [...new Set(enable)].filter((n) => off.has(n)).sort();
  if (both.length > 0) errs.push(`[${both.join(' ')}] in enable-admission-plugins and disable-admission-plugins overlapped`);
  return errs;
}

/** The names of the plugins that are on, in the order they run. */
export function enabledAdmissionPlugins(enable: readonly string[] = [], disable: readonly string[] = []): string[] {
  const on = new Set([...DEFAULT_ON_PLUGINS, ...enable]);
  for (const name of disable) on.delete(name);
  return ALL_ORDERED_PLUGINS.filter((n) => on.has(n));
}

/**
 * The plugins of `definitions` that are on, in upstream's order, with `embedded` (the embedder's plugins)
 * before the dynamic ones. A plugin that is on and that no group implements is not run: kapi does not have it
 * (`missingAdmissionPlugins` names those a user asked for).
 */
export function admissionPlugins(definitions: readonly AdmissionPluginDefinition[], enabled: readonly string[], ctx: AdmissionContext, embedded: readonly AdmissionPlugin[] = []): AdmissionPlugin[] {
  const byName = new Map(definitions.map((d) => [d.name, d]));
  const on = new Set(enabled);
  const out: AdmissionPlugin[] = [];
  for (const name of ALL_ORDERED_PLUGINS) {
    if (name === 'MutatingAdmissionPolicy') out.push(...embedded);
    const definition = on.has(name) ? byName.get(name) : undefined;
    if (definition?.make) out.push(definition.make(ctx));
  }
  return out;
}

/** The stores the plugins that are on read from their watch caches, each once. */
export function admissionCaches(definitions: readonly AdmissionPluginDefinition[], enabled: readonly string[], ctx: AdmissionContext): RestStore[] {
  const on = new Set(enabled);
  return [...new Set(definitions.filter((d) => on.has(d.name)).flatMap((d) => d.caches?.(ctx) ?? []))];
}

/** The plugins `enable` asks for that no group implements. */
export function missingAdmissionPlugins(definitions: readonly AdmissionPluginDefinition[], enable: readonly string[]): string[] {
  const implemented = new Set(definitions.map((d) => d.name));
  return [...new Set(enable)].filter((n) => !implemented.has(n));
}

/**
 * admission.NewForbidden: a plugin's refusal of a request, a 403 naming its object (the name in the URL, else the
 * object's name or generateName, else "Unknown").
 */
export function admissionForbidden(a: AdmissionAttributes, message: string): StatusError {
  const name = a.name || a.object?.metadata?.name || a.object?.metadata?.generateName || 'Unknown';
  return errors.forbidden({ group: a.resource.group, resource: a.resource.resource }, String(name), message);
}
