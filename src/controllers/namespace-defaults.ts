/**
 * What every namespace of a cluster has, put there as kube-controller-manager does, as a client of the
 * API: the `default` ServiceAccount (the service account controller) and the `kube-root-ca.crt`
 * ConfigMap holding the cluster's CA certificate (the root CA certificate publisher). Namespaces come
 * from an informer; a namespace being deleted is left alone; failures are retried with backoff.
 */
import type { KObject } from '../api/object.js';
import type { Client, ResourceClient } from '../sdk/client.js';
import { informerQueue, type InformerQueue } from './informer-queue.js';

export const ROOT_CA_CONFIGMAP = 'kube-root-ca.crt';

export class NamespaceDefaults {
  private readonly loop: InformerQueue;
  private readonly serviceAccounts: Writer;
  private readonly configMaps: Writer;

  /**
   * `reader` watches namespaces and reads what exists (kube-controller-manager's own identity, as its
   * shared informers do); the controllers' accounts only create, as their roles allow.
   */
  constructor(
    reader: Client,
    serviceAccountClient: Client,
    rootCaClient: Client,
    private readonly caCertPem: string,
    log: (message: string) => void,
  ) {
    const namespaces = reader.resource({ group: '', version: 'v1', resource: 'namespaces' });
    const writer = (client: Client, resource: string): Writer => ({
      read: reader.resource({ group: '', version: 'v1', resource }),
      write: client.resource({ group: '', version: 'v1', resource }),
    });
    this.serviceAccounts = writer(serviceAccountClient, 'serviceaccounts');
    this.configMaps = writer(rootCaClient, 'configmaps');
    this.loop = informerQueue(namespaces, 'namespace defaults', log, (name) => this.reconcile(name), (enqueue) => {
      const consider = (ns: KObject) => {
        if (!ns.metadata?.deletionTimestamp) enqueue(ns.metadata.name);
      };
      return { added: consider, updated: consider };
    });
  }

  start(): Promise<void> {
    return this.loop.start();
  }

  stop(): void {
    this.loop.stop();
  }

  private async reconcile(name: string): Promise<void> {
    if (this.loop.informer.get(name)?.metadata.deletionTimestamp) return;
    await ensure(this.serviceAccounts, name, { kind: 'ServiceAccount', apiVersion: 'v1', metadata: { name: 'default', namespace: name } });
    await ensure(this.configMaps, name, {
      kind: 'ConfigMap',
      apiVersion: 'v1',
      metadata: { name: ROOT_CA_CONFIGMAP, namespace: name, annotations: { 'kubernetes.io/description': ROOT_CA_DESCRIPTION } },
      data: { 'ca.crt': this.caCertPem },
    });
  }
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
