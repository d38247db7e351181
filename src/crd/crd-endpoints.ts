/**
 * The CustomResourceDefinition resource itself (apiextensions.k8s.io): its store, served in v1 and in
 * the deprecated v1beta1 (converted on the way in and out, with upstream's deprecation warning).
 */
import { typedScope } from '../registry/request-scope.js';
import { v1ToV1beta1, v1beta1ToV1 } from '../apis/apiextensions/conversion.js';
import { builtinApplyType } from '../apply/index.js';
import type { KObject } from '../api/object.js';
import { tableConvertorOf } from '../printing/index.js';
import type { Endpoint } from '../registry/registry.js';
import type { ResourceNames } from '../registry/types.js';
import type { Storage } from '../storage/types.js';
import { CrdRestStore } from './crd-store.js';
import { crdStrategy } from './crd-strategy.js';

const CRD_NAMES: ResourceNames = {
  group: 'apiextensions.k8s.io',
  resource: 'customresourcedefinitions',
  singular: 'customresourcedefinition',
  kind: 'CustomResourceDefinition',
  listKind: 'CustomResourceDefinitionList',
  namespaced: false,
  shortNames: ['crd', 'crds'],
  categories: ['api-extensions'],
};

const CRD_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

const V1BETA1_WARNING =
  'apiextensions.k8s.io/v1beta1 CustomResourceDefinition is deprecated in v1.16+, unavailable in v1.22+; use apiextensions.k8s.io/v1 CustomResourceDefinition';

/** The CRD store and its two endpoints. */
export function customResourceDefinitionEndpoints(storage: Storage): { store: CrdRestStore; endpoints: Endpoint[] } {
  const store = new CrdRestStore(storage, CRD_NAMES, crdStrategy);
  const common = {
    group: CRD_NAMES.group,
    names: CRD_NAMES,
    store,
    verbs: CRD_VERBS,
    custom: false,
    subresources: { status: true },
    table: tableConvertorOf(undefined),
  };
  const v1: Endpoint = {
    ...common,
    version: 'v1',
    scope: typedScope(CRD_NAMES.group, 'v1', CRD_NAMES),
    applyType: builtinApplyType(CRD_NAMES.group, 'v1', CRD_NAMES.kind),
    toVersion: (o) => o,
    toStorage: (o) => (o.apiVersion === 'apiextensions.k8s.io/v1' ? o : { ...o, apiVersion: 'apiextensions.k8s.io/v1' }),
  };
  const v1beta1: Endpoint = {
    ...common,
    version: 'v1beta1',
    scope: typedScope(CRD_NAMES.group, 'v1beta1', CRD_NAMES),
    toVersion: (o) => v1ToV1beta1(o as never) as KObject,
    toStorage: (o) => v1beta1ToV1(o as never) as KObject,
    warning: V1BETA1_WARNING,
  };
  return { store, endpoints: [v1, v1beta1] };
}
