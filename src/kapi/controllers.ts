/**
 * kapi's in-process controllers, the ones kube-controller-manager would run (namespace deletion, garbage
 * collection, the namespaces' default ServiceAccount and root CA, ServiceAccount token Secrets, ClusterRole
 * aggregation, ValidatingAdmissionPolicy status) and the apiserver's own (APIService registration, CRD instance
 * cleanup): on one replica at a time, the one holding the Lease. Each calls the API through the loopback with an
 * identity of its own.
 */
import { AdmissionPolicyStatus } from '../controllers/admission-policy-status.js';
import { APIServiceRegistration } from '../controllers/apiservice-registration.js';
import { ClusterRoleAggregation } from '../controllers/clusterrole-aggregation.js';
import { GarbageCollector } from '../controllers/garbage-collector.js';
import type { ControllerIdentities, ControllerIdentity } from '../controllers/identities.js';
import { NamespaceController } from '../controllers/namespace-controller.js';
import { NamespaceDefaults } from '../controllers/namespace-defaults.js';
import { ObjectEventHub } from '../controllers/object-events.js';
import { ServiceAccountTokenSecrets } from '../controllers/service-account-token-secrets.js';
import type { CrdController } from '../crd/controller.js';
import type { ApiRegistry } from '../registry/registry.js';
import type { Client } from '../sdk/client.js';
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
  let controllers: Array<{ stop(): void }> = [];
  let gc: GarbageCollector | undefined;
  const leases = clientFor(identities.controllerManager).resource({ group: 'coordination.k8s.io', version: 'v1', resource: 'leases' });
  const elector = new LeaderElector(
    leases,
    {
      async onStartedLeading() {
        const hub = new ObjectEventHub(registry);
        const started = [
          hub,
          new NamespaceController(clientFor(identities.namespaces), hub, warn),
          new NamespaceDefaults(clientFor(identities.controllerManager), clientFor(identities.serviceAccounts), clientFor(identities.rootCaPublisher), servingCA, warn),
          new ClusterRoleAggregation(clientFor(identities.clusterRoleAggregation), warn),
          new ServiceAccountTokenSecrets(clientFor(identities.controllerManager), saTokens, servingCA, warn),
          new AdmissionPolicyStatus(clientFor(identities.admissionPolicyStatus), registry, warn),
          new APIServiceRegistration(clientFor(identities.apiserver), registry, warn),
        ];
        gc = new GarbageCollector(hub, registry, clientFor(identities.garbageCollector), warn);
        controllers = [...started, gc];
        for (const c of started) await c.start();
        crds.setLeader(true);
      },
      onStoppedLeading() {
        for (const c of controllers) c.stop();
        controllers = [];
        gc = undefined;
        crds.setLeader(false);
      },
    },
    ctx.leaderElection,
  );
  await elector.start();
  return { elector, gcIdle: () => gc?.idle() ?? Promise.resolve() };
}
