/**
 * What every namespace of a cluster has, put there as kube-controller-manager does, as a client of the
 * API: the `default` ServiceAccount (the service account controller, "serviceaccount") and the
 * `kube-root-ca.crt` ConfigMap holding the cluster's CA certificate (the root CA certificate publisher,
 * "root-ca-cert-publisher"). Both follow the manager's namespace informer and read what exists with the
 * manager's identity (kube-controller-manager's own, as its shared informers do); their accounts only
 * create, as their roles allow. A namespace being deleted is left alone; failures are retried with backoff.
 */
import type { KObject } from '../api/object.js';
import type { Client, ResourceClient } from '../sdk/client.js';
import type { Controller, Manager } from '../sdk/controller.js';

export const ROOT_CA_CONFIGMAP = 'kube-root-ca.crt';

const NAMESPACES = { group: '', version: 'v1', resource: 'namespaces', namespaced: false };

/** A controller that makes one object in every namespace that is not being deleted. */
function addPerNamespace(manager: Manager, name: string, writer: Writer, objectFor: (namespace: string) => KObject): Controller {
  const namespaces = manager.informer(NAMESPACES);
  const live = (ns: KObject) => !ns.metadata?.deletionTimestamp;
  return manager.add({
    name,
    for: NAMESPACES,
    predicates: [{ create: live, update: live, delete: () => false }],
    reconcile: async ({ name: namespace }) => {
      if (namespaces.get(namespace)?.metadata.deletionTimestamp) return;
      await ensure(writer, namespace, objectFor(namespace));
    },
  });
}

/** The service account controller: `default` in every namespace, created by `client`. */
export function addServiceAccountController(manager: Manager, client: Client): Controller {
  return addPerNamespace(manager, 'serviceaccount-controller', writerOf(manager, client, 'serviceaccounts'), (namespace) => ({
    kind: 'ServiceAccount',
    apiVersion: 'v1',
    metadata: { name: 'default', namespace },
  }));
}

/** The root CA certificate publisher: `kube-root-ca.crt` with `caCertPem` in every namespace, created by `client`. */
export function addRootCaPublisher(manager: Manager, client: Client, caCertPem: string): Controller {
  return addPerNamespace(manager, 'root-ca-certificate-publisher-controller', writerOf(manager, client, 'configmaps'), (namespace) => ({
    kind: 'ConfigMap',
    apiVersion: 'v1',
    metadata: { name: ROOT_CA_CONFIGMAP, namespace, annotations: { 'kubernetes.io/description': ROOT_CA_DESCRIPTION } },
    data: { 'ca.crt': caCertPem },
  }));
}

function writerOf(manager: Manager, client: Client, resource: string): Writer {
  const gvr = { group: '', version: 'v1', resource };
  return { read: manager.apiReader(gvr), write: client.resource(gvr) };
}

const ROOT_CA_DESCRIPTION =
  'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.';

/** A resource read by one identity and written by another. */
interface Writer {
  read: ResourceClient;
  write: ResourceClient;
}

/** Create the object unless it exists; a namespace that is going (403 from NamespaceLifecycle) or gone is fine. */
async function ensure(resource: Writer, namespace: string, obj: KObject): Promise<void> {
  try {
    await resource.read.get(namespace, obj.metadata.name);
    return;
  } catch (err) {
    if ((err as { code?: number }).code !== 404) throw err;
  }
  try {
    await resource.write.create(namespace, obj);
  } catch (err) {
    const code = (err as { code?: number }).code;
    if (code === 409 || code === 403 || code === 404) return;
    throw err;
  }
}
