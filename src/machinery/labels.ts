/**
 * Label selectors with apimachinery's labels.Parse grammar, semantics and
 * error texts, plus metav1.LabelSelector conversion (LabelSelectorAsSelector)
 * and validation (ValidateLabelSelector, ValidateLabels).
 */
import { childPath, field, indexPath, type FieldError } from './field-errors.js';
import { goQuote } from './go-text.js';
import { parseRequirements } from './label-parser.js';
import { everything, LabelSelectorError, newRequirement, NOTHING, Selector, type LabelSelector, type Operator, type Requirement } from './label-requirements.js';
import { isQualifiedName, isValidLabelValue } from './validation.js';

export {
  everything,
  LabelSelectorError,
  newRequirement,
  nothing,
  selectorFromSet,
  type LabelSelector,
  type Labels,
  type Operator,
  type Requirement,
} from './label-requirements.js';

/** labels.Parse: throws LabelSelectorError with upstream's message on bad input. */
/** An object's labels as selectors read them: a plain object, else none (a stored value from elsewhere may hold anything). */
export function plainLabels(labels: unknown): Readonly<Record<string, string>> | undefined {
  return labels !== null && typeof labels === 'object' && !Array.isArray(labels) ? (labels as Record<string, string>) : undefined;
}

export function parseLabelSelector(s: string): LabelSelector {
  return new Selector(parseRequirements(s));
}

// ---- metav1.LabelSelector ----

/** metav1.LabelSelectorRequirement: a label key, an operator (In, NotIn, Exists, DoesNotExist) and values (In and NotIn only). */
export interface LabelSelectorRequirementSpec {
  key: string;
  operator: string;
  values?: string[];
}

/** metav1.LabelSelector: objects whose labels match every `matchLabels` pair and every expression (empty: all objects). */
export interface LabelSelectorSpec {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirementSpec[];
}

const METAV1_OPERATORS: Record<string, Operator> = { In: 'in', NotIn: 'notin', Exists: 'exists', DoesNotExist: '!' };

/**
 * metav1.LabelSelectorAsSelector: null/undefined selects nothing, an empty selector
 * everything. Throws LabelSelectorError with upstream's message for bad content.
 */
export function selectorFromLabelSelector(sel: LabelSelectorSpec | null | undefined): LabelSelector {
  if (sel == null) return NOTHING;
  const matchLabels = Object.entries(sel.matchLabels ?? {});
  const exprs = sel.matchExpressions ?? [];
  if (matchLabels.length + exprs.length === 0) return everything();
  const reqs: Requirement[] = [];
  for (const [k, v] of matchLabels) reqs.push(newRequirement(k, '=', [v]));
  for (const e of exprs) {
    const op = Object.prototype.hasOwnProperty.call(METAV1_OPERATORS, e.operator) ? METAV1_OPERATORS[e.operator] : undefined;
    if (!op) throw new LabelSelectorError(`${goQuote(String(e.operator))} is not a valid label selector operator`);
    reqs.push(newRequirement(e.key, op, [...(e.values ?? [])]));
  }
  return new Selector(reqs);
}

/** metav1 validation.ValidateLabelSelector (with default options). */
export function validateLabelSelector(sel: LabelSelectorSpec | null | undefined, path: string): FieldError[] {
  if (sel == null) return [];
  const errs = validateLabels(sel.matchLabels, childPath(path, 'matchLabels'));
  (sel.matchExpressions ?? []).forEach((e, i) => {
    const p = indexPath(childPath(path, 'matchExpressions'), i);
    const values = e.values ?? [];
    switch (e.operator) {
      case 'In':
      case 'NotIn':
        if (values.length === 0) errs.push(field.required(childPath(p, 'values'), "must be specified when `operator` is 'In' or 'NotIn'"));
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (values.length > 0) errs.push(field.forbidden(childPath(p, 'values'), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
        break;
      default:
        errs.push(field.invalid(childPath(p, 'operator'), e.operator, 'not a valid selector operator'));
    }
    errs.push(...validateLabelName(e.key, childPath(p, 'key')));
    values.forEach((v, j) => {
      for (const msg of isValidLabelValue(v)) errs.push(field.invalid(indexPath(childPath(p, 'values'), j), v, msg));
    });
  });
  return errs;
}

/** metav1 validation.ValidateLabelName */
export function validateLabelName(name: string, path: string): FieldError[] {
  return isQualifiedName(name).map((msg) => field.invalid(path, name, msg));
}

/** metav1 validation.ValidateLabels: keys are qualified names, values label values. */
export function validateLabels(labels: Record<string, string> | undefined | null, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!labels) return errs;
  for (const k of Object.keys(labels)) {
    const v = labels[k];
    for (const msg of isQualifiedName(k)) errs.push(field.invalid(path, k, msg));
    for (const msg of isValidLabelValue(v)) errs.push(field.invalid(path, v, msg));
  }
  return errs;
}
