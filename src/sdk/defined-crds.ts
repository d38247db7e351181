/**
 * The CRDs of resources defined in TypeScript (`defineResource`), written by the server that serves them.
 */
import type { KObject } from '../api/object.js';
import { StatusError } from '../machinery/status.js';
import { deepEqual } from '../util/deep-equal.js';
import type { Client } from './client.js';
import type { ResourceDefinition } from './resource.js';

/**
 * Each defined resource's CRD as its definition says, created or replaced (served when this returns). Replicas
 * starting together race for the same CRDs: a create or update that loses (409) reads again and retries.
 */
export async function writeDefinedCrds(client: Client, resources: readonly ResourceDefinition<unknown>[]): Promise<void> {
  const crdClient = client.resource({ group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions' });
  const conflict = (err: unknown) => err instanceof StatusError && err.code === 409;
  await Promise.all(resources.map((r) => writeOne(r)));

  async function writeOne(r: ResourceDefinition<unknown>): Promise<void> {
    const name = r.crd.metadata.name as string;
    for (let attempt = 0; ; attempt++) {
      try {
        let current: KObject | undefined;
        try {
          current = await crdClient.get(undefined, name);
        } catch (err) {
          if (!(err instanceof StatusError) || err.code !== 404) throw err;
        }
        if (!current) await crdClient.create(undefined, r.crd);
        else {
          const wanted = { ...current, metadata: { ...current.metadata, labels: { ...current.metadata.labels, ...r.crd.metadata.labels } }, spec: { ...current.spec, ...r.crd.spec } };
          if (!deepEqual(wanted, current)) await crdClient.update(undefined, name, wanted);
        }
        break;
      } catch (err) {
        if (!conflict(err) || attempt >= 10) throw err;
      }
    }
  }
}
