/**
 * The /scale subresource: GET answers an autoscaling/v1 Scale built from the
 * object; PUT and PATCH change only the replicas at specReplicasPath (a
 * resourceVersion in the Scale is a precondition).
 */
import { deepClone } from '../../machinery/json.js';
import { field } from '../../machinery/field-errors.js';
import { errors } from '../../machinery/status.js';
import { getPath, setPath, toScale } from '../../crd/scale.js';
import type { ScaleConfig } from '../../api/serving.js';
import type { KObject } from '../../api/object.js';
import { decodeBody, readBody } from '../body.js';
import { objectBodyFormat } from '../negotiation.js';
import { writeVersionedObject } from '../output.js';
import type { HandlerContext } from './context.js';
import { checkPatchOptions, readPatch } from './patch.js';
import { checkName, dryRunOf, storeOptions } from './write.js';
import { gvkString } from '../../apply/index.js';
import { applyFor, fieldManagerOptions, trackUpdate } from './field-manager.js';

export async function handleScale(ctx: HandlerContext): Promise<void> {
  const { endpoint, info } = ctx;
  const scale = endpoint.subresources.scale!;
  const gr = { group: endpoint.group, resource: endpoint.names.resource };
  if (info.verb === 'get') {
    const stored = await endpoint.store.get(info.namespace, info.name!);
    await endpoint.prepare?.([stored]);
    const obj = endpoint.toVersion(stored);
    if (!getPath(obj, scale.specReplicasPath).found) throw errors.badRequest(`the spec replicas field "${scale.specReplicasPath}" does not exist`);
    return writeVersionedObject(ctx.res, 200, toScale(obj, scale), ctx);
  }
  if (info.verb !== 'update' && info.verb !== 'patch') throw errors.methodNotSupported(gr, info.verb);
  const dryRun = dryRunOf(ctx, info.verb === 'update' ? 'UpdateOptions' : 'PatchOptions');
  let incoming: KObject | undefined;
  const patch = info.verb === 'patch' ? await readPatch(ctx) : undefined;
  if (!patch) incoming = checkScale(ctx, await decodeBody(await readBody(ctx.req, ctx.res), objectBodyFormat(ctx.req.headers['content-type']) === 'yaml' ? 'yaml' : 'json', ctx.res, 'Scale'));
  const force = patch ? checkPatchOptions(ctx, patch) : undefined;
  const result = await endpoint.store.update(
    info.namespace,
    info.name!,
    (old, large) => {
      // `old` is in the request's version (the store's codec), where the scale paths point.
      if (patch?.kind === 'apply') return applyToScale(ctx, old!, patch.applied!, scale, force ?? false, large);
      const desired = incoming ?? checkScale(ctx, patch!.apply(toScale(old!, scale)));
      const live = deepClone(old!);
      return trackUpdate(ctx, live, applyScale(old!, desired, scale), large, 'scale');
    },
    { ...storeOptions(ctx, dryRun), subresource: 'scale' },
  );
  await endpoint.prepare?.([result.object]);
  await writeVersionedObject(ctx.res, 200, toScale(endpoint.toVersion(result.object), scale), ctx);
}

/** Decode checks of an autoscaling/v1 Scale body, and its validation. */
function checkScale(ctx: HandlerContext, body: unknown): KObject {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw errors.badRequest("Object 'Kind' is missing in the Scale body");
  const s = body as KObject;
  // The subresource decodes autoscaling/v1 Scales only (another version or kind is not in its scheme).
  if ((s.kind && s.kind !== 'Scale') || (s.apiVersion && s.apiVersion !== 'autoscaling/v1')) {
    const apiVersion = String(s.apiVersion ?? '');
    const kind = String(s.kind ?? 'Scale');
    const scheme = ctx.endpoint.scope.validatesScale ? ' in scheme "k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30"' : '';
    throw errors.badRequest(`${kind} in version "${apiVersion.slice(apiVersion.lastIndexOf('/') + 1)}" cannot be handled as a Scale: no kind "${kind}" is registered for version "${apiVersion}"${scheme}`);
  }
  checkName(s, ctx.info.name!);
  const replicas = s.spec?.replicas;
  if (replicas !== undefined && replicas !== null && (typeof replicas !== 'number' || !Number.isInteger(replicas) || Math.abs(replicas) > 2147483647)) {
    const what = typeof replicas === 'number' ? `number ${replicas}` : typeof replicas;
    throw errors.badRequest(`Scale in version "v1" cannot be handled as a Scale: json: cannot unmarshal ${what} into Go struct field ScaleSpec.spec.replicas of type int32`);
  }
  // A built-in's Scale is validated (ValidateScale); a custom resource's negative count is the resource's
  // own validation to refuse (ValidateScaleSpec).
  if (ctx.endpoint.scope.validatesScale && typeof replicas === 'number' && replicas < 0) {
    throw errors.invalid({ group: 'autoscaling', resource: 'Scale' }, ctx.info.name!, [field.invalid('spec.replicas', replicas, 'must be greater than or equal to 0')]);
  }
  return s;
}

/**
 * Server-side apply of a Scale: the applied replicas become an apply of the
 * object's replica field by the manager, recorded with subresource "scale".
 */
async function applyToScale(ctx: HandlerContext, live: KObject, applied: KObject, scale: ScaleConfig, force: boolean, large: boolean): Promise<KObject> {
  if (applied.apiVersion !== 'autoscaling/v1' || applied.kind !== 'Scale') {
    throw errors.badRequest(`invalid object type: ${gvkString(applied.apiVersion ?? '', applied.kind ?? '')}`);
  }
  const desired = checkScale(ctx, applied);
  const { endpoint } = ctx;
  const asObject: KObject = { apiVersion: live.apiVersion, kind: live.kind, metadata: { name: live.metadata.name } };
  if (typeof desired.spec?.replicas === 'number') setPath(asObject, scale.specReplicasPath, desired.spec.replicas);
  const merged = await applyFor(large, live, asObject, ctx.query.get('fieldManager')!, { ...fieldManagerOptions(endpoint, 'scale'), kind: endpoint.names.kind, force });
  if (desired.metadata?.resourceVersion) merged.metadata.resourceVersion = desired.metadata.resourceVersion;
  return merged;
}

function applyScale(old: KObject, desired: KObject, scale: ScaleConfig): KObject {
  const replicas = desired.spec?.replicas;
  if (replicas === undefined || replicas === null) {
    if (!getPath(old, scale.specReplicasPath).found) throw errors.badRequest(`the spec replicas field "${scale.specReplicasPath}" cannot be empty`);
  }
  setPath(old, scale.specReplicasPath, typeof replicas === 'number' ? replicas : 0);
  const rv = desired.metadata?.resourceVersion;
  if (rv) old.metadata.resourceVersion = rv;
  return old;
}
