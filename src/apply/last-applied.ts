/**
 * Interplay with client-side apply's `kubectl.kubernetes.io/last-applied-configuration`
 * annotation, for the `kubectl` field manager only (apimachinery's
 * lastAppliedManager and lastAppliedUpdater): conflicts over fields the
 * annotation shows kubectl applied (with the live value) are allowed, so that
 * `kubectl apply --server-side` takes over from client-side apply; and a
 * server-side apply by kubectl keeps an existing annotation up to date.
 */
import { compare } from './compare.js';
import type { FieldSet } from './field-set.js';
import { toFieldSet, validate } from './typed.js';
import type { TypeInfo } from './types.js';
import { byteLength } from '../machinery/go-text.js';
import { parseJson } from '../machinery/json.js';
import { TOTAL_ANNOTATION_SIZE_LIMIT_B } from '../machinery/object-meta.js';
import { goJson, isMap, mapKeys, type JsonMap } from './value.js';

export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

/** The manager whose applies interact with the annotation. */
export const KUBECTL_MANAGER = 'kubectl';

function annotationsOf(obj: unknown): JsonMap | undefined {
  const meta = isMap(obj) ? obj.metadata : undefined;
  const a = isMap(meta) ? meta.annotations : undefined;
  return isMap(a) ? a : undefined;
}

function lastApplied(obj: unknown): string | undefined {
  const v = annotationsOf(obj)?.[LAST_APPLIED_ANNOTATION];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/**
 * The fields kubectl's annotation records with the values the live object still has:
 * conflicts over them are allowed. Undefined when the annotation cannot be used.
 */
export function allowedConflictsFromLastApplied(liveObj: unknown, type: TypeInfo, apiVersion: string): FieldSet | undefined {
  const text = lastApplied(liveObj);
  if (!text) return undefined;
  if (validate(liveObj, type, false).length > 0) return undefined;
  let obj: unknown;
  try {
    obj = parseJson(text);
  } catch {
    return undefined;
  }
  if (!isMap(obj) || typeof obj.kind !== 'string' || obj.kind === '') return undefined;
  if (obj.apiVersion !== apiVersion) return undefined;
  if (validate(obj, type, false).length > 0) return undefined;
  const c = compare(obj, liveObj, type);
  return toFieldSet(obj, type).difference(c.modified).difference(c.added).difference(c.removed);
}

/**
 * lastAppliedUpdater: when the object already carries the annotation, set it to the applied
 * configuration (without the annotation, as JSON with sorted keys); dropped when the
 * annotations would grow past 256 KiB. Mutates `result`.
 */
export function updateLastApplied(result: JsonMap, applied: unknown): void {
  if (!lastApplied(result)) return;
  const value = encodeLastApplied(applied);
  const meta = result.metadata as JsonMap;
  const annotations: JsonMap = { ...(meta.annotations as JsonMap), [LAST_APPLIED_ANNOTATION]: value };
  let size = 0;
  for (const k of mapKeys(annotations)) size += byteLength(k) + byteLength(String(annotations[k]));
  if (size > TOTAL_ANNOTATION_SIZE_LIMIT_B) delete annotations[LAST_APPLIED_ANNOTATION];
  meta.annotations = annotations;
}

function encodeLastApplied(applied: unknown): string {
  let obj = applied;
  const annotations = annotationsOf(applied);
  if (annotations && isMap(applied)) {
    const rest = { ...annotations };
    delete rest[LAST_APPLIED_ANNOTATION];
    obj = { ...applied, metadata: { ...(applied.metadata as JsonMap), annotations: rest } };
  }
  // runtime.Encode with the unstructured JSON scheme: json.Encoder, hence the newline.
  return goJson(obj) + '\n';
}
