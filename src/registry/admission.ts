/**
 * Admission as apiserver's admission chain: mutating plugins (`admit`) may
 * change the object, validating plugins (`validate`) may only refuse it. The
 * store calls the chain at upstream's points, for every verb and subresource:
 * - create: mutating before the strategy (prepareForCreate, validate),
 *   validating after it;
 * - update (patch, apply, /status, /scale, /finalize too): inside the
 *   compare-and-swap loop, with the object it replaces, likewise around the
 *   strategy's prepareForUpdate and validateUpdate;
 * - delete: with the object being deleted, before anything is written.
 * Objects are handed over in the storage version (webhooks, later, convert).
 */
import type { KObject } from '../api/object.js';

export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE';

/** The user a request runs as (authentication's UserInfo). */
export interface AdmissionUser {
  name: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

/** What does not change within one request: where it points, who sends it, its options. */
export interface AdmissionRequest {
  resource: { group: string; version: string; resource: string };
  subresource: string;
  kind: { group: string; version: string; kind: string };
  namespace: string;
  name: string;
  user?: AdmissionUser;
  dryRun: boolean;
  /** Where warnings for the client go (a webhook's `warnings`). */
  warnings?: string[];
  /** Where annotations for the request's audit event go (a webhook's `auditAnnotations`, a policy's). */
  auditAnnotations?: Record<string, string>;
}

/** upstream's admission.Attributes: the request, the operation, and the objects. */
export interface AdmissionAttributes extends AdmissionRequest {
  operation: AdmissionOperation;
  /** The new object (create, update); absent for delete. */
  object?: KObject;
  /** The object replaced (update) or deleted (delete). */
  oldObject?: KObject;
  /**
   * upstream's ObjectInterfaces defaulter: a mutating plugin that changed the object runs it on the object,
   * in that object's version, before the next plugin sees it (custom resources: their schema's defaults).
   * It also tells the store that the object changed (see AdmissionPlugin.reportsChanges).
   */
  defaulter?: (obj: KObject) => void;
}

export interface AdmissionPlugin {
  readonly name: string;
  /** Mutating admission: may change `object` (then calls `defaulter` on it); throws a StatusError to refuse. */
  admit?(attributes: AdmissionAttributes): void | Promise<void>;
  /** Validating admission: throws a StatusError to refuse. */
  validate?(attributes: AdmissionAttributes): void | Promise<void>;
  /**
   * upstream's reinvocation: after every mutating plugin has run once, each that has this is asked again (in
   * order), to mutate once more what later plugins changed after it (reinvocationPolicy IfNeeded).
   */
  reinvoke?(attributes: AdmissionAttributes): void | Promise<void>;
  /**
   * The plugin calls `defaulter` on every object it changes (or never changes one): after it, the store
   * need not decode the object again. A mutating plugin without it makes the store prune, check and
   * default what admission left, whatever it did.
   */
  readonly reportsChanges?: boolean;
}

/**
 * The plugins in order. A phase costs nothing where no plugin has it, and no
 * promise where none returns one (every write runs both phases).
 */
export class AdmissionChain {
  readonly mutating: readonly AdmissionPlugin[];
  readonly validating: readonly AdmissionPlugin[];
  readonly reinvocable: readonly AdmissionPlugin[];
  /** Every mutating plugin reports what it changes (AdmissionPlugin.reportsChanges). */
  readonly changesReported: boolean;

  constructor(readonly plugins: readonly AdmissionPlugin[]) {
    this.mutating = plugins.filter((p) => p.admit);
    this.changesReported = this.mutating.every((p) => p.reportsChanges === true);
    this.validating = plugins.filter((p) => p.validate);
    this.reinvocable = plugins.filter((p) => p.reinvoke);
  }

  admit(attributes: AdmissionAttributes): void | Promise<void> {
    const first = run(this.mutating, 'admit', attributes, 0);
    if (this.reinvocable.length === 0) return first;
    if (!first) return run(this.reinvocable, 'reinvoke', attributes, 0);
    return first.then(() => run(this.reinvocable, 'reinvoke', attributes, 0));
  }

  validate(attributes: AdmissionAttributes): void | Promise<void> {
    return run(this.validating, 'validate', attributes, 0);
  }
}

function run(plugins: readonly AdmissionPlugin[], phase: 'admit' | 'validate' | 'reinvoke', a: AdmissionAttributes, from: number): void | Promise<void> {
  for (let i = from; i < plugins.length; i++) {
    const pending = plugins[i][phase]!(a);
    if (pending) return pending.then(() => run(plugins, phase, a, i + 1));
  }
}

/** The chain and the request it runs for, as a write passes them to the store. */
export interface Admission {
  chain: AdmissionChain;
  request: AdmissionRequest;
}
