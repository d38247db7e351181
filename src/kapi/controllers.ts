/**
 * kapi's in-process controllers, the ones kube-controller-manager would run (namespace deletion, garbage
 * collection, the namespaces' default ServiceAccount and root CA, ServiceAccount token Secrets, ClusterRole
 * aggregation, ResourceQuota status, ValidatingAdmissionPolicy status) and the apiserver's own (APIService registration, CRD instance
 * cleanup): on one replica at a time, the one holding the Lease. Each calls the API through the loopback with an
 * identity of its own.
 */
import { addAdmissionPolicyStatus } from '../controllers/admission-policy-status.js';
import { APIServiceRegistration } from '../controllers/apiservice-registration.js';
import { addClusterRoleAggregation } from '../controllers/clusterrole-aggregation.js';
import { GarbageCollector } from '../controllers/garbage-collector.js';
import type { ControllerIdentities, ControllerIdentity } from '../controllers/identities.js';
import { NamespaceController } from '../controllers/namespace-controller.js';
import { addRootCaPublisher, addServiceAccountController } from '../controllers/namespace-defaults.js';
import { ObjectEventHub } from '../controllers/object-events.js';
import { addResourceQuotaController } from '../controllers/resource-quota-controller.js';
import { ServiceAccountTokenSecrets } from '../controllers/service-account-token-secrets.js';
import type { CrdController } from '../crd/controller.js';
import { CrdFinalizer } from '../crd/finalizer.js';
import type { ApiRegistry } from '../registry/registry.js';
import type { Client } from '../sdk/client.js';
import { Manager } from '../sdk/controller.js';
import { LeaderElector, type LeaderElectionOptions } from '../sdk/leader-election.js';
import type { ServerConfig } from './config.js';

/** The Lease (in kube-system) the replicas elect the one that runs the controllers by. */
export const CONTROLLERS_LEASE = 'kapi-controller-manager';

/**
 * kapi's controllers by kube-controller-manager's names, and the aliases it still takes (`--controllers`).
 * APIService registration is kube-apiserver's own (autoregister) and always runs.
 */
export const CONTROLLER_NAMES = [
  'clusterrole-aggregation-controller',
  'garbage-collector-controller',
  'namespace-controller',
  'resourcequota-controller',
  'root-ca-certificate-publisher-controller',
  'serviceaccount-controller',
  'serviceaccount-token-controller',
  'validatingadmissionpolicy-status-controller',
] as const;
const ALIASES: Record<string, string> = {
  'clusterrole-aggregation': 'clusterrole-aggregation-controller',
  garbagecollector: 'garbage-collector-controller',
  namespace: 'namespace-controller',
  resourcequota: 'resourcequota-controller',
  'root-ca-cert-publisher': 'root-ca-certificate-publisher-controller',
  serviceaccount: 'serviceaccount-controller',
  'serviceaccount-token': 'serviceaccount-token-controller',
};
const canonical = (name: string) => (Object.hasOwn(ALIASES, name) ? ALIASES[name] : name);

/** kube-controller-manager's errors for a --controllers list: names it does not know (a `-` before one too). */
export function controllerSelectionErrors(selectors: readonly string[]): string[] {
  const known = new Set<string>(CONTROLLER_NAMES);
  return selectors
    .filter((s) => s !== '*')
    .map((s) => (s.startsWith('-') ? s.slice(1) : s))
    .filter((name) => !known.has(canonical(name)))
    .map((name) => `${JSON.stringify(name)} is not in the list of known controllers`);
}

/**
 * Whether a controller runs, as kube-controller-manager's IsControllerEnabled: the first of its name (or alias)
 * or `-` its name decides; else `*` turns on every controller (all of kapi's are on by default); else it is off.
 */
export function controllerEnabled(name: string, selectors: readonly string[]): boolean {
  let star = false;
  for (const s of selectors) {
    if (s === '*') star = true;
    else if (s.startsWith('-')) {
      if (canonical(s.slice(1)) === name) return false;
    } else if (canonical(s) === name) return true;
  }
  return star;
}

export interface ControllerContext {
  registry: ApiRegistry;
  identities: ControllerIdentities;
  /** A loopback client acting as the identity. */
  clientFor(id: ControllerIdentity): Client;
  config: ServerConfig;
  crds: CrdController;
  leaderElection: LeaderElectionOptions;
  /** --controllers (kube-controller-manager's syntax; default `*`). */
  controllers: readonly string[];
}

export interface RunningControllers {
  elector: LeaderElector;
  /** Settles once the garbage collector has nothing left to do (at once when this replica does not lead). */
  gcIdle(): Promise<void>;
}

/** Elects a leader among the replicas; the leader runs the controllers until it stops leading. */
export async function startControllers(ctx: ControllerContext): Promise<RunningControllers> {
  const { registry, identities, clientFor, crds } = ctx;
  const { saTokens, servingCA, warn } = ctx.config;
  let term: { manager: Manager; gc?: GarbageCollector } | undefined;
  const leases = clientFor(identities.controllerManager).resource({ group: 'coordination.k8s.io', version: 'v1', resource: 'leases' });
  const elector = new LeaderElector(
    leases,
    {
      async onStartedLeading() {
        // A manager per term of leadership: its informers read as kube-controller-manager's shared informers
        // do (its own identity); each controller writes with its own.
        const manager = new Manager(clientFor(identities.controllerManager), { log: (m) => warn(`kapi: ${m}`) });
        const hub = new ObjectEventHub(registry);
        await manager.addRunnable(hub);
        const on = (name: (typeof CONTROLLER_NAMES)[number]) => controllerEnabled(name, ctx.controllers);
        if (on('namespace-controller')) new NamespaceController(manager, clientFor(identities.namespaces), hub);
        if (on('serviceaccount-controller')) addServiceAccountController(manager, clientFor(identities.serviceAccounts));
        if (on('root-ca-certificate-publisher-controller')) addRootCaPublisher(manager, clientFor(identities.rootCaPublisher), servingCA);
        if (on('clusterrole-aggregation-controller')) addClusterRoleAggregation(manager, clientFor(identities.clusterRoleAggregation));
        if (on('serviceaccount-token-controller')) new ServiceAccountTokenSecrets(manager, clientFor(identities.controllerManager), saTokens, servingCA);
        if (on('resourcequota-controller')) addResourceQuotaController(manager, clientFor(identities.resourceQuota), hub, registry);
        if (on('validatingadmissionpolicy-status-controller')) addAdmissionPolicyStatus(manager, clientFor(identities.admissionPolicyStatus), registry);
        await manager.addRunnable(new APIServiceRegistration(manager, clientFor(identities.apiserver), registry));
        const gc = on('garbage-collector-controller') ? new GarbageCollector(manager, hub, registry, clientFor(identities.garbageCollector)) : undefined;
        const finalizer = new CrdFinalizer(manager, clientFor(identities.apiserver), (name) => crds.storeOf(name));
        const mine = (term = { manager, gc });
        await manager.start();
        // The Lease may have been lost while the manager started.
        if (term === mine) crds.setFinalizer(finalizer);
      },
      onStoppedLeading() {
        crds.setFinalizer(undefined);
        void term?.manager.stop();
        term = undefined;
      },
    },
    ctx.leaderElection,
  );
  try {
    await elector.start();
  } catch (err) {
    // A first term that failed to start (its manager did not): the Lease and whatever the term started go with it.
    await elector.stop().catch(() => {});
    throw err;
  }
  return { elector, gcIdle: () => term?.gc?.idle() ?? Promise.resolve() };
}
