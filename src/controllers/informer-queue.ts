/**
 * What kapi's in-process controllers share: an informer of one resource whose events put keys on a rate-limited
 * work queue, a reconcile per key, failures retried with backoff and logged (the first and every tenth retry),
 * and one start and stop for both.
 */
import type { ResourceClient } from '../sdk/client.js';
import { Informer, type InformerHandlers } from '../sdk/informer.js';
import { WorkQueue } from '../sdk/workqueue.js';

export interface InformerQueue {
  readonly informer: Informer;
  readonly queue: WorkQueue;
  start(): Promise<void>;
  stop(): void;
}

/**
 * `label` names the controller in its log lines; `handlers` turns the informer's events into keys (through
 * `enqueue`), and `reconcile` brings one key's state about.
 */
export function informerQueue(
  resource: ResourceClient,
  label: string,
  log: (message: string) => void,
  reconcile: (key: string) => Promise<void>,
  handlers: (enqueue: (key: string) => void) => InformerHandlers,
): InformerQueue {
  const queue = new WorkQueue(reconcile, {
    onError: (key, err, retries) => {
      if (retries === 0 || retries % 10 === 0) log(`kapi: ${label}: ${key} (retry ${retries + 1}): ${(err as Error).message}`);
    },
  });
  const informer = new Informer(resource, handlers((key) => queue.add(key)), {
    onError: (err) => log(`kapi: ${label}: watching ${resource.gvr.resource}: ${(err as Error).message}`),
  });
  return {
    informer,
    queue,
    start: () => informer.start(),
    stop: () => {
      informer.stop();
      queue.shutdown();
    },
  };
}
