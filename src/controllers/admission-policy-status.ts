/**
 * The ValidatingAdmissionPolicy status controller, as kube-controller-manager's: each policy whose generation
 * is newer than its status' observedGeneration is type checked (apis/admissionregistration/type-checking.ts)
 * and its status written with the warnings (`status.typeChecking.expressionWarnings`) and the generation
 * observed. It works as a client of the API with its own account
 * (`system:serviceaccount:kube-system:validatingadmissionpolicy-status-controller`).
 */
import { typeCheckPolicy } from '../apis/admissionregistration/type-checking.js';
import type { ApiRegistry } from '../registry/registry.js';
import type { KObject } from '../api/object.js';
import type { Client, ResourceClient } from '../sdk/client.js';
import { informerQueue, type InformerQueue } from './informer-queue.js';
import { isRecord } from '../util/json-object.js';

export class AdmissionPolicyStatus {
  private readonly loop: InformerQueue;
  private readonly policies: ResourceClient;

  constructor(client: Client, private readonly registry: ApiRegistry, log: (message: string) => void) {
    this.policies = client.resource({ group: 'admissionregistration.k8s.io', version: 'v1', resource: 'validatingadmissionpolicies' });
    this.loop = informerQueue(this.policies, 'validatingadmissionpolicy status', log, (name) => this.reconcile(name), (enqueue) => {
      const changed = (policy: KObject) => enqueue(policy.metadata.name);
      return { added: changed, updated: changed };
    });
  }

  start(): Promise<void> {
    return this.loop.start();
  }

  stop(): void {
    this.loop.stop();
  }

  private async reconcile(name: string): Promise<void> {
    const policy = this.loop.informer.get(name);
    if (!policy || !isRecord(policy.spec)) return;
    const generation = Number(policy.metadata.generation ?? 0);
    const status = isRecord(policy.status) ? policy.status : {};
    if (Number(status.observedGeneration ?? 0) >= generation) return;
    const warnings = typeCheckPolicy(policy.spec, this.registry);
    const typeChecking = warnings.length > 0 ? { expressionWarnings: warnings } : {};
    await this.policies.update(undefined, name, { ...policy, status: { ...status, observedGeneration: generation, typeChecking } } as KObject, 'status');
  }
}
