/**
 * The /scale subresource of custom resources: an autoscaling/v1 Scale mapped
 * onto the object through the CRD's specReplicasPath, statusReplicasPath and
 * labelSelectorPath, and the replica checks every write of such an object gets.
 */
import { field, type FieldError } from '../machinery/field-errors.js';
import type { KObject } from '../api/object.js';
import { formatGoFloat } from '../machinery/go-text.js';

import { selectorFromLabelSelector, type LabelSelectorSpec } from '../machinery/labels.js';
import type { ScaleConfig } from '../api/serving.js';


type Segment = string | number;

/** `.spec.replicas` or `.spec.replicas[0]` as path segments. */
export function parseSimplePath(path: string): Segment[] {
  const out: Segment[] = [];
  for (const m of path.matchAll(/\.([^.[\]]+)|\[(\d+)\]/g)) out.push(m[1] !== undefined ? m[1] : Number(m[2]));
  return out;
}

export function getPath(obj: unknown, path: string): { found: boolean; value?: unknown } {
  let cur: unknown = obj;
  for (const seg of parseSimplePath(path)) {
    if (cur === null || typeof cur !== 'object') return { found: false };
    const next = (cur as Record<string | number, unknown>)[seg];
    if (next === undefined) return { found: false };
    cur = next;
  }
  return { found: true, value: cur };
}

/** Set a value at a simple path, creating objects on the way (not arrays). */
export function setPath(obj: KObject, path: string, value: unknown): void {
  const segs = parseSimplePath(path);
  let cur: Record<string | number, unknown> = obj;
  for (let i = 0; i < segs.length - 1; i++) {
    const seg = segs[i];
    let next = cur[seg];
    if (next === null || typeof next !== 'object') cur[seg] = next = typeof segs[i + 1] === 'number' ? [] : {};
    cur = next as Record<string | number, unknown>;
  }
  cur[segs[segs.length - 1]] = value;
}

const MAX_INT32 = 2147483647;

/** A JSON value's Go type once unstructured decoding has it (%T). */
function goTypeName(v: unknown): string {
  if (typeof v === 'string') return 'string';
  if (typeof v === 'number') return 'float64';
  if (typeof v === 'boolean') return 'bool';
  return Array.isArray(v) ? '[]interface {}' : 'map[string]interface {}';
}

/** A scalar as Go's %v prints it (a collection as JSON: upstream's map[...] form is rarely met here). */
function goValueText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return formatGoFloat(v);
  if (typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}

/** The replica and selector checks of upstream's CR validator, with the path (leading dot kept) as field. */
export function validateScaleFields(obj: KObject, scale: ScaleConfig): FieldError[] {
  const errs: FieldError[] = [];
  for (const path of [scale.specReplicasPath, scale.statusReplicasPath]) {
    const { found, value } = getPath(obj, path);
    if (!found || value === null) continue;
    if ((typeof value !== 'number' && typeof value !== 'bigint') || !Number.isInteger(Number(value))) {
      // unstructured.NestedInt64's error, the value read as 0.
      errs.push(field.invalid(path, 0, `${path} accessor error: ${goValueText(value)} is of the type ${goTypeName(value)}, expected int64`));
    } else if (Number(value) < 0) {
      errs.push(field.invalid(path, value, 'should be a non-negative integer'));
    } else if (BigInt(value) > BigInt(MAX_INT32)) {
      errs.push(field.invalid(path, value, `should be less than or equal to ${MAX_INT32}`));
    }
  }
  if (scale.labelSelectorPath) {
    const { found, value } = getPath(obj, scale.labelSelectorPath);
    if (found && value !== null && typeof value !== 'string') errs.push(field.invalid(scale.labelSelectorPath, value, 'must be a string'));
  }
  return errs;
}

/** The Scale view of an object. */
export function toScale(obj: KObject, scale: ScaleConfig): KObject {
  const spec = getPath(obj, scale.specReplicasPath);
  const status = getPath(obj, scale.statusReplicasPath);
  const selector = scale.labelSelectorPath ? getPath(obj, scale.labelSelectorPath) : { found: false };
  const m = obj.metadata;
  const metadata: KObject = { name: m.name };
  if (m.namespace) metadata.namespace = m.namespace;
  metadata.uid = m.uid;
  metadata.resourceVersion = m.resourceVersion;
  metadata.creationTimestamp = m.creationTimestamp;
  const specReplicas = spec.found ? Number(spec.value) : 0;
  const result: KObject = { kind: 'Scale', apiVersion: 'autoscaling/v1', metadata, spec: specReplicas ? { replicas: specReplicas } : {} };
  result.status = { replicas: status.found && typeof status.value === 'number' ? status.value : 0 };
  if (selector.found && typeof selector.value === 'string' && selector.value) result.status.selector = selector.value;
  // A built-in workload's selector is a LabelSelector: its Scale carries it as text (LabelSelectorAsSelector).
  if (selector.found && selector.value && typeof selector.value === 'object') {
    try {
      // A ReplicationController's selector is a plain label map.
      const v = selector.value as Record<string, unknown>;
      const spec = 'matchLabels' in v || 'matchExpressions' in v ? (v as LabelSelectorSpec) : ({ matchLabels: v } as LabelSelectorSpec);
      const text = selectorFromLabelSelector(spec).toString();
      if (text) result.status.selector = text;
    } catch {
      // an invalid selector leaves the Scale without one
    }
  }
  return result;
}
