/**
 * ValidateDefaults (B-12): every `default` in a CRD schema must be pruned (no
 * fields its schema drops), validate against its schema (OpenAPI and CEL rules)
 * and, inside the metadata of a resource, result in valid metadata when placed in
 * a surrounding object ("must result in valid metadata: ...").
 */
import { aggregateMessage, fieldErrorString } from '../machinery/field-errors.js';
import { childPath, fe, keyPath, type FieldError } from './errors.js';
import { compileRules } from './cel/rules.js';
import { validateRules } from './cel/validate.js';
import { RUNTIME_CEL_COST_BUDGET } from './cel/env.js';
import { coerceEmbedded, coerceMetadata, validateEmbeddedResources } from './objectmeta.js';
import { pruneObject } from './prune.js';
import { Budget, BudgetExceeded } from './regex/index.js';
import { HAS_EMBEDDED, type Structural } from './types.js';
import { compileValidator } from './validate/compile.js';
import { toFieldErrors, type VErr } from './validate/result.js';
import { append, isObject, jsonClone, jsonEqual, type JsonObject } from './values.js';

type Step = { key: string } | { index: true };

const META = new Set(['metadata', 'apiVersion', 'kind']);

function surround(steps: Step[], value: unknown): unknown {
  let v = value;
  for (let i = steps.length - 1; i >= 0; i--) {
    const st = steps[i];
    v = 'key' in st ? { [st.key]: v } : [v];
  }
  return v;
}

/** RootObjectFunc().WithTypeMeta(validation/v1 Validation) applied to a surrounded value. */
function withTypeMeta(v: unknown): JsonObject | undefined {
  if (!isObject(v)) return undefined;
  if (!Object.prototype.hasOwnProperty.call(v, 'kind')) v.kind = 'Validation';
  if (!Object.prototype.hasOwnProperty.call(v, 'apiVersion')) v.apiVersion = 'validation/v1';
  return v;
}

interface Ctx {
  requirePruned: boolean;
  celBudget: number;
  errs: FieldError[];
}

/** Validates the defaults below s (a resource root); path is the schema's path. */
export function validateDefaults(path: string, s: Structural, requirePrunedDefaults: boolean): FieldError[] {
  const root = s.embeddedResource ? s : { ...s, embeddedResource: true, subtree: s.subtree | HAS_EMBEDDED };
  const cx: Ctx = { requirePruned: requirePrunedDefaults, celBudget: RUNTIME_CEL_COST_BUDGET, errs: [] };
  walk(path, root, root, [], false, cx);
  return cx.errs;
}

function openAPIErrors(s: Structural, value: unknown, path: string): FieldError[] {
  const errs: VErr[] = [];
  try {
    compileValidator(s.raw)(value, '', { errs, budget: new Budget(5_000_000) }, undefined);
  } catch (e) {
    if (!(e instanceof BudgetExceeded)) throw e;
  }
  return toFieldErrors(errs, path);
}

function celErrors(s: Structural, isResourceRoot: boolean, value: unknown, path: string, cx: Ctx): FieldError[] {
  const comp = compileRules(s, isResourceRoot);
  if (!comp.root) return [];
  const first = validateRules(comp.root, value, value, cx.celBudget, undefined, path);
  let remaining = first.remaining;
  const errs = [...first.errors];
  if (!errs.length) {
    const second = validateRules(comp.root, value, undefined, cx.celBudget, undefined, path);
    append(errs, second.errors);
    remaining = Math.min(remaining, second.remaining);
  }
  cx.celBudget = remaining;
  return errs;
}

function walk(path: string, s: Structural, root: Structural, steps: Step[], insideMeta: boolean, cx: Ctx): void {
  if (cx.celBudget < 0) return;
  if (s.embeddedResource) {
    insideMeta = false;
    root = s;
    steps = [];
  }
  const isResourceRoot = s === root;
  if (s.hasDefault) {
    const dpath = childPath(path, 'default');
    const def = s.default;
    if (insideMeta) {
      const obj = withTypeMeta(surround(steps, jsonClone(def)));
      if (obj) {
        const rootSchema = root.embeddedResource ? root : { ...root, embeddedResource: true, subtree: root.subtree | HAS_EMBEDDED };
        const coerceErr = coerceEmbedded('', obj, rootSchema, undefined, false);
        const metaErrs = coerceErr ? [] : validateEmbeddedResources('', obj, rootSchema);
        if (coerceErr) cx.errs.push(fe.invalid(dpath, def, `must result in valid metadata: ${fieldErrorString(coerceErr)}`));
        else if (metaErrs.length) cx.errs.push(fe.invalid(dpath, def, `must result in valid metadata: ${aggregateMessage(metaErrs)}`));
        else {
          const oerrs = openAPIErrors(s, def, dpath);
          if (oerrs.length) append(cx.errs, oerrs);
          else append(cx.errs, celErrors(s, isResourceRoot, def, dpath, cx));
        }
      }
    } else {
      if (cx.requirePruned) {
        const pruned = jsonClone(def);
        pruneObject(pruned, s, s.embeddedResource, false);
        if (!jsonEqual(pruned, def)) cx.errs.push(fe.invalid(dpath, def, 'must not have unknown fields'));
      }
      const copy = jsonClone(def);
      const coerceErr = s.embeddedResource && isObject(copy) ? coerceMetadata(copy, '', undefined, false, false) : undefined;
      const embeddedErr = coerceErr ? undefined : coerceEmbedded(dpath, copy, s, undefined, false);
      if (coerceErr) cx.errs.push(fe.invalid(childPath(dpath, 'metadata'), (def as JsonObject).metadata, coerceErr));
      else if (embeddedErr) cx.errs.push(embeddedErr);
      else {
        const metaErrs = validateEmbeddedResources(dpath, def, s);
        if (metaErrs.length) append(cx.errs, metaErrs);
        else {
          const oerrs = openAPIErrors(s, def, dpath);
          if (oerrs.length) append(cx.errs, oerrs);
          else append(cx.errs, celErrors(s, isResourceRoot, def, dpath, cx));
        }
      }
    }
  }
  if (s.items) walk(childPath(path, 'items'), s.items, root, [...steps, { index: true }], insideMeta, cx);
  for (const [k, p] of s.properties ?? []) {
    const subInsideMeta = insideMeta || (s.embeddedResource && META.has(k));
    walk(keyPath(childPath(path, 'properties'), k), p, root, [...steps, { key: k }], subInsideMeta, cx);
  }
}
