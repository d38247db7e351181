/**
 * import() of a user's module (converters, admission hooks, resources, a project's built code) by its path.
 * The bundle runs compiled from V8's code cache (bin/kapi.js), and Node 20 loses a cached script's dynamic
 * import callback ("A dynamic import callback was not specified"): bin/kapi.js, an ES module, lends its own
 * import() under this symbol. The compiled modules (dist/src, the tests) import directly.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const LOADER_IMPORT = Symbol.for('kapi.import');

export async function importFile(path: string): Promise<Record<string, unknown>> {
  const url = pathToFileURL(resolve(path)).href;
  const lent = (globalThis as Record<symbol, unknown>)[LOADER_IMPORT] as ((specifier: string) => Promise<Record<string, unknown>>) | undefined;
  return lent ? lent(url) : ((await import(url)) as Record<string, unknown>);
}
