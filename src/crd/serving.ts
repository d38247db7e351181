/**
 * What a CRD makes the server serve: one REST store for the resource (keys
 * under /registry/<group>/<plural>/, objects in the storage version) and one
 * endpoint per served version, converting by apiVersion (conversion None).
 */
import { unstructuredScope } from '../registry/request-scope.js';
import { createHash } from 'node:crypto';
import type { Endpoint } from '../registry/registry.js';
import { RestStore } from '../registry/store.js';
import type { ResourceNames, Strategy } from '../registry/types.js';
import type { KObject } from '../api/object.js';
import type { Storage } from '../storage/types.js';
import { compareKubeAwareVersionStrings } from '../machinery/version-priority.js';
import { selectableFieldLabels } from '../api/apiextensions.js';
import { ConversionCache, type CrConverter } from './conversion/index.js';
import { setApiVersion } from './conversion/none.js';
import { customResourceTableConvertor } from '../printing/index.js';
import { typeFromSchema } from '../apply/index.js';
import { customResourceOptions, customResourceStrategy } from './custom-resource-strategy.js';
import { toStructural } from '../schema/structural.js';

export const CR_VERBS = ['delete', 'deletecollection', 'get', 'list', 'patch', 'create', 'update', 'watch'];

/** base64 of the first 8 bytes of SHA-256 over "<group>/<storage version>/<kind>". */
export function storageVersionHash(group: string, version: string, kind: string): string {
  return createHash('sha256').update(`${group}/${version}/${kind}`).digest().subarray(0, 8).toString('base64');
}

export function storageVersionOf(crd: KObject): string {
  return crd.spec.versions.find((v: KObject) => v.storage)?.name ?? crd.spec.versions[0]?.name;
}

/** The names a CRD has been granted (status.acceptedNames), with spec fallbacks for what is not yet filled. */
export function resourceNamesOf(crd: KObject): ResourceNames {
  const accepted = crd.status?.acceptedNames ?? {};
  const names = crd.spec.names;
  const kind = accepted.kind || names.kind;
  return {
    group: crd.spec.group,
    resource: accepted.plural || names.plural,
    singular: accepted.singular || names.singular || kind.toLowerCase(),
    kind,
    listKind: accepted.listKind || names.listKind || `${kind}List`,
    namespaced: crd.spec.scope === 'Namespaced',
    shortNames: accepted.shortNames ?? [],
    categories: accepted.categories ?? [],
  };
}

export function newCustomResourceStore(storage: Storage, crd: KObject, strategy: Strategy = customResourceStrategy(customResourceOptions(crd))): RestStore {
  return new RestStore(storage, resourceNamesOf(crd), strategy);
}

export function customResourceEndpoints(crd: KObject, store: RestStore, terminating: boolean, converter: CrConverter): Endpoint[] {
  const group: string = crd.spec.group;
  const names = resourceNamesOf(crd);
  const storageVersion = storageVersionOf(crd);
  const hash = storageVersionHash(group, storageVersion, names.kind);
  const storageApiVersion = `${group}/${storageVersion}`;
  const conversions = new ConversionCache(converter);
  return crd.spec.versions
    .filter((v: KObject) => v.served)
    .map((v: KObject): Endpoint => {
      const apiVersion = `${group}/${v.name}`;
      return {
        group,
        version: v.name,
        names,
        store,
        verbs: CR_VERBS,
        custom: true,
        scope: unstructuredScope(group, v.name, names),
        // The strategy of the moment: a CRD update replaces it.
        decodeObject: (obj, o) => store.strategy.decode?.(obj, o),
        toVersion: (obj) => conversions.toVersion(obj, apiVersion),
        prepare: converter.trivial ? undefined : (objs) => conversions.prepare(objs, apiVersion),
        toStorage: converter.trivial ? (obj) => setApiVersion(obj, storageApiVersion) : (obj) => conversions.toStorage(obj, storageApiVersion),
        subresources: { status: Boolean(v.subresources?.status), scale: v.subresources?.scale ?? undefined },
        storageVersionHash: hash,
        warning: v.deprecated ? (v.deprecationWarning ?? defaultDeprecationWarning(crd, v.name)) : undefined,
        terminating,
        table: customResourceTableConvertor(v.additionalPrinterColumns),
        selectableFields: selectableFieldLabels(v),
        applyType: () => typeFromSchema(v.schema?.openAPIV3Schema, { preserveUnknownFields: crd.spec.preserveUnknownFields }),
        celSchema: once(() => {
          try {
            return v.schema?.openAPIV3Schema ? toStructural(v.schema.openAPIV3Schema) : undefined;
          } catch {
            return undefined;
          }
        }),
      };
    });
}

/** `<group>/<version> <Kind> is deprecated; use <group>/<newer served version> <Kind>`, as upstream words it. */
export function defaultDeprecationWarning(crd: KObject, version: string): string {
  const { group } = crd.spec;
  const kind = crd.spec.names.kind;
  const better = (crd.spec.versions as KObject[])
    .filter((v) => v.served && !v.deprecated && compareKubeAwareVersionStrings(version, v.name) < 0)
    .map((v) => v.name as string)
    .sort((a, b) => compareKubeAwareVersionStrings(b, a));
  const msg = `${group}/${version} ${kind} is deprecated`;
  return better.length > 0 ? `${msg}; use ${group}/${better[0]} ${kind}` : msg;
}

/** fn's result, computed on the first call. */
function once<T>(fn: () => T): () => T {
  let done = false;
  let value: T;
  return () => {
    if (!done) {
      value = fn();
      done = true;
    }
    return value;
  };
}
