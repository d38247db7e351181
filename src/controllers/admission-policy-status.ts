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
import type { Client } from '../sdk/client.js';
import type { Controller, Manager } from '../sdk/controller.js';
import { isRecord } from '../util/json-object.js';

const POLICIES = { group: 'admissionregistration.k8s.io', version: 'v1', resource: 'validatingadmissionpolicies', namespaced: false };

/** Adds the controller to `manager` (whose informer it reads); `client` writes the status. */
export function addAdmissionPolicyStatus(manager: Manager, client: Client, registry: ApiRegistry): Controller {
  const policies = manager.informer(POLICIES);
  const writer = client.resource(POLICIES);
  return manager.add({
    name: 'validatingadmissionpolicy-status-controller',
    for: POLICIES,
    // A deleted policy has no status to write (the reconcile checks the generation it observed).
    predicates: [{ delete: () => false }],
    reconcile: async ({ name }) => {
      const policy = policies.get(name);
      if (!policy || !isRecord(policy.spec)) return;
      const generation = Number(policy.metadata.generation ?? 0);
      const status = isRecord(policy.status) ? policy.status : {};
      if (Number(status.observedGeneration ?? 0) >= generation) return;
      const warnings = typeCheckPolicy(policy.spec, registry);
      const typeChecking = warnings.length > 0 ? { expressionWarnings: warnings } : {};
      await writer.update(undefined, name, { ...policy, status: { ...status, observedGeneration: generation, typeChecking } } as KObject, 'status');
    },
  });
}
