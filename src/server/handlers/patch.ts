/**
 * PATCH: JSON patch (RFC 6902), JSON merge patch (RFC 7386), and for built-in
 * resources strategic merge patch (its directives honored without Go type
 * metadata). Custom resources refuse strategic merge patch with 415.
 */
import { applyJsonPatch, decodeJsonPatch, JsonPatchError, type JsonPatchOperation } from '../../machinery/json-patch.js';
import { applyMergePatch, applyMergePatchSharing } from '../../machinery/merge-patch.js';
import { applyStrategicMergePatch, StrategicMergePatchError } from '../../machinery/strategic-merge-patch.js';
import { deepCloneMutable, goJsonType, JsonSyntaxError, parseJson, MAX_JSON_DEPTH } from '../../machinery/json.js';
import { errors, StatusError } from '../../machinery/status.js';
import type { KObject } from '../../api/object.js';
import { readBody } from '../body.js';
import { bodyMediaType, PATCH_TYPES } from '../negotiation.js';
import { writeStoredObject } from '../output.js';
import { isLarge, nextTurn } from '../../util/turns.js';
import { builtinStruct, type HandlerContext } from './context.js';
import { checkPatchedTypeMeta, decodeOptions, typedOrder } from './decode-object.js';
import { checkName, dryRunOf, fromInternal, storeOptions, toInternal } from './write.js';
import { applyFor, decodeInTurns, fieldManagerOptions, trackUpdate } from './field-manager.js';
import { applyBodyError, checkApplyBody, parseForceParam, validatePatchOptions } from '../../apply/index.js';
import { parseYamlBody } from '../yaml-bodies.js';

const MAX_JSON_PATCH_OPERATIONS = 10000;

export interface ParsedPatch {
  /** Apply the patch to an object (in the request's version); throws Kubernetes errors. */
  apply(obj: KObject): KObject;
  /**
   * Like apply, but the result may share what the patch does not touch with `obj`
   * (merge patches): for callers that take only part of the result, and copy it.
   */
  applySharing(obj: KObject): KObject;
  raw: string;
  kind: 'json' | 'merge' | 'strategic' | 'apply';
  /** For server-side apply: the applied configuration. */
  applied?: KObject;
  /**
   * A JSON patch that may nest the object past encoding/json's 10,000 levels: a copy or move (a subtree put
   * deeper), or a patch long enough to spell such a path or value. Only these have their result's depth checked.
   */
  mayNestTooDeep?: boolean;
}

/** Read and check a PATCH body: media type, syntax, operation count. */
export async function readPatch(ctx: HandlerContext): Promise<ParsedPatch> {
  const { endpoint } = ctx;
  const accepted = endpoint.scope.patchTypes;
  const mediaType = bodyMediaType(ctx.req.headers['content-type']);
  const patchType = PATCH_TYPES[mediaType];
  if (!patchType || !accepted.includes(mediaType)) throw errors.unsupportedMediaType(accepted);
  const body = await readBody(ctx.req, ctx.res);
  ctx.bodyBytes = body.length;
  const raw = body.toString('utf8');
  if (patchType === 'apply-yaml') {
    const applied = checkApplyBody(await parseYamlBody(raw, ctx.res).catch((e: unknown) => Promise.reject(applyBodyError(e, raw))));
    return { raw, kind: 'apply', applied, apply: () => applied, applySharing: () => applied };
  }
  let patch: unknown;
  try {
    patch = parseJson(raw);
  } catch (err) {
    // validateAndTranscodePatch: every patch type but apply must be valid JSON.
    if (err instanceof JsonSyntaxError) throw errors.badRequest('invalid JSON patch');
    throw err;
  }
  if (patchType === 'json-patch') {
    let ops: JsonPatchOperation[];
    try {
      ops = decodeJsonPatch(patch);
    } catch (err) {
      throw errors.badRequest((err as Error).message);
    }
    if (ops.length > MAX_JSON_PATCH_OPERATIONS) {
      throw new StatusError(413, 'RequestEntityTooLarge', `Request entity too large: The allowed maximum operations in a JSON patch is ${MAX_JSON_PATCH_OPERATIONS}, got ${ops.length}`);
    }
    const apply = (obj: KObject) => jsonPatched(obj, ops);
    // A new branch nests as deep as its path and value: two characters a level at least.
    const mayNestTooDeep = raw.length >= MAX_JSON_DEPTH || ops.some((o) => o !== null && typeof o === 'object' && (o.op === 'copy' || o.op === 'move'));
    return { raw, kind: 'json', apply, applySharing: apply, mayNestTooDeep };
  }
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) {
    // encoding/json's UnmarshalTypeError; a merge patch's decoding error carries upstream's prefix.
    const why = patch === null ? 'json: cannot unmarshal into Go value of type map[string]interface {}' : `json: cannot unmarshal ${goJsonType(patch)} into Go value of type map[string]interface {}`;
    throw errors.badRequest(patchType === 'merge-patch' ? `error decoding patch: ${why}` : why);
  }
  ctx.rawBody = raw;
  if (patchType === 'strategic-merge-patch') {
    const structId = builtinStruct(endpoint);
    const apply = (obj: KObject) => {
      try {
        return applyStrategicMergePatch(obj, patch, structId) as KObject;
      } catch (err) {
        // Upstream answers these with a 500 (strategicpatch's errors are not all mapped): the client's mistake, a 400 here.
        if (err instanceof StrategicMergePatchError) throw errors.badRequest(err.message);
        throw err;
      }
    };
    return { raw, kind: 'strategic', apply, applySharing: apply };
  }
  return { raw, kind: 'merge', apply: (obj) => applyMergePatch(obj, patch) as KObject, applySharing: (obj) => applyMergePatchSharing(obj, patch) as KObject };
}

/** The PatchOptions checks: fieldManager required for apply, force only with apply. */
export function checkPatchOptions(ctx: HandlerContext, patch: ParsedPatch): boolean | undefined {
  const force = parseForceParam(ctx.query.get('force'));
  validatePatchOptions({ fieldManager: ctx.query.get('fieldManager') ?? undefined, force }, patch.kind);
  return force;
}

export async function handlePatch(ctx: HandlerContext): Promise<void> {
  const { endpoint, info } = ctx;
  const dryRun = dryRunOf(ctx, 'PatchOptions');
  const patch = await readPatch(ctx);
  const force = checkPatchOptions(ctx, patch);
  if (patch.kind === 'apply') return handleApply(ctx, patch.applied!, force ?? false, dryRun);
  const result = await endpoint.store.update(
    info.namespace,
    info.name!,
    async (old, large) => {
      const live = fromInternal(ctx, old!);
      const obj = patchedObject(ctx, patch, live);
      checkName(obj, info.name!);
      // Patching, decoding and field tracking are steps of their own in a large request.
      if (large) await nextTurn();
      await trackUpdate(ctx, live, obj, large);
      return toInternal(ctx, obj);
    },
    storeOptions(ctx, dryRun),
  );
  await endpoint.prepare?.([result.object]);
  if (isLarge(ctx.bodyBytes)) await nextTurn();
  await writeStoredObject(ctx.res, 200, result.object, ctx);
}

/** Server-side apply: merge the applied configuration with field ownership; creates the object when missing. */
async function handleApply(ctx: HandlerContext, applied: KObject, force: boolean, dryRun: boolean): Promise<void> {
  const { endpoint, info } = ctx;
  const gr = { group: endpoint.group, resource: endpoint.names.resource };
  const manager = ctx.query.get('fieldManager')!;
  const result = await endpoint.store.update(
    info.namespace,
    info.name!,
    async (old, large) => {
      const live = old ? fromInternal(ctx, old) : undefined;
      if (!live && endpoint.terminating) throw errors.forbidden(gr, info.name!, 'create not allowed while custom resource definition is terminating');
      const obj = await applyFor(large, live, applied, manager, { ...fieldManagerOptions(endpoint, info.subresource), kind: endpoint.names.kind, force });
      if (large) await nextTurn();
      // As upstream's apply patcher: the merged object is defaulted (and a custom resource pruned) before admission.
      if (large) await decodeInTurns(endpoint, obj, decodeOptions(ctx, 'PatchOptions'));
      else endpoint.decodeObject?.(obj, decodeOptions(ctx, 'PatchOptions'));
      if (!live && obj.metadata?.uid) {
        throw errors.conflict(gr, info.name!, `uid mismatch: the provided object specified uid ${obj.metadata.uid}, and no existing object was found`);
      }
      obj.metadata ??= {};
      obj.metadata.name ??= info.name;
      if (obj.metadata.name !== info.name) {
        throw errors.badRequest(`the name of the object (${obj.metadata.name}) does not match the name on the URL (${info.name})`);
      }
      if (endpoint.names.namespaced && obj.metadata.namespace && obj.metadata.namespace !== info.namespace) {
        throw errors.badRequest(`the namespace of the object (${obj.metadata.namespace}) does not match the namespace on the request (${info.namespace})`);
      }
      return toInternal(ctx, typedOrder(ctx, obj));
    },
    // Apply creates a missing object; through a subresource it does not (the store answers 404).
    { ...storeOptions(ctx, dryRun, 'PatchOptions'), allowCreate: info.subresource === undefined },
  );
  await endpoint.prepare?.([result.object]);
  if (isLarge(ctx.bodyBytes)) await nextTurn();
  await writeStoredObject(ctx.res, result.created ? 201 : 200, result.object, ctx);
}

/**
 * The patched object, its type checked as upstream decodes it: a JSON or merge patch may not change
 * apiVersion or kind (checkPatchedTypeMeta); a strategic merge patch is read into the endpoint's type,
 * which sets them.
 */
function patchedObject(ctx: HandlerContext, patch: ParsedPatch, live: KObject): KObject {
  const obj = patch.apply(live);
  if (patch.kind === 'strategic' && obj !== null && typeof obj === 'object') {
    obj.apiVersion = live.apiVersion;
    obj.kind = live.kind;
  }
  // Only a JSON patch can nest the object deeper than the patch and the object were.
  return checkPatchedTypeMeta(ctx, obj, patch.mayNestTooDeep === true);
}

/** The object after a JSON patch; any failure of the patch is upstream's generic 422. */
function jsonPatched(doc: KObject, ops: JsonPatchOperation[]): KObject {
  // The operations change the copy in place, anywhere: nothing may be shared (frozen fieldsV1 sets are copied too).
  const target = deepCloneMutable(doc);
  try {
    applyJsonPatch(target as unknown as Record<string, unknown>, ops);
  } catch (err) {
    if (!(err instanceof JsonPatchError)) throw err;
    throw new StatusError(422, 'Invalid', 'the server rejected our request due to an error in our request', {});
  }
  return target;
}
