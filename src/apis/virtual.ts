/** A create-only resource with no store (the reviews), cluster-scoped unless said otherwise. */
import { typedScope } from '../registry/request-scope.js';
import type { VirtualEndpoint, VirtualRequest } from '../registry/registry.js';
import type { KObject } from '../api/object.js';

export function virtualEndpoint(
  group: string,
  version: string,
  resource: string,
  kind: string,
  create: (obj: KObject, request: VirtualRequest) => KObject | Promise<KObject>,
  namespaced = false,
): VirtualEndpoint {
  const names = { group, resource, singular: kind.toLowerCase(), kind, listKind: `${kind}List`, namespaced };
  return {
    virtual: true,
    group,
    version,
    names,
    verbs: ['create'],
    subresources: {},
    custom: false,
    scope: typedScope(group, version, names),
    create,
  };
}
