/** Reading request bodies with kube-apiserver's 3 MiB limit, and decoding them. */
import { goJsonType, JsonSyntaxError, parseJson, parsingJson } from '../machinery/json.js';
import { isLarge, nextTurn, runStepsInTurns } from '../util/turns.js';
import { decodeObject, ProtobufMessageError } from '../machinery/protobuf/objects.js';
import { ProtobufError } from '../machinery/protobuf/wire.js';
import { errors, type StatusError } from '../machinery/status.js';
import { YamlSyntaxError } from '../machinery/yaml.js';
import { parseYamlBody } from './yaml-bodies.js';
import type { Request, Response } from './exchange.js';
import { RequestAbortedError } from './request-aborted.js';
import { LARGE_BODY_BYTES, largeBodyTurn } from './large-bodies.js';
import { rememberRequestBody } from './audit.js';

export const MAX_BODY_BYTES = 3 * 1024 * 1024;

/** The body; a large one is handed over in its turn (see large-bodies.ts), which ends with `res`. */
export async function readBody(req: Request, res: Response, limit = MAX_BODY_BYTES): Promise<Buffer> {
  const body = await readAll(req, limit);
  rememberRequestBody(req, body);
  if (body.length >= LARGE_BODY_BYTES) await largeBodyTurn(res);
  return body;
}

function readAll(req: Request, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    return Promise.reject(errors.tooLarge(limit));
  }
  if (req.readableEnded) return Promise.resolve(Buffer.alloc(0));
  // Plain listeners rather than an async iterator: cheaper on every write request.
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        req.resume();
        reject(errors.tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    let settled = false;
    req.on('data', onData);
    req.once('end', () => {
      settled = true;
      resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
    });
    // An error, an abort, or a close before the end (a timed-out upload ended by the server): nothing more
    // will come. Every stream closes once served: the error is made only when it is one.
    const gone = () => {
      if (settled) return;
      settled = true;
      reject(new RequestAbortedError());
    };
    req.once('error', gone);
    req.once('aborted', gone);
    req.once('close', gone);
  });
}

/**
 * Decode a JSON or YAML object body into a value, with apiserver's 400s for what its decoder
 * refuses before it knows the kind: syntax errors, and a value that is not an object or has an
 * apiVersion or kind that is not a string. `kind` is the type the body must decode into.
 */
export async function decodeBody(body: Buffer, format: 'json' | 'yaml', res: Response, kind: string): Promise<unknown> {
  const text = body.toString('utf8');
  let value: unknown;
  try {
    value = format === 'yaml' ? await parseYamlBody(text, res) : isLarge(body.length) ? await runStepsInTurns(parsingJson(text)) : parseJson(text);
  } catch (err) {
    // The YAML serializer's YAMLToJSON fails with go-yaml's error; the JSON one in its meta-factory's Interpret.
    if (err instanceof YamlSyntaxError) throw unrecognizedObject(kind, err.message, body);
    if (err instanceof JsonSyntaxError) throw unrecognizedObject(kind, `${INTERPRET_ERROR}${err.message}`, body);
    throw err;
  }
  const typeError = interpretError(value);
  if (typeError) throw unrecognizedObject(kind, typeError, body);
  // A large body's parse took its turn: what the request does with the value takes the next.
  if (isLarge(body.length)) await nextTurn();
  return value;
}

/**
 * A protobuf body (the k8s envelope) as the JSON object it stands for; its apiVersion and kind default
 * to `defaults`. Undecodable bytes get the decoder's 400 (transformDecodeError, no kind known).
 */
export function decodeProtobufBody(body: Buffer, defaults: { apiVersion: string; kind: string }): Record<string, unknown> {
  try {
    return decodeObject(body, defaults);
  } catch (err) {
    if (err instanceof ProtobufMessageError) {
      // transformDecodeError with the envelope's kind.
      const version = err.apiVersion.slice(err.apiVersion.lastIndexOf('/') + 1);
      throw errors.badRequest(`${err.kind} in version "${version}" cannot be handled as a ${defaults.kind}: ${err.message}`);
    }
    if (err instanceof ProtobufError) throw unrecognizedObject(defaults.kind, err.message, body);
    throw err;
  }
}

const INTERPRET_ERROR = "couldn't get version/kind; json parse error: ";

/** The error of the JSON decoder's first step (reading apiVersion and kind) on a value, if any. */
export function interpretError(value: unknown): string | undefined {
  const typeError = typeMetaTypeError(value);
  return typeError && `${INTERPRET_ERROR}${typeError}`;
}
// The anonymous struct json.Unmarshal reads apiVersion and kind into (SimpleMetaFactory.Interpret), as Go prints its type.
const TYPE_META_STRUCT = 'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }';

/** encoding/json's UnmarshalTypeError for a body, or its apiVersion or kind, of the wrong JSON type. */
function typeMetaTypeError(value: unknown): string | undefined {
  if (value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) return `json: cannot unmarshal ${goJsonType(value)} into Go value of type ${TYPE_META_STRUCT}`;
  const { apiVersion, kind } = value as { apiVersion?: unknown; kind?: unknown };
  if ((apiVersion == null || typeof apiVersion === 'string') && (kind == null || typeof kind === 'string')) return undefined;
  // The first of them in the document is the one reported.
  for (const [k, v] of Object.entries(value)) {
    if ((k === 'apiVersion' || k === 'kind') && v !== null && typeof v !== 'string') {
      return `json: cannot unmarshal ${goJsonType(v)} into Go struct field .${k} of type string`;
    }
  }
  return undefined;
}


/** apiserver's transformDecodeError when the decoder named no kind: the error and the body's first 30 bytes. */
export function unrecognizedObject(kind: string, why: string, body: Buffer): StatusError {
  return errors.badRequest(`the object provided is unrecognized (must be of type ${kind}): ${why} (${summarizeData(body)})`);
}

/** handlers' summarizeData: an object's first bytes as text, anything else in hex. */
function summarizeData(data: Buffer, max = 30): string {
  if (data.length === 0) return '<empty>';
  const head = data.subarray(0, max);
  const text = data[0] === 0x7b ? head.toString('utf8') : head.toString('hex');
  return data.length > max ? `${text} ...` : text;
}
