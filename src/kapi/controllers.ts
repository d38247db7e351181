/**
 * kapi's in-process controllers, the ones kube-controller-manager would run (namespace deletion, garbage
 * collection, the namespaces' default ServiceAccount and root CA, ServiceAccount token Secrets, ClusterRole
 * aggregation, ValidatingAdmissionPolicy status) and the apiserver's own (APIService registration, CRD instance
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
import { ServiceAccountTokenSecrets } from '../controllers/service-account-token-secrets.js';
import type { CrdController } from '../crd/controller.js';
import type { ApiRegistry } from '../registry/registry.js';
import type { Client } from '../sdk/client.js';
import { Manager } from '../sdk/controller.js';
import { LeaderElector, type LeaderElectionOptions } from '../sdk/leader-election.js';
import type { ServerConfig } from './config.js';

export interface ControllerContext {
  registry: ApiRegistry;
  identities: ControllerIdentities;
  /** A loopback client acting as the identity. */
  clientFor(id: ControllerIdentity): Client;
  config: ServerConfig;
  crds: CrdController;
  leaderElection: LeaderElectionOptions;
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
  let term: { manager: Manager; hub: ObjectEventHub; gc: GarbageCollector; registration: APIServiceRegistration } | undefined;
  const leases = clientFor(identities.controllerManager).resource({ group: 'coordination.k8s.io', version: 'v1', resource: 'leases' });
  const elector = new LeaderElector(
    leases,
    {
      async onStartedLeading() {
        // A manager per term of leadership: its informers read as kube-controller-manager's shared informers
        // do (its own identity); each controller writes with its own.
        const manager = new Manager(clientFor(identities.controllerManager), { log: (m) => warn(`kapi: ${m}`) });
        const hub = new ObjectEventHub(registry);
        new NamespaceController(manager, clientFor(identities.namespaces), hub);
        addServiceAccountController(manager, clientFor(identities.serviceAccounts));
        addRootCaPublisher(manager, clientFor(identities.rootCaPublisher), servingCA);
        addClusterRoleAggregation(manager, clientFor(identities.clusterRoleAggregation));
        new ServiceAccountTokenSecrets(manager, clientFor(identities.controllerManager), saTokens, servingCA);
        addAdmissionPolicyStatus(manager, clientFor(identities.admissionPolicyStatus), registry);
        const registration = new APIServiceRegistration(manager, clientFor(identities.apiserver), registry);
        const gc = new GarbageCollector(hub, registry, clientFor(identities.garbageCollector), warn);
        term = { manager, hub, gc, registration };
        await hub.start();
        await manager.start();
        crds.setLeader(true);
      },
      onStoppedLeading() {
        if (term) {
          term.registration.stop();
          void term.manager.stop();
          term.hub.stop();
          term.gc.stop();
        }
        term = undefined;
        crds.setLeader(false);
      },
    },
    ctx.leaderElection,
  );
  await elector.start();
  return { elector, gcIdle: () => term?.gc.idle() ?? Promise.resolve() };
}
