/**
 * YAML request bodies, read without stalling the event loop: a body that is
 * JSON (kubectl sends JSON as application/apply-patch+yaml) is parsed as JSON;
 * a small one is parsed in place; a large one on a thread of its own
 * (`yaml-worker.ts`), one at a time, while the server goes on serving.
 * The answers are those of parseYaml: the value, or a YamlSyntaxError.
 */
import { Worker } from 'node:worker_threads';
import { parseJson } from '../machinery/json.js';
import { parseYaml, YamlSyntaxError } from '../machinery/yaml.js';
import type { YamlReply, YamlRequest } from './yaml-worker.js';

/** Below this, parsing in place costs less than the trip to the thread (about a millisecond). */
const IN_PLACE_BYTES = 64 * 1024;
const WORKER = new URL('./yaml-worker.js', import.meta.url);

interface Pending {
  resolve(v: unknown): void;
  reject(e: Error): void;
}

let worker: Worker | undefined;
let nextId = 1;
const pending = new Map<number, Pending>();

function thread(): Worker {
  if (worker) return worker;
  const w = new Worker(WORKER);
  w.on('message', (reply: YamlReply) => {
    const p = pending.get(reply.id);
    if (!p) return;
    pending.delete(reply.id);
    if (pending.size === 0) w.unref();
    if ('json' in reply) p.resolve(parseJson(reply.json));
    else if ('syntaxError' in reply) p.reject(new YamlSyntaxError(reply.syntaxError, reply.line));
    else p.reject(new Error(reply.failure));
  });
  const gone = (err: Error) => {
    if (worker === w) worker = undefined;
    for (const p of pending.values()) p.reject(err);
    pending.clear();
  };
  w.on('error', gone);
  w.on('exit', (code) => gone(new Error(`the YAML parser thread exited (${code})`)));
  w.unref();
  worker = w;
  return w;
}

/** A JSON text: its value; anything else: undefined (then it is read as YAML). */
function asJson(text: string): unknown {
  const first = /\S/.exec(text)?.[0];
  if (first !== '{' && first !== '[') return undefined;
  try {
    return parseJson(text);
  } catch {
    return undefined;
  }
}

/** The first document of a YAML (or JSON) text, as parseYaml reads it. */
export async function parseYamlBody(text: string): Promise<unknown> {
  const json = asJson(text);
  if (json !== undefined) return json;
  if (text.length < IN_PLACE_BYTES) return parseYaml(text);
  const w = thread();
  const id = nextId++;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject });
    w.ref();
    w.postMessage({ id, text } satisfies YamlRequest);
  });
}
