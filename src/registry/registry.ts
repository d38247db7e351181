/**
 * The table of served endpoints: one entry per group, version and resource,
 * changed at run time as CRDs come and go. Route lookup is one map access;
 * discovery documents are derived from the same entries.
 */
import type { ScaleConfig } from '../crd/scale.js';
import type { TypeInfo } from '../apply/index.js';
import type { TableConvertor } from '../printing/index.js';
import type { RestStore } from './store.js';
import type { KObject, ResourceNames } from './types.js';

export interface Endpoint {
  group: string;
  version: string;
  names: ResourceNames;
  store: RestStore;
  verbs: string[];
  /** A custom resource (unstructured objects, JSON and YAML only, no strategic merge patch). */
  custom: boolean;
  /** Turns a stored object into this version (synchronously: call `prepare` first when the endpoint has one). */
  toVersion(obj: KObject): KObject;
  /** Runs the asynchronous conversions (webhook, in-process) that `toVersion` will need for these objects. */
  prepare?(objects: KObject[]): Promise<void>;
  /** Turns an object of this version into the storage version. */
  toStorage(obj: KObject): KObject | Promise<KObject>;
  subresources: { status?: boolean; finalize?: boolean; scale?: ScaleConfig };
  storageVersionHash?: string;
  /** Warning sent with every request to this version (deprecated CRD versions). */
  warning?: string;
  /** The resource is being deleted: new objects are refused. */
  terminating?: boolean;
  /** Server-side printing (meta.k8s.io Table) for this version. */
  table?: TableConvertor;
  /** The merge type of this version's objects, for managed fields and server-side apply (compiled on first use). */
  applyType?: () => TypeInfo;
}

export class ApiRegistry {
  private readonly endpoints = new Map<string, Endpoint>();
  private readonly listeners = new Set<() => void>();
  /** Bumped on every change; discovery caches by it. */
  generation = 0;

  add(ep: Endpoint): void {
    this.endpoints.set(key(ep.group, ep.version, ep.names.resource), ep);
    this.changed();
  }

  remove(group: string, version: string, resource: string): void {
    if (this.endpoints.delete(key(group, version, resource))) this.changed();
  }

  lookup(group: string, version: string, resource: string): Endpoint | undefined {
    return this.endpoints.get(key(group, version, resource));
  }

  all(): Endpoint[] {
    return [...this.endpoints.values()];
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    this.generation++;
    for (const l of this.listeners) l();
  }
}

const key = (group: string, version: string, resource: string) => `${group}/${version}/${resource}`;
