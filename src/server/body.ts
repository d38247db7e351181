/** Reading request bodies with kube-apiserver's 3 MiB limit, and decoding them. */
import { JsonSyntaxError, parseJson } from '../machinery/json.js';
import { errors } from '../machinery/status.js';
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

/** Decode a JSON or YAML body into a value; syntax errors become 400s. */
export async function decodeBody(body: Buffer, format: 'json' | 'yaml', res: Response): Promise<unknown> {
  const text = body.toString('utf8');
  try {
    return format === 'yaml' ? await parseYamlBody(text, res) : parseJson(text);
  } catch (err) {
    if (err instanceof JsonSyntaxError || err instanceof YamlSyntaxError) {
      throw errors.badRequest(`couldn't get version/kind; json parse error: ${(err as Error).message}`);
    }
    throw err;
  }
}
