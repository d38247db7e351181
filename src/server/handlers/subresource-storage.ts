/**
 * Subresources served by their group's code (SubresourceInfo.storage), as upstream's handlers serve a
 * subresource's REST storage: a connect verb answers the storage's text; a POST decodes the body as the
 * subresource's kind (JSON, YAML or protobuf), admits it as a CREATE of that kind and answers the
 * storage's object with 201.
 */
import { errors } from '../../machinery/status.js';
import type { SubresourceInfo, SubresourceRequest } from '../../registry/registry.js';
import type { KObject } from '../../api/object.js';
import { isRecord } from '../../util/json-object.js';
import { decodeBody, decodeProtobufBody, readBody } from '../body.js';
import { objectBodyFormat } from '../negotiation.js';
import { writeEncoded } from '../output.js';
import { groupVersion, type HandlerContext } from './context.js';
import { admissionOf, dryRunOf } from './write.js';

/** A body of another kind than the endpoint's (Binding, Eviction, TokenRequest), in JSON, YAML or protobuf. */
export async function readTypedBody(ctx: HandlerContext, apiVersion: string, kind: string): Promise<KObject> {
  const raw = await readBody(ctx.req, ctx.res);
  const format = objectBodyFormat(ctx.req.headers['content-type'], true);
  const obj: unknown = format === 'protobuf' ? decodeProtobufBody(raw, { apiVersion, kind }) : await decodeBody(raw, format === 'yaml' ? 'yaml' : 'json', ctx.res, kind);
  if (!isRecord(obj)) throw errors.badRequest(`the body must be a ${kind} object`);
  if (!isRecord(obj.metadata)) obj.metadata = {};
  return obj as KObject;
}

export async function serveSubresourceStorage(ctx: HandlerContext, sub: SubresourceInfo): Promise<void> {
  const storage = sub.storage!;
  const { endpoint, info } = ctx;
  const request: SubresourceRequest = {
    namespace: info.namespace,
    name: info.name!,
    query: ctx.query,
    store: endpoint.store,
    lookup: (group, version, resource) => ctx.lookup?.(group, version, resource),
  };
  if (storage.connect) {
    const text = await storage.connect(request);
    ctx.res.writeHead(200, { 'Content-Type': 'text/plain' });
    ctx.res.end(text);
    return;
  }
  if (!storage.create) throw errors.methodNotSupported({ group: endpoint.group, resource: `${endpoint.names.resource}/${sub.name}` }, info.verb);
  const kind = { group: sub.group ?? endpoint.group, version: sub.version ?? endpoint.version, kind: sub.kind };
  const body = await readTypedBody(ctx, groupVersion(kind.group, kind.version), kind.kind);
  const answer = await storage.create({
    ...request,
    body,
    dryRun: dryRunOf(ctx, 'CreateOptions'),
    async admit(obj, dryRun) {
      const admission = admissionOf(ctx, dryRun);
      if (!admission) return;
      const attributes = { ...admission.request, kind, name: info.name ?? '', operation: 'CREATE' as const, object: obj };
      if (admission.chain.mutating.length) await admission.chain.admit(attributes);
      if (admission.chain.validating.length) await admission.chain.validate(attributes);
    },
  });
  await writeEncoded(ctx.res, 201, answer, ctx.output);
}
