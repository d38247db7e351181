/**
 * List continue tokens as apiserver's storage/continue.go writes and reads
 * them: unpadded base64url of `{"v":"meta.k8s.io/v1","rv":<rv>,"start":"<key>"}`,
 * where start is the next key relative to the resource prefix. Decoding
 * errors carry upstream's texts (the apiserver answers 400 with
 * `invalid continue token: <message>`).
 */
import { JsonSyntaxError, NumberLiteral, parseJsonLiterals, MAX_INT64, MIN_INT64 } from './json.js';

export class ContinueTokenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ContinueTokenError';
  }
}

const VERSION = 'meta.k8s.io/v1';
const INVALID = 'continue key is not valid';

export function encodeContinue(rv: number | bigint, start: string): string {
  const json = `{"v":"${VERSION}","rv":${rv.toString()},"start":${goJsonString(start)}}`;
  return Buffer.from(json, 'utf8').toString('base64url');
}

export function decodeContinue(token: string): { rv: number; start: string } {
  const data = decodeRawUrlBase64(token);
  let parsed: unknown;
  try {
    parsed = parseJsonLiterals(new TextDecoder().decode(data));
  } catch (e) {
    if (e instanceof JsonSyntaxError) throw new ContinueTokenError(`${INVALID}: ${e.message}`);
    throw e;
  }
  const { v, rv, start } = unmarshalToken(parsed);
  if (v !== VERSION) throw new ContinueTokenError(`${INVALID}: server does not recognize this encoded version ${v}`);
  if (rv === 0) throw new ContinueTokenError(`${INVALID}: incorrect encoded start resourceVersion (version ${VERSION})`);
  if (start.length === 0) throw new ContinueTokenError(`${INVALID}: encoded start key empty (version ${VERSION})`);
  // Defend against path traversal: the key must already be clean, so it cannot climb above the prefix.
  const key = start.startsWith('/') ? start : '/' + start;
  const cleaned = cleanRootedPath(key);
  if (cleaned !== key) throw new ContinueTokenError(`${INVALID}: ${start}`);
  return { rv, start: cleaned.slice(1) };
}

/** json.Unmarshal into continueToken{v string; rv int64; start string}, with Go's type errors. */
function unmarshalToken(parsed: unknown): { v: string; rv: number; start: string } {
  const token = { v: '', rv: 0, start: '' };
  if (parsed === null) return token;
  if (typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ContinueTokenError(`${INVALID}: json: cannot unmarshal ${jsonKind(parsed)} into Go value of type storage.continueToken`);
  }
  let typeError: string | undefined;
  const fail = (kind: string, fieldName: string, type: string) => {
    typeError ??= `${INVALID}: json: cannot unmarshal ${kind} into Go struct field continueToken.${fieldName} of type ${type}`;
  };
  for (const [rawKey, value] of Object.entries(parsed as Record<string, unknown>)) {
    // encoding/json matches field names exactly first, then case-insensitively.
    const name = (['v', 'rv', 'start'] as const).find((f) => f === rawKey) ?? (['v', 'rv', 'start'] as const).find((f) => f === rawKey.toLowerCase());
    if (!name || value === null) continue;
    if (name === 'rv') {
      if (value instanceof NumberLiteral) {
        const n = /^-?[0-9]+$/.test(value.literal) ? BigInt(value.literal) : undefined;
        if (n === undefined || n > MAX_INT64 || n < MIN_INT64) fail(`number ${value.literal}`, 'rv', 'int64');
        else token.rv = Number(n);
      } else fail(jsonKind(value), 'rv', 'int64');
    } else if (typeof value === 'string') token[name] = value;
    else fail(jsonKind(value), name, 'string');
  }
  if (typeError) throw new ContinueTokenError(typeError);
  return token;
}

function jsonKind(v: unknown): string {
  if (v instanceof NumberLiteral) return 'number';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'string') return 'string';
  return Array.isArray(v) ? 'array' : 'object';
}

/** Go's path.Clean for a path that starts with '/'. */
export function cleanRootedPath(p: string): string {
  const out: string[] = [];
  for (const seg of p.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') out.pop();
    else out.push(seg);
  }
  return '/' + out.join('/');
}

const URL_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const DECODE_MAP = new Int16Array(256).fill(-1);
for (let i = 0; i < URL_ALPHABET.length; i++) DECODE_MAP[URL_ALPHABET.charCodeAt(i)] = i;

/** base64.RawURLEncoding.DecodeString, with Go's `illegal base64 data at input byte N` errors. */
export function decodeRawUrlBase64(s: string): Uint8Array {
  const src = new TextEncoder().encode(s);
  const out: number[] = [];
  let si = 0;
  while (si < src.length) {
    const quantum: number[] = [];
    while (quantum.length < 4) {
      if (si === src.length) {
        if (quantum.length === 1) throw corrupt(si - 1);
        break;
      }
      const b = src[si++];
      const d = DECODE_MAP[b];
      if (d >= 0) quantum.push(d);
      else if (b !== 10 && b !== 13) throw corrupt(si - 1); // Go skips newlines
    }
    const [a, b = 0, c = 0, d = 0] = quantum;
    const val = (a << 18) | (b << 12) | (c << 6) | d;
    if (quantum.length >= 2) out.push((val >> 16) & 0xff);
    if (quantum.length >= 3) out.push((val >> 8) & 0xff);
    if (quantum.length === 4) out.push(val & 0xff);
  }
  return Uint8Array.from(out);
}

function corrupt(at: number): ContinueTokenError {
  return new ContinueTokenError(`${INVALID}: illegal base64 data at input byte ${at}`);
}

/** A JSON string as Go's encoding/json writes it (HTML-safe escapes included). */
function goJsonString(s: string): string {
  return JSON.stringify(s).replace(/[<>&\u2028\u2029]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
}
