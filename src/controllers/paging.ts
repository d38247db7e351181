/**
 * Lists read a page at a time, as client-go's pager reads them: each answer (500 objects) is parsed on its own, with a
 * turn of the event loop between two, so that a namespace of 100,000 objects is never read in one step.
 */
import type { KObject } from '../api/object.js';
import type { ResourceClient } from '../sdk/client.js';
import { nextTurn } from '../util/turns.js';

/** Objects' metadata only (PartialObjectMetadataList), or the whole objects from a server that cannot. */
export const METADATA_LIST = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';

/** Objects per page (client-go's pager's default). */
const PAGE = 500;

/** The objects of a resource (in a namespace, or all), page by page. */
export async function* inPages(resource: ResourceClient, namespace: string | undefined, accept?: string): AsyncGenerator<KObject> {
  let cont: string | undefined;
  do {
    const page = await resource.list(namespace, { limit: String(PAGE), continue: cont }, accept);
    yield* (page.items ?? []) as KObject[];
    cont = (page.metadata?.continue as string | undefined) || undefined;
    // A loopback answer settles within the turn it was asked in: without a turn between pages, a whole list would
    // still be read in one step.
    if (cont) await nextTurn();
  } while (cont);
}
