/**
 * Managed fields on every write: the manager of a request (fieldManager or the
 * User-Agent), the merge type of the endpoint's objects, and the bookkeeping
 * call each handler makes inside its compare-and-swap update.
 */
import { typeFromGoStruct } from '../../apply/go-struct-types.js';
import { structOfKind } from '../../schema/builtin/go-type-expr.js';
import { BUILTIN_OBJECT, managerOrUserAgent, resetFieldsFor, typeFromDefinition, updateManagedFields, type FieldManagerOptions, type TypeInfo } from '../../apply/index.js';
import { KIND_DEFINITIONS, META_DEFINITIONS, STUB_DEFINITIONS } from '../../openapi/builtin-definitions.js';
import type { Endpoint } from '../../registry/registry.js';
import type { KObject } from '../../registry/types.js';
import { groupVersion, type HandlerContext } from './context.js';

const DEFINITIONS = { ...META_DEFINITIONS, ...STUB_DEFINITIONS, ...KIND_DEFINITIONS };

/** group/version/kind → definition name, from the definitions' x-kubernetes-group-version-kind. */
const BY_GVK = new Map<string, string>();
for (const [name, schema] of Object.entries(DEFINITIONS)) {
  for (const gvk of ((schema as KObject)['x-kubernetes-group-version-kind'] ?? []) as KObject[]) BY_GVK.set(`${gvk.group}/${gvk.version}/${gvk.kind}`, name);
}

/**
 * The merge type of a built-in kind: from its Go struct (go-types.ts), else its published schema
 * where kapi has one, else upstream's deduced object.
 */
export function builtinApplyType(group: string, version: string, kind: string): () => TypeInfo {
  let type: TypeInfo | undefined;
  return () => {
    if (type) return type;
    const struct = structOfKind(group, version, kind);
    const name = BY_GVK.get(`${group}/${version}/${kind}`);
    type = struct ? typeFromGoStruct(struct) : name ? typeFromDefinition(name, DEFINITIONS) : BUILTIN_OBJECT;
    return type;
  };
}

export function managerOf(ctx: HandlerContext): string {
  return managerOrUserAgent(ctx.query.get('fieldManager') ?? undefined, ctx.req.headers['user-agent']);
}

export function fieldManagerOptions(endpoint: Endpoint, subresource?: string): FieldManagerOptions {
  return {
    type: endpoint.applyType?.() ?? BUILTIN_OBJECT,
    apiVersion: groupVersion(endpoint.group, endpoint.version),
    subresource,
    resetFields: resetFieldsFor({ hasStatusSubresource: Boolean(endpoint.subresources.status), subresource }),
  };
}

/** Record a non-apply write in `next.metadata.managedFields` (both objects in the request's version), for the request's subresource. */
export function trackUpdate(ctx: HandlerContext, live: KObject | undefined, next: KObject, subresource = ctx.info.subresource): KObject {
  return updateManagedFields(live, next, managerOf(ctx), fieldManagerOptions(ctx.endpoint, subresource));
}
