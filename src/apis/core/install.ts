/** The core (the legacy group, /api/v1) group: its rows of the built-in table (see resource-table.ts) and its admission plugin. */
import { tokenRequestStorage } from '../authentication/token-request.js';
import { configMapPrinter, endpointsPrinter, eventPrinter, nodePrinter, persistentVolumeClaimPrinter, persistentVolumePrinter, podPrinter, podTemplatePrinter, replicationControllerPrinter, resourceQuotaPrinter, secretPrinter, serviceAccountPrinter, servicePrinter } from '../../printing/index.js';
import { res, WORKLOAD_SCALE, NO_COLLECTION, plain, withStatus, workload, type BuiltinResource } from '../resource-table.js';
import { nameIsDNS1035Label, validatePathSegmentName } from '../../machinery/validation.js';
import { eventStrategy } from '../events/validation.js';
import { configMapStrategy, secretStrategy } from './config.js';
import { POD_ADMISSION_PLUGINS, POD_SUBRESOURCES, podStrategy } from './pods.js';
import { serviceStrategy } from './services.js';
import { namespaceLifecycle } from './namespaces.js';
import { resourceQuotaAdmission } from './resource-quota.js';
import { limitRanger } from './limit-ranger.js';
import type { AdmissionPluginDefinition } from '../admission-plugins.js';
import { POD_SECURITY_ADMISSION } from './pod-security.js';
import type { AdmissionPlugin } from '../../registry/admission.js';
import type { JsonRecord } from '../../util/json-object.js';
import type { ApiRegistry } from '../../registry/registry.js';
import type { RestStore } from '../../registry/store.js';

const quotaStore = (registry: ApiRegistry) => registry.lookup('', 'v1', 'resourcequotas')!.store;
const limitRangeStore = (registry: ApiRegistry) => registry.lookup('', 'v1', 'limitranges')!.store;

/** NamespaceLifecycle (behind an aggregator, the core cluster's namespaces decide), the pod strategy's plugins, TaintNodesByCondition, LimitRanger, ResourceQuota, PodSecurity. */
export const CORE_ADMISSION: AdmissionPluginDefinition[] = [
  { name: 'NamespaceLifecycle', make: (ctx) => namespaceLifecycle(ctx.coreNamespaces ?? ctx.namespaces), caches: (ctx) => [ctx.namespaces] },
  // Built into the pod strategy, which runs each while it is on (BuiltinContext.admissionPlugins).
  ...POD_ADMISSION_PLUGINS.map((name) => ({ name })),
  { name: 'TaintNodesByCondition', make: () => taintNodesByCondition },
  { name: 'LimitRanger', make: (ctx) => limitRanger(limitRangeStore(ctx.registry)), caches: (ctx) => [limitRangeStore(ctx.registry)] },
  { name: 'ResourceQuota', make: (ctx) => resourceQuotaAdmission(quotaStore(ctx.registry)), caches: (ctx) => [quotaStore(ctx.registry)] },
  POD_SECURITY_ADMISSION,
];

const NOT_READY = { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' };

/** TaintNodesByCondition: a new Node is tainted not-ready (NoSchedule) until the node lifecycle controller sees it Ready. */
const taintNodesByCondition: AdmissionPlugin = {
  name: 'TaintNodesByCondition',
  reportsChanges: true,
  admit(a) {
    const node = a.object;
    if (!node || a.operation !== 'CREATE' || a.subresource || a.resource.group !== '' || a.resource.resource !== 'nodes') return;
    const taints: JsonRecord[] = Array.isArray(node.spec?.taints) ? node.spec.taints : [];
    if (taints.some((t) => t?.key === NOT_READY.key && t?.effect === NOT_READY.effect)) return;
    node.spec = { ...(node.spec ?? {}), taints: [...taints, { ...NOT_READY }] };
    a.defaulter?.(node);
  },
};

/** The resources of the core group kapi serves. */
export const CORE_RESOURCES: BuiltinResource[] = [
  res('', 'v1', 'configmaps', 'ConfigMap', true, { printer: configMapPrinter, shortNames: ['cm'], strategy: configMapStrategy(plain) }),
  res('', 'v1', 'endpoints', 'Endpoints', true, { printer: endpointsPrinter, shortNames: ['ep'], strategy: plain }),
  res('', 'v1', 'events', 'Event', true, { printer: eventPrinter, shortNames: ['ev'], strategy: eventStrategy(plain) }),
  res('', 'v1', 'limitranges', 'LimitRange', true, { shortNames: ['limits'], strategy: plain }),
  res('', 'v1', 'nodes', 'Node', false, { printer: nodePrinter, shortNames: ['no'], status: true, strategy: { ...plain, resetFieldsOnMainEndpoint: ['status'] } }),
  res('', 'v1', 'pods', 'Pod', true, { printer: podPrinter, shortNames: ['po'], categories: ['all'], status: true, subresources: POD_SUBRESOURCES, strategyIn: (_, c) => podStrategy(() => c.objects('scheduling.k8s.io', 'priorityclasses'), (namespace, name) => c.object('', 'serviceaccounts', namespace, name), (plugin) => c.admissionPlugins?.has(plugin) ?? true),
    reads: [['scheduling.k8s.io', 'priorityclasses'], ['', 'serviceaccounts']],
  }),
  res('', 'v1', 'podtemplates', 'PodTemplate', true, { printer: podTemplatePrinter, strategy: plain }),
  res('', 'v1', 'replicationcontrollers', 'ReplicationController', true, { printer: replicationControllerPrinter, shortNames: ['rc'], categories: ['all'], status: true, scale: WORKLOAD_SCALE, strategy: workload }),
  res('', 'v1', 'resourcequotas', 'ResourceQuota', true, { printer: resourceQuotaPrinter, shortNames: ['quota'], status: true, strategy: { ...plain, resetFieldsOnMainEndpoint: ['status'] } }),
  res('', 'v1', 'secrets', 'Secret', true, { printer: secretPrinter, strategy: secretStrategy(plain) }),
  res('', 'v1', 'serviceaccounts', 'ServiceAccount', true, { printer: serviceAccountPrinter,
    shortNames: ['sa'],
    strategy: plain,
    subresourcesIn: (c) => [{ name: 'token', group: 'authentication.k8s.io', version: 'v1', kind: 'TokenRequest', verbs: ['create'], storage: tokenRequestStorage(c.serviceAccountTokens) }],
  }),
  res('', 'v1', 'services', 'Service', true, { printer: servicePrinter, shortNames: ['svc'], categories: ['all'], verbs: NO_COLLECTION, status: true, strategy: { ...withStatus, nameRule: nameIsDNS1035Label }, strategyIn: (base, c, services) => serviceStrategy(base, c.ranges, services), reads: [['', 'services']] }),
  // Kinds an operator's install bundle and tests touch; stored with their typed decoding, no controller acts on them.
  res('', 'v1', 'persistentvolumes', 'PersistentVolume', false, { printer: persistentVolumePrinter, shortNames: ['pv'], status: true, strategy: { ...withStatus, nameRule: validatePathSegmentName } }),
  res('', 'v1', 'persistentvolumeclaims', 'PersistentVolumeClaim', true, { printer: persistentVolumeClaimPrinter, shortNames: ['pvc'], status: true, strategy: withStatus }),
];

/**
 * The core stores the server itself reads and writes: namespaces (NamespaceLifecycle), Services and Endpoints
 * (where webhooks, converters and aggregated servers are), ConfigMaps (the authentication settings published
 * for extension servers).
 */
export function coreStores(registry: ApiRegistry): { namespaces: RestStore; services: RestStore; endpoints: RestStore; configMaps: RestStore } {
  const store = (resource: string) => registry.lookup('', 'v1', resource)!.store;
  return { namespaces: store('namespaces'), services: store('services'), endpoints: store('endpoints'), configMaps: store('configmaps') };
}
