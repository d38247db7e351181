/** Writing responses outside the resource path (statuses, discovery, errors), with the headers every response carries. */
import { nextTurn } from '../util/turns.js';
import { errors, StatusError, type Status } from '../machinery/status.js';
import type { Response } from './exchange.js';
import { json, yaml, type Serializer } from './serializers.js';
import { warningHeaderValues } from './warnings.js';
import { encodeYamlAnswer } from './yaml-bodies.js';
import { RequestAbortedError } from './request-aborted.js';

/** A value as JSON (pretty: indented) or YAML. */
export function writeObject(res: Response, code: number, obj: unknown, format: 'json' | 'yaml' = 'json', pretty = false): void | Promise<void> {
  return writeSerialized(res, code, obj, format === 'yaml' ? yaml : json, pretty);
}

/**
 * A value in a serializer; a large YAML document is written on the YAML thread, and sent when it is done:
 * then the promise, which the handler awaits (the request stays in flight and under its timeout meanwhile).
 */
export function writeSerialized(res: Response, code: number, obj: unknown, serializer: Serializer, pretty = false): void | Promise<void> {
  const body = serializer.name === 'yaml' ? encodeYamlAnswer(obj, res) : serializer.encode(obj, pretty);
  if (!(body instanceof Promise)) return writeBody(res, code, serializer, body);
  return body
    .then(
      (bytes) => writeBody(res, code, serializer, bytes),
      (err: unknown) => {
        if (!(err instanceof RequestAbortedError) && !res.headersSent) writeError(res, err);
      },
    )
    .catch(() => {
      if (!res.writableEnded) res.end();
    });
}

/** Break an answer off mid-body: HTTP/2 resets its stream, HTTP/1.1 closes the connection, loopback ends it short. */
export function breakOff(res: Response): void {
  if (res.breakOff) return res.breakOff();
  const http1 = res as unknown as { destroy?: () => void };
  if (typeof http1.destroy === 'function') http1.destroy();
  else res.end();
}

/** Stands for a list's items in its head's encoding (a plain word: JSON and YAML print it as it is). */
const ITEMS_MARK = 'kapiListItemsGoHere';
/** A turn's share of a list's encoding: batches are sized to take about this long. */
const LIST_STEP_MS = 4;
const MAX_LIST_BATCH = 1000;

/**
 * A long list as JSON (pretty or not) or YAML, encoded a batch of items per turn of the event loop and written at
 * its client's pace, without a Content-Length (as upstream streams lists): a Table, YAML or pretty list of a
 * million objects never holds the loop, nor is it held in memory whole. `listOf(from, to)` gives the list value
 * with items [from, to) only (the head is the same for any range); its items are under `key`. Each batch is
 * encoded as the one-item-array `{key: [...]}` and cut out of it: the same text as in the whole list, whose
 * array is at the same depth. A batch that fails after the headers went out breaks the answer off.
 */
export async function writeListInSteps(res: Response, code: number, count: number, key: 'items' | 'rows', listOf: (from: number, to: number) => Record<string, unknown>, serializer: Serializer, pretty: boolean): Promise<void> {
  const asYaml = serializer.name === 'yaml';
  const encode = (value: unknown): Buffer | Promise<Buffer> => {
    if (!asYaml) return Buffer.from(serializer.encode(value, pretty));
    return encodeYamlAnswer(value, res);
  };
  // How the mark prints: JSON `"mark"` (compact `[` `]` around it; indented on its own line when pretty), YAML `- mark`.
  const mark = Buffer.from(asYaml ? `- ${ITEMS_MARK}\n` : JSON.stringify(ITEMS_MARK));
  const around = async (value: unknown): Promise<[Buffer, Buffer]> => {
    const text = await encode(value);
    const at = text.indexOf(mark);
    return [text.subarray(0, at), text.subarray(at + mark.length)];
  };
  const [head, tail] = await around({ ...listOf(0, 0), [key]: [ITEMS_MARK] });
  const [open, close] = await around({ [key]: [ITEMS_MARK] });
  // Between two batches: what is between two items of one (JSON: a comma, and when pretty the item's indentation).
  const separator = asYaml ? Buffer.alloc(0) : Buffer.concat([Buffer.from(','), open.subarray(open.lastIndexOf('[') + 1)]);
  const batch = async (from: number, to: number): Promise<Buffer> => {
    const text = await encode({ [key]: listOf(from, to)[key] });
    return text.subarray(open.length, text.length - close.length);
  };
  let size = 16;
  let done = 0;
  const next = async (): Promise<Buffer> => {
    const started = performance.now();
    const to = Math.min(count, done + size);
    const text = await batch(done, to);
    const took = performance.now() - started;
    done = to;
    size = Math.max(1, Math.min(MAX_LIST_BATCH, size * 2, Math.floor((size * LIST_STEP_MS) / Math.max(took, 0.05))));
    return text;
  };
  // The first batch before the headers: a list that cannot be encoded is still answered with an error.
  const first = await next();
  if (res.destroyed || res.headersSent) return;
  res.writeHead(code, { 'Content-Type': serializer.mediaType });
  const out = pacedWriter(res);
  try {
    await out.write(Buffer.concat([head, first]));
    while (done < count) {
      if (res.destroyed) return;
      const text = await next();
      await out.write(Buffer.concat([separator, text]));
    }
    res.end(tail);
  } catch (err) {
    if (!(err instanceof RequestAbortedError)) breakOff(res);
  }
}

function writeBody(res: Response, code: number, serializer: Serializer, body: string | Buffer): void | Promise<void> {
  // Answered meanwhile (the request timed out) or gone: nothing more to write.
  if (res.destroyed || res.headersSent) return;
  res.writeHead(code, { 'Content-Type': serializer.mediaType, 'Content-Length': Buffer.byteLength(body) });
  return endInSlices(res, body);
}

export function statusOf(err: unknown): StatusError {
  if (err instanceof StatusError) return err;
  return errors.internal(err instanceof Error ? err.message : String(err));
}

/** A Status in the negotiated serializer (an error is never converted to a Table or PartialObjectMetadata). */
export function writeStatus(res: Response, status: Status, serializer: Serializer = json): void {
  if (status.details?.retryAfterSeconds && !res.headersSent) res.setHeader('Retry-After', String(status.details.retryAfterSeconds));
  writeSerialized(res, status.code ?? 200, status, serializer);
}

export function writeError(res: Response, err: unknown, serializer: Serializer = json): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  writeStatus(res, statusOf(err).toStatus(), serializer);
}

/** The plain-text 404 of Go's http.NotFoundHandler, for paths nothing serves. */
export function writeNotFound(res: Response): void {
  writePlain(res, 404, '404 page not found');
}

/** A plain-text answer as Go's http.Error writes it. */
export function writePlain(res: Response, code: number, text: string, headers: Record<string, string> = {}): void {
  const body = `${text}\n`;
  res.writeHead(code, { ...headers, 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

/** Warning headers, `299 - "<text>"`, one per warning, deduplicated and capped as upstream's recorder does. */
export function addWarnings(res: Response, warnings: readonly string[]): void {
  if (warnings.length === 0 || res.headersSent) return;
  const values = warningHeaderValues(warnings);
  if (values.length > 0) res.setHeader('Warning', values);
}

/** A body larger than this is written a slice at a time (TLS encrypts each write whole, in one step of the loop). */
const BODY_SLICE = 1 << 20;

/**
 * Writes a body and ends the response; a large one (an OpenAPI document of 10,000 CRDs is 200 MiB) a slice at
 * a time, the next once the last has gone out, so that other requests are served between two slices.
 */
export function endInSlices(res: Response, body: string | Buffer): void | Promise<void> {
  if (body.length <= BODY_SLICE) {
    res.end(body);
    return;
  }
  return writeSlices(res, body);
}

async function writeSlices(res: Response, body: string | Buffer): Promise<void> {
  const out = pacedWriter(res);
  for (let at = 0; !res.destroyed; ) {
    let to = Math.min(body.length, at + BODY_SLICE);
    // A text is never cut between the two halves of one character: each slice is encoded to UTF-8 on its own.
    if (typeof body === 'string' && to < body.length && isHighSurrogate(body.charCodeAt(to - 1))) to--;
    const slice = typeof body === 'string' ? body.slice(at, to) : body.subarray(at, to);
    at = to;
    if (at >= body.length) {
      res.end(slice);
      return;
    }
    await out.write(slice);
  }
}

/**
 * Writes of one long answer that go at the client's pace: each resolves once what was written has gone out (its
 * `drain`, or the client gone), or at the next turn of the loop when it went at once. An answer written faster than
 * its client reads is then not held in memory whole.
 */
export function pacedWriter(res: Response): { write(chunk: string | Buffer): Promise<void> } {
  let wake: (() => void) | undefined;
  res.once('close', () => wake?.());
  return {
    write(chunk) {
      if (res.write(chunk)) return nextTurn();
      if (res.destroyed) return Promise.resolve();
      return new Promise<void>((resolve) => res.once('drain', (wake = resolve)));
    },
  };
}

const isHighSurrogate = (unit: number) => unit >= 0xd800 && unit <= 0xdbff;
