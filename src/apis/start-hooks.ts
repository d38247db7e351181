/**
 * The groups' start hooks (upstream's post-start hooks, by their names): what a group writes when a server
 * starts (the objects every cluster has, RBAC's bootstrap policy), and what it publishes once the server
 * listens (where the kubernetes Service's endpoints are). The server runs them without knowing what they write.
 */
import type { KObject } from '../api/object.js';
import type { RestStore } from '../registry/store.js';

/** What a start hook writes through: the stores of the served resources, and the server's settings. */
export interface StartContext {
  /** The store of a served resource (v1); throws when it is not served. */
  store(group: string, resource: string): RestStore;
  /** The kubernetes Service's ClusterIP (the first address of the service range). */
  kubernetesIP: string;
}

/** Where the server listens, for hooks that publish it. */
export interface ListeningAddress {
  /** The address bound (0.0.0.0 and :: are published as the loopback address). */
  bindAddress: string;
  port: number;
}

export interface StartHook {
  /** Upstream's post-start hook name (for errors). */
  name: string;
  /** Before the server takes requests; a failure stops the start. */
  run?(ctx: StartContext): Promise<void>;
  /** Once the server listens; a failure is reported and the server goes on. */
  listening?(ctx: StartContext, address: ListeningAddress): Promise<void>;
}

/** Creates each object that is not there yet (an object that exists is left as it is). */
export async function createMissing(store: RestStore, objects: readonly KObject[]): Promise<void> {
  await Promise.all(
    objects.map((obj) =>
      store.create(obj.metadata?.namespace, structuredClone(obj)).catch((err: { code?: number }) => {
        if (err.code !== 409) throw err;
      }),
    ),
  );
}
