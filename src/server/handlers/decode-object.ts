/**
 * Turning a request body into an object for create and update, with
 * apiserver's checks on apiVersion, kind and the types of metadata fields.
 */
import { field } from '../../machinery/field-errors.js';
import { checkMetadataTypes, OBJECT_META_FIELDS } from '../../machinery/object-meta.js';
import { errors } from '../../machinery/status.js';
import { goMarshalJson, MAX_JSON_DEPTH, nestsDeeperThan, parseJson } from '../../machinery/json.js';
import type { KObject } from '../../api/object.js';
import type { ServedResource } from '../../registry/registry.js';
import type { DecodeOptions } from '../../registry/types.js';
import { decodeBody, decodeProtobufBody, interpretError, readBody } from '../body.js';
import { objectBodyFormat } from '../negotiation.js';
import { groupVersion, servesProtobuf, type HandlerContext } from './context.js';

const OBJECT_META = new Set<string>(OBJECT_META_FIELDS);
const FIELD_VALIDATION = ['Ignore', 'Strict', 'Warn'];

/** What decoding an object of this request takes: its version, ?fieldValidation (checked), the raw body, the warnings sink. */
export function decodeOptions(ctx: HandlerContext, optionsKind = 'CreateOptions'): DecodeOptions {
  const fv = ctx.query.get('fieldValidation') ?? '';
  if (fv && !FIELD_VALIDATION.includes(fv)) {
    throw errors.invalid({ group: 'meta.k8s.io', resource: optionsKind }, '', [field.notSupported('fieldValidation', fv, ['', ...FIELD_VALIDATION])]);
  }
  return { version: ctx.endpoint.version, fieldValidation: (fv || undefined) as DecodeOptions['fieldValidation'], rawBody: ctx.rawBody, warnings: ctx.warnings };
}

export async function readObjectBody(ctx: HandlerContext<ServedResource>): Promise<KObject> {
  const { endpoint } = ctx;
  const bodyFormat = objectBodyFormat(ctx.req.headers['content-type'], servesProtobuf(endpoint));
  const raw = await readBody(ctx.req, ctx.res);
  ctx.bodyBytes = raw.length;
  if (bodyFormat === 'protobuf') {
    return checkTypeMeta(ctx, decodeProtobufBody(raw, { apiVersion: groupVersion(endpoint.group, endpoint.version), kind: endpoint.names.kind }), () => '');
  }
  const format = bodyFormat === 'yaml' ? 'yaml' : 'json';
  const obj = await decodeBody(raw, format, ctx.res, endpoint.names.kind);
  const text = raw.toString('utf8');
  if (format === 'json') ctx.rawBody = text;
  // A missing kind names the data decoded: the body, or for YAML the JSON it was turned into.
  return checkTypeMeta(ctx, obj, () => (format === 'json' ? text : goMarshalJson(obj)));
}

/**
 * The checks of apiserver's decoding of a request body: apiVersion and kind those of the endpoint
 * (defaulted from it when missing, but for a custom resource's kind), metadata well typed.
 * `data` is the decoded JSON text a missing kind is reported with.
 */
export function checkTypeMeta(ctx: HandlerContext<ServedResource>, obj: unknown, data: () => string): KObject {
  const { endpoint } = ctx;
  const kind = endpoint.names.kind;
  const o = (obj ?? {}) as KObject;
  if (o.kind === undefined || o.kind === null || o.kind === '') endpoint.scope.missingKind(o, data);
  const expected = groupVersion(endpoint.group, endpoint.version);
  if (o.apiVersion === undefined || o.apiVersion === null || o.apiVersion === '') o.apiVersion = expected;
  endpoint.scope.checkKind(o);
  if (o.apiVersion !== expected) {
    throw errors.badRequest(`the API version in the data (${o.apiVersion}) does not match the expected API version (${expected})`);
  }
  if (o.kind !== kind) throw errors.invalid({ group: endpoint.group, resource: o.kind }, o.metadata?.name ?? '', [field.invalid('kind', o.kind, `must be ${kind}`)]);
  return checkMetadata(ctx, o);
}

/**
 * A patched object's type: a custom resource's apiVersion and kind must stay the endpoint's
 * (the strategy's ValidateTypeMeta, 422); a built-in's must name a kind its scheme knows, which
 * for kapi is the endpoint's (jsonPatcher's decoding error, 422 on the field `patch`).
 */
export function checkPatchedTypeMeta(ctx: HandlerContext<ServedResource>, obj: KObject, checkDepth = false): KObject {
  const { endpoint } = ctx;
  if (obj !== null && typeof obj === 'object' && !Array.isArray(obj)) endpoint.scope.fillTypeMeta(obj);
  // The patched JSON as the patch libraries write it (Go maps: keys sorted); made only for an error.
  const patchError = (why: (patched: string) => string) => {
    const patched = goMarshalJson(obj);
    return errors.invalid({ group: '', resource: '' }, '', [field.invalid('patch', patched, why(patched))]);
  };
  // The decoder reads the whole text first: nesting past encoding/json's limit fails before anything else.
  if (checkDepth && nestsTooDeep(obj)) throw patchError((patched) => `couldn't get version/kind; json parse error: ${syntaxError(patched)}`);
  const notAnObject = interpretError(obj);
  if (notAnObject) throw patchError(() => notAnObject);
  if (obj === null) throw patchError(() => `Object 'Kind' is missing in 'null'`);
  if (obj.kind === undefined || obj.kind === null || obj.kind === '') throw patchError((patched) => `Object 'Kind' is missing in '${patched}'`);
  endpoint.scope.checkPatchedKind(obj, patchError);
  return checkMetadata(ctx, obj);
}

/**
 * Whether a patched object nests deeper than a request may (only a JSON patch's copy or move can
 * make it so). Its managedFields do not count: they nest a few levels below the fields they own,
 * and an object as deep as a request may be must stay patchable.
 */
function nestsTooDeep(obj: KObject): boolean {
  const meta = obj !== null && typeof obj === 'object' ? obj.metadata : undefined;
  const content = meta !== null && typeof meta === 'object' && meta.managedFields !== undefined ? { ...obj, metadata: { ...meta, managedFields: undefined } } : obj;
  return nestsDeeperThan(content, MAX_JSON_DEPTH);
}

/** encoding/json's error for a text (one nesting too deep: `invalid character '{' exceeded max depth`). */
function syntaxError(text: string): string {
  try {
    parseJson(text);
  } catch (e) {
    return (e as Error).message;
  }
  return 'exceeded max depth';
}

/** Metadata well typed (else the decoder's 400), with unknown and null fields dropped. */
function checkMetadata(ctx: HandlerContext<ServedResource>, o: KObject): KObject {
  if (o.metadata === undefined || o.metadata === null) o.metadata = {};
  const typeError = checkMetadataTypes(o.metadata);
  if (typeError) {
    const kind = ctx.endpoint.names.kind;
    throw errors.badRequest(`${kind} in version "${ctx.endpoint.version}" cannot be handled as a ${kind}: ${typeError}`);
  }
  for (const k of Object.keys(o.metadata)) if (!OBJECT_META.has(k)) delete o.metadata[k];
  if (o.metadata.generation === null) delete o.metadata.generation;
  for (const k of Object.keys(o.metadata)) if (o.metadata[k] === null) delete o.metadata[k];
  return typedOrder(ctx, o);
}

/**
 * An object as the endpoint's codec writes it: a typed one has kind and apiVersion first (output.ts
 * relies on it to list items without them); an unstructured one is as it came.
 */
export function typedOrder(ctx: HandlerContext<ServedResource>, o: KObject): KObject {
  return ctx.endpoint.scope.order(o);
}
