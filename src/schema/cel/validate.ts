/**
 * Evaluation of x-kubernetes-validations on an object (cel.Validator.Validate):
 * rules run at their node with `self` (and `oldSelf` on updates, for transition
 * rules), each call limited to PER_CALL_LIMIT cost units and the request to a
 * shared budget, with upstream's error texts; failures of unchanged nodes are
 * ratcheted unless the rule uses oldSelf.
 */
import { Optional } from '@marcbachmann/cel-js';
import { childPath, fe, OMIT_VALUE, type FieldError } from '../errors.js';
import type { Correlation } from '../correlation.js';
import { MapList } from '../correlation.js';
import { isObject } from '../values.js';
import { CostLimitExceeded, metered, PER_CALL_LIMIT, runtimeMessage } from './env.js';
import type { CelNode, CompiledRule } from './rules.js';

const MAX_MESSAGE_BYTES = 5 * 1024;
const OUT_OF_BUDGET = 'validation failed due to running out of cost budget, no further validation rules will be run';

/** Ratcheting state: the node's correlation, and its nearest parent's. */
interface Ratchet {
  current?: Correlation;
  parent?: Correlation;
}

const shouldRatchet = (r: Ratchet): boolean => (r.current ? r.current.unchanged() : (r.parent?.unchanged() ?? false));

function ratchetKey(r: Ratchet, field: string): Ratchet {
  if (!r.current) return r;
  if (!r.parent && (field === 'apiVersion' || field === 'kind')) return {};
  return { current: r.current.key(field), parent: r.current };
}

function ratchetIndex(r: Ratchet, i: number): Ratchet {
  if (!r.current) return r;
  return { current: r.current.index(i), parent: r.current };
}

interface State {
  errs: FieldError[];
  budget: number;
}

/** Validates obj (and, on update, oldObj) against the rules; returns errors and the budget left. */
export function validateRules(
  root: CelNode | undefined,
  obj: unknown,
  oldObj: unknown,
  budget: number,
  correlation?: Correlation,
  basePath = '',
): { errors: FieldError[]; remaining: number } {
  const st: State = { errs: [], budget };
  if (root) validateNode(root, basePath, obj, oldObj, correlation ? { current: correlation } : {}, st);
  return { errors: st.errs, remaining: st.budget };
}

function validateNode(n: CelNode, path: string, obj: unknown, old: unknown, r: Ratchet, st: State): void {
  if (obj === null || obj === undefined) return;
  if (n.rules.length) {
    expressions(n, path, obj, old, r, st);
    if (st.budget < 0) return;
  }
  if (Array.isArray(obj)) {
    if (!n.items) return;
    const olds = Array.isArray(old) ? new MapList(n.schema, old) : undefined;
    for (let i = 0; i < obj.length; i++) {
      validateNode(n.items, `${path}[${i}]`, obj[i], olds?.get(obj[i]), ratchetIndex(r, i), st);
      if (st.budget < 0) return;
    }
  } else if (isObject(obj)) {
    const oldMap = isObject(old) ? old : undefined;
    const mapType = n.schema.mapType;
    const correlatable = mapType === undefined || mapType === 'granular' || mapType === 'atomic';
    if (n.additionalProperties) {
      for (const k of Object.keys(obj)) {
        validateNode(n.additionalProperties, `${path}[${k}]`, obj[k], correlatable ? oldMap?.[k] : undefined, ratchetKey(r, k), st);
        if (st.budget < 0) return;
      }
    }
    if (n.properties) {
      for (const k of Object.keys(obj)) {
        const sub = n.properties.get(k);
        if (!sub) continue;
        validateNode(sub, childPath(path, k), obj[k], correlatable ? oldMap?.[k] : undefined, ratchetKey(r, k), st);
        if (st.budget < 0) return;
      }
    }
  }
}

function ruleErrorString(c: CompiledRule): string {
  return c.rule.message ? c.rule.message.trim() : (c.rule.rule ?? '').trim();
}

function expressions(n: CelNode, path: string, obj: unknown, old: unknown, r: Ratchet, st: State): void {
  const type = n.schema.type;
  if (n.noDecl) {
    st.errs.push(fe.invalid(path, type, 'rule compiler initialization error: failed to convert to declType for CEL validation rules'));
    return;
  }
  if (st.budget <= 0) {
    st.errs.push(fe.invalid(path, type, OUT_OF_BUDGET));
    st.budget = -1;
    return;
  }
  const decl = n.decl;
  if (!decl) return;
  const hasOld = old !== null && old !== undefined;
  const self = decl.convert(obj);
  let oldSelf: unknown;
  const oldSelfValue = (): unknown => (oldSelf ??= decl.convert(old));
  for (const c of n.rules) {
    if (c.error) {
      st.errs.push(fe.invalid(path, type, `rule compile error: ${c.error}`));
      continue;
    }
    if (!c.program) continue;
    const optional = c.rule.optionalOldSelf === true;
    if (c.usesOldSelf && !hasOld && !optional) continue;
    const vars: Record<string, unknown> = { self };
    if (c.usesOldSelf) vars.oldSelf = optional ? (hasOld ? Optional.of(oldSelfValue()) : Optional.none()) : oldSelfValue();
    const prog = c.program;
    const res = metered(PER_CALL_LIMIT, () => prog(vars));
    if (res.cost > st.budget) {
      st.errs.push(fe.invalid(path, type, OUT_OF_BUDGET));
      st.budget = -1;
      return;
    }
    st.budget -= res.cost;
    if (res.error !== undefined || res.cost > PER_CALL_LIMIT) {
      if (res.error instanceof CostLimitExceeded || res.cost > PER_CALL_LIMIT) {
        st.errs.push(fe.invalid(path, type, `'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: ${ruleErrorString(c)}`));
        st.budget = -1;
        return;
      }
      const msg = runtimeMessage(res.error);
      if (/^no such overload|no matching overload/.test(msg)) {
        st.errs.push(fe.invalid(path, type, `'${msg}': call arguments did not match a supported operator, function or macro signature for rule: ${ruleErrorString(c)}`));
      } else st.errs.push(fe.invalid(path, type, `${msg} evaluating rule: ${ruleErrorString(c)}`));
      continue;
    }
    if (res.value === true) continue;
    const errPath = c.fieldPath ? childPath(path, c.fieldPath) : path;
    let detail: string | undefined;
    if (c.message) {
      const msgProg = c.message;
      const m = metered(PER_CALL_LIMIT, () => msgProg({ self, ...(hasOld && c.usesOldSelf ? { oldSelf: oldSelfValue() } : {}) }));
      if (m.cost > st.budget) {
        addError(c, r, st, fe.invalid(errPath, type, 'messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run'));
        st.budget = -1;
        return;
      }
      if (m.error instanceof CostLimitExceeded || m.cost > PER_CALL_LIMIT) {
        addError(c, r, st, fe.invalid(errPath, type, `no further validation rules will be run due to call cost exceeds limit for messageExpression: ${JSON.stringify(c.rule.messageExpression)}`));
        st.budget = -1;
        return;
      }
      st.budget -= m.cost;
      if (m.error === undefined && typeof m.value === 'string') {
        const text = m.value.trim();
        if (text !== '' && Buffer.byteLength(text) <= MAX_MESSAGE_BYTES && !text.includes('\n')) detail = text;
      }
    }
    detail ??= c.rule.message ? c.rule.message.trim() : `failed rule: ${ruleErrorString(c)}`;
    const value = type === 'object' || type === 'array' ? OMIT_VALUE : obj;
    addError(c, r, st, errorForReason(errPath, value, detail, c.rule.reason));
  }
}

function addError(c: CompiledRule, r: Ratchet, st: State, e: FieldError): void {
  if (!c.usesOldSelf && shouldRatchet(r)) return;
  st.errs.push(e);
}

function errorForReason(path: string, value: unknown, detail: string, reason: string | undefined): FieldError {
  switch (reason) {
    case 'FieldValueForbidden':
      return fe.forbidden(path, detail);
    case 'FieldValueRequired':
      return fe.required(path, detail);
    case 'FieldValueDuplicate':
      return fe.duplicate(path, value);
    default:
      return fe.invalid(path, value, detail);
  }
}
