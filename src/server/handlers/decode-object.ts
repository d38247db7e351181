/**
 * Turning a request body into an object for create and update, with
 * apiserver's checks on apiVersion, kind and the types of metadata fields.
 */
import { field } from '../../machinery/field-errors.js';
import { checkMetadataTypes, OBJECT_META_FIELDS } from '../../machinery/object-meta.js';
import { errors } from '../../machinery/status.js';
import type { KObject } from '../../registry/types.js';
import type { ServedResource } from '../../registry/registry.js';
import { decodeBody, readBody } from '../body.js';
import { objectBodyFormat } from '../negotiation.js';
import { groupVersion, type HandlerContext } from './context.js';

const OBJECT_META = new Set<string>(OBJECT_META_FIELDS);

export async function readObjectBody(ctx: HandlerContext<ServedResource>): Promise<KObject> {
  const format = objectBodyFormat(ctx.req.headers['content-type']);
  const raw = await readBody(ctx.req, ctx.res);
  const obj = await decodeBody(raw, format === 'yaml' ? 'yaml' : 'json', ctx.res);
  const text = raw.toString('utf8');
  if (format !== 'yaml') ctx.rawBody = text;
  return checkTypeMeta(ctx, obj, text);
}

/**
 * The checks of apiserver's decoding: apiVersion and kind those of the endpoint (defaulted from it when
 * missing, but for a custom resource's kind), metadata well typed.
 */
export function checkTypeMeta(ctx: HandlerContext<ServedResource>, obj: unknown, rawText: string): KObject {
  const { endpoint } = ctx;
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) throw errors.badRequest(`Object 'Kind' is missing in '${rawText.trim()}'`);
  const o = obj as KObject;
  if (o.kind === undefined || o.kind === null || o.kind === '') {
    // Typed decoding fills a missing kind from the endpoint (gvkWithDefaults); unstructured decoding of a custom resource needs it.
    if (endpoint.custom) throw errors.badRequest(`Object 'Kind' is missing in '${rawText.trim()}'`);
    o.kind = endpoint.names.kind;
  }
  if (typeof o.kind !== 'string') throw errors.badRequest(`Object 'Kind' is missing in '${rawText.trim()}'`);
  const expected = groupVersion(endpoint.group, endpoint.version);
  if (o.apiVersion === undefined || o.apiVersion === null || o.apiVersion === '') o.apiVersion = expected;
  if (o.apiVersion !== expected) {
    throw errors.badRequest(`the API version in the data (${o.apiVersion}) does not match the expected API version (${expected})`);
  }
  if (o.kind !== endpoint.names.kind) {
    throw errors.invalid({ group: endpoint.group, resource: o.kind }, o.metadata?.name ?? '', [
      field.invalid('kind', o.kind, `must be ${endpoint.names.kind}`),
    ]);
  }
  if (o.metadata === undefined || o.metadata === null) o.metadata = {};
  const typeError = checkMetadataTypes(o.metadata);
  if (typeError) {
    const kind = endpoint.names.kind;
    throw errors.badRequest(`${kind} in version "${endpoint.version}" cannot be handled as a ${kind}: ${typeError}`);
  }
  for (const k of Object.keys(o.metadata)) if (!OBJECT_META.has(k)) delete o.metadata[k];
  if (o.metadata.generation === null) delete o.metadata.generation;
  for (const k of Object.keys(o.metadata)) if (o.metadata[k] === null) delete o.metadata[k];
  return o;
}
