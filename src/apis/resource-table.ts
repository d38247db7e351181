/**
 * The table the built-in API groups fill: a row per resource (its names, scope, verbs, subresources,
 * strategy and printer), the helper that makes a row, and the strategies several groups share. Each group's rows are
 * in its folder's install.ts; builtin.ts puts them together.
 */
import type { ScaleConfig } from '../api/serving.js';
import type { KObject } from '../api/object.js';
import type { SubresourceInfo } from '../registry/registry.js';
import type { ViewHandlers } from '../cache/cache-view.js';
import type { ResourceNames, Strategy } from '../registry/types.js';
import type { ServiceRanges } from './core/services.js';
import type { ServiceAccountTokens } from './authentication/service-account-tokens.js';
import type { TableConvertor } from '../printing/index.js';

export interface BuiltinResource {
  version: string;
  names: ResourceNames;
  verbs: string[];
  status?: boolean;
  /** The /finalize subresource (namespaces). */
  finalize?: boolean;
  /** The /scale subresource's paths (workloads). */
  scale?: ScaleConfig;
  /** Its other subresources (a pod's log, exec, eviction...). */
  subresources?: readonly SubresourceInfo[];
  /** Its other subresources, for those made from the server's context (a service account's token). */
  subresourcesIn?: (context: BuiltinContext) => readonly SubresourceInfo[];
  strategy?: Strategy;
  /**
   * The strategy, for a resource whose strategy reads other objects (a Service's addresses taken, a Pod's
   * priority classes and service account): made from `strategy` once the server's context is there.
   */
  strategyIn?: (base: Strategy, context: BuiltinContext, follow: (on: ViewHandlers) => { refresh(): void }) => Strategy;
  /** The resources (group, resource) that strategy reads: their watch caches are filled from the start. */
  reads?: ReadonlyArray<readonly [string, string]>;
  /** Served from another resource's store, converted both ways (events.k8s.io Events are core Events). */
  storedAs?: StoredAs;
  /** Its table convertor, upstream's printer for the kind (without one: Name and Created At). */
  printer?: () => TableConvertor;
  /** A version upstream no longer serves: served only when --runtime-config turns it on (removed-versions.ts). */
  removed?: boolean;
}

/** What some built-in strategies read beyond their own objects: the server's settings, and other resources' watch caches. */
export interface BuiltinContext {
  ranges: ServiceRanges;
  /** The issuer of service account tokens (the token subresource's). */
  serviceAccountTokens?: ServiceAccountTokens;
  /** The admission plugins that are on (strategies with plugins built in run them only then); absent: all. */
  admissionPlugins?: ReadonlySet<string>;
  /** The stored objects of a resource (v1), as its watch cache has them. */
  objects(group: string, resource: string): KObject[];
  /** One stored object of a resource (v1), from its watch cache (undefined: none, or not cached yet). */
  object(group: string, resource: string, namespace: string | undefined, name: string): KObject | undefined;
}

export interface StoredAs {
  group: string;
  /** The stored resource's version (default: this one's). */
  version?: string;
  resource: string;
  /** A stored object in this resource's version. */
  toVersion(stored: KObject): KObject;
  /** An object of this resource's version in the storage form. */
  toStorage(obj: KObject): KObject;
}

/** The workloads' /scale: spec.replicas, status.replicas, and their LabelSelector. */
export const WORKLOAD_SCALE: ScaleConfig = { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.spec.selector' };

export const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
export const NO_COLLECTION = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'];

export function res(
  group: string,
  version: string,
  resource: string,
  kind: string,
  namespaced: boolean,
  extra: { shortNames?: string[]; categories?: string[]; verbs?: string[]; status?: boolean; scale?: ScaleConfig; subresources?: readonly SubresourceInfo[]; strategy?: Strategy; strategyIn?: BuiltinResource['strategyIn']; reads?: BuiltinResource['reads']; storedAs?: StoredAs; printer?: () => TableConvertor; subresourcesIn?: BuiltinResource['subresourcesIn']; removed?: boolean } = {},
): BuiltinResource {
  return {
    version,
    names: {
      group,
      resource,
      singular: kind.toLowerCase(),
      kind,
      listKind: `${kind}List`,
      namespaced,
      shortNames: extra.shortNames,
      categories: extra.categories,
    },
    verbs: extra.verbs ?? ALL_VERBS,
    status: extra.status,
    scale: extra.scale,
    subresources: extra.subresources,
    subresourcesIn: extra.subresourcesIn,
    strategy: extra.strategy,
    strategyIn: extra.strategyIn,
    reads: extra.reads,
    storedAs: extra.storedAs,
    printer: extra.printer,
    removed: extra.removed,
  };
}

/** Workloads keep metadata.generation moving with their spec, as upstream's strategies do. */
export const workload: Strategy = { generation: 'spec', resetFieldsOnMainEndpoint: ['status'], allowUnconditionalUpdate: true };
export const plain: Strategy = { allowUnconditionalUpdate: true };


/** Kinds with a /status subresource: the main endpoint leaves status alone. */
export const withStatus: Strategy = { ...plain, resetFieldsOnMainEndpoint: ['status'] };
