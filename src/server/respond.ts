/** Writing responses outside the resource path (statuses, discovery, errors), with the headers every response carries. */
import { randomBytes } from 'node:crypto';
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

/** A turn's share of a list's encoding: items are encoded until about this long has passed, or this much is made. */
const LIST_STEP_MS = 4;
const LIST_STEP_BYTES = 1 << 20;

/**
 * A long list as JSON (pretty or not) or YAML, encoded item by item a turn's share at a time (about 4 ms or 1 MiB)
 * and written at its client's pace, without a Content-Length (as upstream streams lists): a Table, YAML or pretty
 * list of a million objects never holds the loop, nor is it held in memory whole. `listOf(from, to)` gives the list
 * value with items [from, to) only (the head is the same for any range); its items are under `key`. Each item is
 * encoded as the one-item array `{key: [item]}` and cut out of it: the same text as in the whole list, whose array
 * is at the same depth. The head is encoded with a word of its own in the array, random so that no text of the
 * head (a column's name, a kind) can be taken for it. A list that fails after the headers went out is broken off.
 */
export async function writeListInSteps(res: Response, code: number, count: number, key: 'items' | 'rows', listOf: (from: number, to: number) => Record<string, unknown>, serializer: Serializer, pretty: boolean): Promise<void> {
  const asYaml = serializer.name === 'yaml';
  const encode = (value: unknown): Buffer | Promise<Buffer> => (asYaml ? encodeYamlAnswer(value, res) : Buffer.from(serializer.encode(value, pretty)));
  const word = `kapi${randomBytes(16).toString('hex')}`;
  // How the word prints: JSON `"word"` (compact `[` `]` around it; indented on its own line when pretty), YAML `- word`.
  const mark = Buffer.from(asYaml ? `- ${word}\n` : JSON.stringify(word));
  const around = async (value: unknown): Promise<[Buffer, Buffer]> => {
    const text = await encode(value);
    const at = text.indexOf(mark);
    return [text.subarray(0, at), text.subarray(at + mark.length)];
  };
  const [head, tail] = await around({ ...listOf(0, 0), [key]: [word] });
  const [open, close] = await around({ [key]: [word] });
  // Between two items: JSON a comma (and, when pretty, the item's indentation); YAML nothing (each is a `- ` line).
  const separator = asYaml ? Buffer.alloc(0) : Buffer.concat([Buffer.from(','), open.subarray(open.lastIndexOf('[') + 1)]);
  let done = 0;
  const next = async (): Promise<Buffer> => {
    const parts: Buffer[] = [];
    let bytes = 0;
    const started = performance.now();
    do {
      const text = await encode({ [key]: listOf(done, done + 1)[key] });
      if (done > 0) parts.push(separator);
      parts.push(text.subarray(open.length, text.length - close.length));
      bytes += text.length;
      done++;
    } while (done < count && bytes < LIST_STEP_BYTES && performance.now() - started < LIST_STEP_MS);
    return Buffer.concat(parts);
  };
  // The first share before the headers: a list that cannot be encoded is still answered with an error.
  const first = await next();
  if (res.destroyed || res.headersSent) return;
  res.writeHead(code, { 'Content-Type': serializer.mediaType });
  const out = pacedWriter(res);
  try {
    await out.write(Buffer.concat([head, first]));
    while (done < count) {
      if (res.destroyed) return;
      await out.write(await next());
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
