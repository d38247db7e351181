/**
 * Label selector requirements as apimachinery's labels package models them:
 * construction with NewRequirement's validation and messages, matching,
 * and the canonical string form.
 */
import { aggregateMessage, childPath, field, indexPath, type FieldError } from './field-errors.js';
import { compareGoStrings } from './go-text.js';
import { isQualifiedName, isValidLabelValue } from './validation.js';

export type Operator = 'in' | 'notin' | '=' | '==' | '!=' | 'exists' | '!' | 'gt' | 'lt';

export interface Requirement {
  key: string;
  operator: Operator;
  values: string[];
}

export type Labels = Record<string, string> | undefined | null;

export interface LabelSelector {
  readonly requirements: readonly Requirement[];
  /** True when the selector does not restrict anything. */
  readonly empty: boolean;
  matches(labels: Labels): boolean;
  toString(): string;
}

export class LabelSelectorError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LabelSelectorError';
  }
}

export const BINARY_OPERATORS = ['in', 'notin', '=', '==', '!=', 'gt', 'lt'];
const ALL_OPERATORS = [...BINARY_OPERATORS, 'exists', '!'];

/**
 * labels.NewRequirement: validates key, operator and values, throwing the aggregated
 * field errors as upstream does (`key: Invalid value: ...`).
 */
export function newRequirement(key: string, operator: Operator, values: string[], path = ''): Requirement {
  const errs: FieldError[] = [];
  const keyErr = validateLabelKey(key, childPath(path, 'key'));
  if (keyErr) errs.push(keyErr);
  const valuePath = childPath(path, 'values');
  switch (operator) {
    case 'in':
    case 'notin':
      if (values.length === 0) errs.push(field.invalid(valuePath, values, "for 'in', 'notin' operators, values set can't be empty"));
      break;
    case '=':
    case '==':
    case '!=':
      if (values.length !== 1) errs.push(field.invalid(valuePath, values, 'exact-match compatibility requires one single value'));
      break;
    case 'exists':
    case '!':
      if (values.length !== 0) errs.push(field.invalid(valuePath, values, 'values set must be empty for exists and does not exist'));
      break;
    case 'gt':
    case 'lt':
      if (values.length !== 1) errs.push(field.invalid(valuePath, values, "for 'Gt', 'Lt' operators, exactly one value is required"));
      values.forEach((v, i) => {
        if (parseInt64(v) === undefined) errs.push(field.invalid(indexPath(valuePath, i), v, "for 'Gt', 'Lt' operators, the value must be an integer"));
      });
      break;
    default:
      errs.push(field.notSupported(childPath(path, 'operator'), operator, ALL_OPERATORS));
  }
  values.forEach((v, i) => {
    const msgs = isValidLabelValue(v);
    if (msgs.length) errs.push(field.invalid(`${indexPath(valuePath, i)}[${key}]`, v, msgs.join('; ')));
  });
  if (errs.length) throw new LabelSelectorError(aggregateMessage(errs));
  return { key, operator, values };
}

export function validateLabelKey(key: string, path: string): FieldError | undefined {
  const msgs = isQualifiedName(key);
  return msgs.length ? field.invalid(path, key, msgs.join('; ')) : undefined;
}

/** strconv.ParseInt(s, 10, 64) */
function parseInt64(s: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(s)) return undefined;
  const n = BigInt(s);
  return n > 9223372036854775807n || n < -9223372036854775808n ? undefined : n;
}

function requirementMatches(r: Requirement, labels: Labels): boolean {
  const has = labels != null && Object.prototype.hasOwnProperty.call(labels, r.key);
  const value = has ? labels[r.key] : undefined;
  switch (r.operator) {
    case 'in':
    case '=':
    case '==':
      return has && r.values.includes(value as string);
    case 'notin':
    case '!=':
      return !has || !r.values.includes(value as string);
    case 'exists':
      return has;
    case '!':
      return !has;
    case 'gt':
    case 'lt': {
      if (!has || r.values.length !== 1) return false;
      const l = parseInt64(value as string);
      const v = parseInt64(r.values[0]);
      if (l === undefined || v === undefined) return false;
      return r.operator === 'gt' ? l > v : l < v;
    }
  }
}

function requirementString(r: Requirement): string {
  if (r.operator === 'exists') return r.key;
  if (r.operator === '!') return '!' + r.key;
  const op = { in: ' in ', notin: ' notin ', '=': '=', '==': '==', '!=': '!=', gt: '>', lt: '<' }[r.operator];
  const values = r.values.length === 1 ? r.values[0] : [...r.values].sort(compareGoStrings).join(',');
  return r.operator === 'in' || r.operator === 'notin' ? `${r.key}${op}(${values})` : `${r.key}${op}${values}`;
}

export class Selector implements LabelSelector {
  readonly requirements: readonly Requirement[];

  constructor(requirements: Requirement[]) {
    // Stable sort by key, as upstream sorts requirements for a deterministic form.
    this.requirements = [...requirements].sort((a, b) => compareGoStrings(a.key, b.key));
  }

  get empty(): boolean {
    return this.requirements.length === 0;
  }

  matches(labels: Labels): boolean {
    return this.requirements.every((r) => requirementMatches(r, labels));
  }

  toString(): string {
    return this.requirements.map(requirementString).join(',');
  }
}

export const NOTHING: LabelSelector = {
  requirements: [],
  empty: false,
  matches: () => false,
  toString: () => '',
};

export function everything(): LabelSelector {
  return new Selector([]);
}

export function nothing(): LabelSelector {
  return NOTHING;
}

/** A selector requiring exactly these labels (labels.SelectorFromSet). */
export function selectorFromSet(set: Record<string, string> | undefined): LabelSelector {
  return new Selector(Object.entries(set ?? {}).map(([key, v]) => ({ key, operator: '=', values: [v] })));
}
