/** Writing responses: objects and statuses as JSON or YAML, with the headers every response carries. */
import { stringifyJson } from '../machinery/json.js';
import { errors, StatusError, type Status } from '../machinery/status.js';
import { stringifyYaml } from '../machinery/yaml.js';
import type { KObject } from '../registry/types.js';
import { memoJson } from '../registry/json-memo.js';
import type { Negotiated, OutputFormat } from './negotiation.js';
import type { Response } from './exchange.js';
import { warningHeaderValues } from './warnings.js';

export function encode(obj: unknown, format: OutputFormat | 'yaml' | 'json', pretty = false): { body: string; contentType: string } {
  if (format === 'yaml') return { body: stringifyYaml(obj), contentType: 'application/yaml' };
  return { body: stringifyJson(obj, pretty ? 2 : undefined) + (pretty ? '\n' : ''), contentType: 'application/json' };
}

export function writeObject(res: Response, code: number, obj: unknown, format: OutputFormat = 'json', pretty = false): void {
  const { body, contentType } = encode(obj, format, pretty);
  res.writeHead(code, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

/** Write a shared (cached) object in the negotiated format, reusing its remembered JSON. */
export function writeShared(res: Response, code: number, obj: KObject, endpoint: { version: string; toVersion(o: KObject): KObject }, output: Negotiated): void {
  if (output.format === 'json' && !output.pretty) return writeJson(res, code, memoJson(obj, endpoint.version, endpoint.toVersion));
  writeObject(res, code, endpoint.toVersion(obj), output.format, output.pretty);
}

/** Write JSON that is already serialized. */
export function writeJson(res: Response, code: number, json: string | Buffer): void {
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(json) });
  res.end(json);
}

export function statusOf(err: unknown): StatusError {
  if (err instanceof StatusError) return err;
  return errors.internal(err instanceof Error ? err.message : String(err));
}

export function writeStatus(res: Response, status: Status, format: OutputFormat = 'json'): void {
  if (status.details?.retryAfterSeconds && !res.headersSent) res.setHeader('Retry-After', String(status.details.retryAfterSeconds));
  writeObject(res, status.code ?? 200, status, format === 'table' ? 'json' : format);
}

export function writeError(res: Response, err: unknown, format: OutputFormat = 'json'): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  writeStatus(res, statusOf(err).toStatus(), format);
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
