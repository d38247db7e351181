/**
 * A webhook's matchConditions: CEL expressions over `object`, `oldObject` and `request` (the
 * AdmissionReview's request), all of which must be true for the webhook to be called, as upstream's
 * matchconditions matcher. Expressions are checked when a configuration is written (compile errors and
 * a result that is not bool are refused) and compiled once; each evaluation is metered at upstream's
 * per-call cost limit.
 */
import { field, type FieldError } from '../../machinery/field-errors.js';
import { isQualifiedName } from '../../machinery/validation.js';
import { CostLimitExceeded, metered, runtimeMessage } from '../../schema/cel/env.js';
import { celValue, compileExpression } from './matching.js';
import type { AuthorizerValue } from './cel-authorizer.js';

/** The cost all of one webhook's conditions may spend on one request (upstream's per-webhook budget). */
const CONDITIONS_BUDGET = 2_500_000;
import { records } from '../../util/json-object.js';

/** validateMatchConditions: named (qualified names, unique), each a bool expression that compiles. */
export function matchConditionErrors(conditions: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const list = records(conditions);
  if (list.length > 64) errs.push(field.tooMany(path, list.length, 64));
  const names = new Set<string>();
  list.forEach((c, i) => {
    const p = `${path}[${i}]`;
    const name = typeof c.name === 'string' ? c.name : '';
    if (!name) errs.push(field.required(`${p}.name`, ''));
    else {
      for (const msg of isQualifiedName(name)) errs.push(field.invalid(`${p}.name`, name, msg));
      if (names.has(name)) errs.push(field.duplicate(`${p}.name`, name));
      names.add(name);
    }
    const expression = typeof c.expression === 'string' ? c.expression : '';
    if (!expression.trim()) errs.push(field.required(`${p}.expression`, ''));
    else {
      const { type, error } = compileExpression(expression);
      if (error !== undefined) errs.push(field.invalid(`${p}.expression`, expression, error));
      else if (type !== 'bool' && type !== 'dyn') errs.push(field.invalid(`${p}.expression`, expression, 'must evaluate to bool'));
    }
  });
  return errs;
}

/**
 * Whether every condition holds: true, false (one does not: skip the webhook), or the error text of the
 * first that could not be evaluated (the failure policy decides).
 */
export function matchConditionsHold(conditions: unknown, vars: { object: unknown; oldObject: unknown; request: unknown; authorizer?: AuthorizerValue }): true | false | string {
  const list = records(conditions);
  if (list.length === 0) return true;
  const ctx = { object: celValue(vars.object ?? null), oldObject: celValue(vars.oldObject ?? null), request: celValue(vars.request), authorizer: vars.authorizer };
  let error: string | undefined;
  // One budget for all of a webhook's conditions; once it is spent, the rest are not evaluated.
  const run = metered(CONDITIONS_BUDGET, () => {
    for (const c of list) {
      const { program, error: issue } = compileExpression(String(c.expression ?? ''));
      if (!program) {
        error ??= `expression '${String(c.name)}' resulted in error: ${issue}`;
        continue;
      }
      let value: unknown;
      try {
        value = program(ctx);
      } catch (err) {
        if (err instanceof CostLimitExceeded) throw err;
        error ??= `expression '${String(c.name)}' resulted in error: ${runtimeMessage(err)}`;
        continue;
      }
      if (value === false) return false;
      if (value !== true) error ??= `expression '${String(c.name)}' resulted in error: must evaluate to bool`;
    }
    return true;
  });
  if (run.error !== undefined) return `${runtimeMessage(run.error)}`;
  if (run.value === false) return false;
  return error ?? true;
}
