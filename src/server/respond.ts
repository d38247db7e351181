/** Writing responses outside the resource path (statuses, discovery, errors), with the headers every response carries. */
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
  if (!(body instanceof Promise)) {
    writeBody(res, code, serializer, body);
    return;
  }
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

function writeBody(res: Response, code: number, serializer: Serializer, body: string | Buffer): void {
  // Answered meanwhile (the request timed out) or gone: nothing more to write.
  if (res.destroyed || res.headersSent) return;
  res.writeHead(code, { 'Content-Type': serializer.mediaType, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
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
