/**
 * YAML request bodies and answers, without stalling the event loop.
 *
 * A body that is JSON (kubectl sends JSON as application/apply-patch+yaml) is
 * parsed as JSON; a small one is parsed in place; a large one, or one nested
 * deeper than the parser can go on the event loop's stack, on a thread of its
 * own (`yaml-worker.ts`, with a larger stack), one at a time, while the server
 * goes on serving; one whose request is gone by its turn is not parsed.
 * The answers are those of parseYaml: the value, or a YamlSyntaxError; or, for a
 * value nested deeper than JSON may be (10,000 levels), encoding/json's
 * JsonSyntaxError, as the apiserver decodes the JSON the YAML turns into.
 *
 * An answer is written in place while it stays under a megabyte (a few
 * milliseconds); a larger one (a deeply nested object prints its indentation on
 * every line: 190 KB of JSON can be 70 MB of YAML) is written on the same thread.
 */
import { Worker } from 'node:worker_threads';
import { goMarshalJson, JsonSyntaxError, MAX_JSON_DEPTH, nestsDeeperThan, parseJson, stringifyJson } from '../machinery/json.js';
import { StatusError } from '../machinery/status.js';
import { NESTED_TOO_DEEPLY, parseYaml, YamlSyntaxError } from '../machinery/yaml.js';
import { encodeYaml, MAX_YAML_BYTES, YamlTooLargeError } from '../machinery/yaml-emit.js';
import type { YamlReply, YamlRequest } from './yaml-worker.js';
import type { Response } from './exchange.js';
import { RequestAbortedError } from './request-aborted.js';

/** Below this, parsing in place costs less than the trip to the thread (about a millisecond). */
const IN_PLACE_BYTES = 64 * 1024;
/** YAML answers up to this size are written in place (a few milliseconds); larger ones on the thread. */
const IN_PLACE_ANSWER_BYTES = 1024 * 1024;
/**
 * The thread's heap: 3 MiB of ordinary YAML (60,000 lines of a ConfigMap) parses in less than
 * 256 MiB, but the `yaml` package needs gigabytes for a flow list of a million items, which
 * go-yaml reads in far less. Such a body is refused (413) rather than let grow the process.
 */
const HEAP_MB = 256;
/**
 * The thread's stack: the `yaml` parser recurses, and a document may nest 10000 levels (go-yaml's
 * limit), which takes some 16 MiB. Bodies that nest too deep for the event loop's stack come here.
 */
const STACK_MB = 32;
/** An idle thread is ended after this long, giving its heap back. */
const IDLE_MS = 2000;
const WORKER = new URL('./yaml-worker.js', import.meta.url);

interface Job {
  id: number;
  /** A body's text, or an answer's value as JSON. */
  request: { text: string } | { encode: string };
  /** The response the job is for: a job whose response is gone (timed out, client left) is dropped undone. */
  res: Response;
  resolve(v: unknown): void;
  reject(e: Error): void;
}

let worker: Worker | undefined;
let nextId = 1;
/** The job on the thread, and those waiting for it: one at a time, so that waiting ones can still be dropped. */
let running: Job | undefined;
const queue: Job[] = [];

function thread(): Worker {
  if (worker) return worker;
  const w = new Worker(WORKER, { resourceLimits: { maxOldGenerationSizeMb: HEAP_MB, maxYoungGenerationSizeMb: 16, stackSizeMb: STACK_MB } });
  w.on('message', (reply: YamlReply) => {
    const job = running;
    if (!job || job.id !== reply.id) return;
    running = undefined;
    if ('json' in reply) settle(job, reply.json, reply.native);
    else if ('yaml' in reply) job.resolve(Buffer.from(reply.yaml.buffer, reply.yaml.byteOffset, reply.yaml.byteLength));
    else if ('syntaxError' in reply) job.reject(new YamlSyntaxError(reply.syntaxError, reply.line));
    else if ('jsonError' in reply) job.reject(new JsonSyntaxError(reply.jsonError, reply.offset));
    else job.reject(reply.name === 'YamlTooLargeError' ? new YamlTooLargeError(MAX_YAML_BYTES) : new Error(reply.failure));
    runNext();
  });
  const gone = (err: Error & { code?: string }) => {
    if (worker !== w) return;
    worker = undefined;
    const outOfMemory = err.code === 'ERR_WORKER_OUT_OF_MEMORY';
    const parsing = running !== undefined && 'text' in running.request;
    running?.reject(
      outOfMemory && parsing
        ? new StatusError(413, 'RequestEntityTooLarge', `Request entity too large: the YAML document needs more than ${HEAP_MB} MiB to parse; send it as JSON`)
        : outOfMemory
          ? new Error(`the YAML encoding of the object needs more than ${HEAP_MB} MiB`)
          : err,
    );
    running = undefined;
    runNext();
  };
  w.on('error', gone);
  w.on('exit', (code) => gone(new Error(`the YAML parser thread exited (${code})`)));
  w.unref();
  worker = w;
  return w;
}

/** A body's value from the thread's JSON (whose depth the thread checked). */
function settle(job: Job, json: string, native: boolean): void {
  let value: unknown;
  try {
    value = native ? JSON.parse(json) : parseJson(json, Infinity);
  } catch (err) {
    job.reject(err as Error);
    return;
  }
  job.resolve(value);
}

let idleTimer: NodeJS.Timeout | undefined;

function runNext(): void {
  clearTimeout(idleTimer);
  while (!running && queue.length > 0) {
    const job = queue.shift()!;
    if (job.res.destroyed || job.res.writableEnded) {
      job.reject(new RequestAbortedError());
      continue;
    }
    running = job;
    const w = thread();
    w.ref();
    w.postMessage({ id: job.id, ...job.request } satisfies YamlRequest);
  }
  if (!running && worker) {
    const w = worker;
    w.unref();
    idleTimer = setTimeout(() => {
      if (worker === w && !running) {
        worker = undefined;
        void w.terminate();
      }
    }, IDLE_MS);
    idleTimer.unref();
  }
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

/** The first document of a YAML (or JSON) text, as parseYaml reads it, for the request answered on `res`. */
export async function parseYamlBody(text: string, res: Response): Promise<unknown> {
  const json = asJson(text);
  if (json !== undefined) return json;
  if (text.length < IN_PLACE_BYTES) {
    let value: unknown;
    try {
      value = parseYaml(text);
    } catch (e) {
      // Nested deeper than this thread's stack lets the parser go: the parser thread's stack is larger.
      if (!(e instanceof YamlSyntaxError && e.message === NESTED_TOO_DEEPLY)) throw e;
      return onThread({ text }, res);
    }
    return decodableAsJson(value, text.length);
  }
  return onThread({ text }, res);
}

/**
 * The value, if it nests no deeper than encoding/json decodes (YAML may nest block and flow levels
 * 10000 deep each, and the apiserver decodes the JSON it turns into); else encoding/json's error.
 */
function decodableAsJson(value: unknown, textLength: number): unknown {
  // Each level takes a character of the text at least: only a long text can nest that deep.
  // The error names the first bracket too deep in the JSON go-yaml's value marshals to (keys sorted).
  if (textLength > MAX_JSON_DEPTH && nestsDeeperThan(value, MAX_JSON_DEPTH)) parseJson(goMarshalJson(value)); // throws JsonSyntaxError
  return value;
}

function onThread(request: Job['request'], res: Response): Promise<unknown> {
  return new Promise((resolve, reject) => {
    queue.push({ id: nextId++, request, res, resolve, reject });
    runNext();
  });
}

/**
 * The YAML document of a value answered on `res`: in place when it is small (a Buffer), else a
 * promise of it from the thread (rejected with RequestAbortedError if the response is gone by then).
 */
export function encodeYamlAnswer(value: unknown, res: Response): Buffer | Promise<Buffer> {
  try {
    return encodeYaml(value, IN_PLACE_ANSWER_BYTES);
  } catch (e) {
    if (!(e instanceof YamlTooLargeError)) throw e;
  }
  return onThread({ encode: stringifyJson(value) }, res) as Promise<Buffer>;
}
