/** The contract every custom resource converter meets (None, webhook, in-process). */
import type { KObject } from '../../api/object.js';

export interface CrConverter {
  /**
   * Convert objects (each in whatever version it is stored or sent in) to
   * `desiredApiVersion`. Objects already in that version come back untouched.
   * Throws a StatusError when conversion fails.
   */
  convert(objects: KObject[], desiredApiVersion: string): Promise<KObject[]>;
  /** True when conversion only rewrites apiVersion, so it can run synchronously. */
  readonly trivial: boolean;
}

/**
 * An in-process converter for embedders: convert one object to `toApiVersion`.
 * The same rules as a webhook apply to its result (kind, name, namespace and uid
 * kept; only labels and annotations of metadata may change).
 */
export type ConvertFunction = (obj: KObject, toApiVersion: string) => KObject | Promise<KObject>;
