/**
 * The Foo controller as a process of its own, against any API server a kubeconfig names (kapi serve,
 * kube-apiserver): it writes the Foo CRD if it is missing, then reconciles Foos until stopped.
 *
 *   node dist/examples/foo-controller/main.js [--kubeconfig <file>] [--leader-elect]
 */
import { connect, EventRecorder, Manager, StatusError, type Client } from 'kapi/sdk';
import { Foo, fooController, type ExternalResources } from './foo.js';

/** Creates the Foo CRD unless the server has it. */
export async function installFoo(client: Client): Promise<void> {
  const crds = client.resource({ group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions' });
  try {
    await crds.create(undefined, Foo.crd);
  } catch (err) {
    if (!(err instanceof StatusError && err.code === 409)) throw err;
  }
}

/** A running Foo controller: its manager (stop it with `manager.stop()`). */
export async function runFooController(client: Client, external: ExternalResources, opts: { leaderElect?: boolean } = {}): Promise<Manager> {
  await installFoo(client);
  const manager = new Manager(client, opts.leaderElect ? { leaderElection: { namespace: 'default', name: 'foo-controller' } } : {});
  manager.add(fooController(client, external, new EventRecorder(client, { controller: 'foo.example.com/foo-controller' })));
  await manager.start();
  return manager;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const arg = (name: string) => {
    const i = process.argv.indexOf(name);
    return i > 0 ? process.argv[i + 1] : undefined;
  };
  const client = connect({ kubeconfig: arg('--kubeconfig'), userAgent: 'foo-controller' });
  const external = new Set<string>();
  const manager = await runFooController(client, { ensure: (k) => void external.add(k), remove: (k) => void external.delete(k) }, { leaderElect: process.argv.includes('--leader-elect') });
  process.stdout.write('foo-controller: running\n');
  const stop = async () => {
    await manager.stop();
    client.close();
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
