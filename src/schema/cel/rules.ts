/**
 * Compilation of x-kubernetes-validations: every rule (and messageExpression) is
 * type-checked once, against the CEL type of its schema node, with upstream's
 * compile errors ("compilation failed: ERROR: <input>:1:14: undefined field
 * 'labels'", "cel expression must evaluate to a bool", "oldSelf cannot be used on
 * the uncorrelatable portion of the schema within ..."). The result is a tree of
 * nodes with rules, mirroring upstream's cel.Validator.
 *
 * For CRD validation (estimateCost), each rule's static cost is estimated too
 * (cost.ts) and multiplied by the number of times the rule may run: the product of
 * maxItems/maxProperties of the lists and maps above it, or, below an unbounded one,
 * as many values of the node's smallest size as fit in a request. Rules over
 * StaticEstimatedCostLimit and schemas whose rules add up to more than
 * StaticEstimatedCRDCostLimit are refused with upstream's Forbidden errors
 * (apiextensions validation.go and cel_validation.go).
 */
import type { Environment } from '@marcbachmann/cel-js';
import { childPath, fe, indexPath, keyPath, type FieldError } from '../errors.js';
import type { Structural, ValidationRule } from '../types.js';
import {
  costErrorMessage,
  estimateCost,
  MAX_UINT64,
  maxCardinality,
  multiplyWithOverflowGuard,
  STATIC_ESTIMATED_COST_LIMIT,
  STATIC_ESTIMATED_CRD_COST_LIMIT,
} from './cost.js';
import { declOf, objectsEqual, type Decl, type TypeRegistry } from './decl.js';
import { baseEnvironment, formatIssue, rewriteSource } from './env.js';
import { validFieldPath } from './fieldpath.js';

type Program = ((ctx?: Record<string, unknown>) => unknown) & { check(): { valid: boolean; type?: string; error?: unknown }; ast: unknown };

export interface CompiledRule {
  rule: ValidationRule;
  program?: Program;
  /** "compilation failed: ..." and the like */
  error?: string;
  usesOldSelf: boolean;
  message?: Program;
  messageError?: string;
  /** NormalizedRuleFieldPath */
  fieldPath: string;
  /** With estimateCost: the estimated worst-case cost of one evaluation of the rule and of its messageExpression. */
  maxCost?: number;
  messageMaxCost?: number;
}

export interface CompileOptions {
  /** Estimate the rules' costs and report those over the limits (CRD validation). */
  estimateCost?: boolean;
  /** The schema is unchanged by an update: only the total is limited, not single expressions. */
  suppressPerExpressionCost?: boolean;
}

export interface CelNode {
  schema: Structural;
  isResourceRoot: boolean;
  decl: Decl | undefined;
  rules: CompiledRule[];
  /** The node has rules but no CEL type (upstream's "failed to convert to declType"). */
  noDecl: boolean;
  items?: CelNode;
  properties?: Map<string, CelNode>;
  additionalProperties?: CelNode;
}

export interface CelCompilation {
  root: CelNode | undefined;
  /** Errors for CRD validation, with paths relative to the schema (prefix them with the schema's path). */
  errors: { relPath: string; error: (schemaPath: string) => FieldError }[];
}

let registryCounter = 0;

export function hasRules(s: Structural | undefined): boolean {
  if (!s) return false;
  if (s.xValidations?.length) return true;
  if (hasRules(s.items) || hasRules(s.additionalProperties?.schema)) return true;
  for (const p of s.properties?.values() ?? []) if (hasRules(p)) return true;
  return false;
}

interface Pending {
  node: CelNode;
  relPath: string;
  uncorrelatable: string | undefined;
  /** How often the rules may run: the product of the bounds of the lists and maps above; undefined when one is unbounded. */
  cardinality: number | undefined;
}

/** extractMaxElements: how many times a node's children may occur per occurrence of the node; undefined for unbounded. */
function maxElementsOf(s: Structural): number | undefined {
  const zeroIfNegative = (n: number): number => (n < 0 ? 0 : n);
  switch (s.type) {
    case 'object':
      if (s.additionalProperties === undefined) return 1;
      return s.valueValidation.maxProperties === undefined ? undefined : zeroIfNegative(s.valueValidation.maxProperties);
    case 'array':
      return s.valueValidation.maxItems === undefined ? undefined : zeroIfNegative(s.valueValidation.maxItems);
  }
  return 1;
}

/** TotalCost: the rules' costs added up for a whole schema, and the most expensive ones. */
class TotalCost {
  total = 0;
  mostExpensive: { relPath: string; cost: number }[] = [];

  observe(relPath: string, cost: number): void {
    this.total = Math.min(MAX_UINT64, this.total + cost);
    // rules under 1% of the limit are not named
    if (cost < STATIC_ESTIMATED_CRD_COST_LIMIT / 100) return;
    this.mostExpensive.push({ relPath, cost });
    this.mostExpensive.sort((a, b) => b.cost - a.cost);
    if (this.mostExpensive.length > 4) this.mostExpensive.length = 4;
  }
}

/** Compiles all rules of a structural schema (the root of a resource). */
export function compileRules(root: Structural, isResourceRoot = true, opts: CompileOptions = {}): CelCompilation {
  const out: CelCompilation = { root: undefined, errors: [] };
  if (!hasRules(root)) return out;
  const reg: TypeRegistry = { objects: [], next: 0, prefix: `selfType${++registryCounter}_` };
  const memo = new Map<Structural, Map<boolean, Decl | undefined>>();
  const decl = (s: Structural, isRoot: boolean): Decl | undefined => {
    let m = memo.get(s);
    if (!m) memo.set(s, (m = new Map()));
    if (!m.has(isRoot)) m.set(isRoot, declOf(s, isRoot, reg));
    return m.get(isRoot);
  };
  const pending: Pending[] = [];
  const build = (s: Structural, isRoot: boolean, relPath: string, uncorrelatable: string | undefined, cardinality: number | undefined): CelNode | undefined => {
    if (!hasRules(s)) return undefined;
    const node: CelNode = { schema: s, isResourceRoot: isRoot, decl: undefined, rules: [], noDecl: false };
    if (s.xValidations?.length) {
      node.decl = decl(s, isRoot);
      node.noDecl = !node.decl;
      pending.push({ node, relPath, uncorrelatable, cardinality });
    }
    const factor = maxElementsOf(s);
    const childCardinality = cardinality === undefined || factor === undefined ? undefined : multiplyWithOverflowGuard(cardinality, factor);
    if (s.items) {
      const un = uncorrelatable ?? (s.listType !== 'map' ? relPath : undefined);
      node.items = build(s.items, s.items.embeddedResource, childPath(relPath, 'items'), un, childCardinality);
    }
    for (const [k, p] of s.properties ?? []) {
      const child = build(p, p.embeddedResource, keyPath(childPath(relPath, 'properties'), k), uncorrelatable, childCardinality);
      if (child) (node.properties ??= new Map()).set(k, child);
    }
    const ap = s.additionalProperties?.schema;
    if (ap) node.additionalProperties = build(ap, ap.embeddedResource, childPath(relPath, 'additionalProperties'), uncorrelatable, childCardinality);
    return node;
  };
  out.root = build(root, isResourceRoot, '', undefined, 1);

  // All object types first: cloning an environment freezes it.
  const env = baseEnvironment().clone();
  for (const d of reg.objects) {
    env.registerType(d.name, { ctor: d.cls as new (...a: unknown[]) => unknown, fields: Object.fromEntries([...(d.fields ?? [])].map(([n, f]) => [n, f.decl.name])) });
  }
  for (const d of reg.objects) {
    env.registerOperator(`${d.name} == ${d.name}`, objectsEqual);
  }
  const total = opts.estimateCost ? new TotalCost() : undefined;
  for (const p of pending) compileNode(env, p, out.errors, total && { total, suppressPerExpressionCost: opts.suppressPerExpressionCost === true });
  if (total && total.total > STATIC_ESTIMATED_CRD_COST_LIMIT) {
    for (const { relPath } of total.mostExpensive) {
      out.errors.push({ relPath, error: (sp) => fe.forbidden(sp, 'contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema') });
    }
    const detail = costErrorMessage('x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema', total.total, STATIC_ESTIMATED_CRD_COST_LIMIT);
    out.errors.push({ relPath: '', error: (sp) => fe.forbidden(sp, detail) });
  }
  return out;
}

interface CostContext {
  total: TotalCost;
  suppressPerExpressionCost: boolean;
}

function ruleValue(r: ValidationRule): Record<string, unknown> {
  const v: Record<string, unknown> = { rule: r.rule ?? '' };
  if (r.message) v.message = r.message;
  if (r.messageExpression) v.messageExpression = r.messageExpression;
  if (r.reason) v.reason = r.reason;
  if (r.fieldPath) v.fieldPath = r.fieldPath;
  if (r.optionalOldSelf !== undefined && r.optionalOldSelf !== null) v.optionalOldSelf = r.optionalOldSelf;
  return v;
}

function compileNode(schemaEnv: Environment, p: Pending, errors: CelCompilation['errors'], costs: CostContext | undefined): void {
  const { node, relPath } = p;
  const rules = node.schema.xValidations ?? [];
  const vpath = (i: number, leaf: string): string => childPath(indexPath(childPath(relPath, 'x-kubernetes-validations'), i), leaf);
  if (!node.decl) {
    errors.push({ relPath: childPath(relPath, 'x-kubernetes-validations'), error: (sp) => fe.internal(sp, 'internal error: failed to retrieve type information for x-kubernetes-validations') });
    node.rules = rules.map((rule) => ({ rule, usesOldSelf: false, fieldPath: '', error: 'failed to convert to declType for CEL validation rules' }));
    return;
  }
  let env: Environment | undefined;
  let optEnv: Environment | undefined;
  const envFor = (optional: boolean): Environment => {
    if (optional) {
      optEnv ??= schemaEnv.clone().registerVariable('self', (node.decl as Decl).name).registerVariable('oldSelf', `optional<${(node.decl as Decl).name}>`);
      return optEnv;
    }
    env ??= schemaEnv.clone().registerVariable('self', (node.decl as Decl).name).registerVariable('oldSelf', (node.decl as Decl).name);
    return env;
  };
  rules.forEach((rule, i) => {
    const c: CompiledRule = { rule, usesOldSelf: false, fieldPath: '' };
    node.rules.push(c);
    const text = typeof rule.rule === 'string' ? rule.rule : '';
    if (text.trim() === '') return;
    const e = envFor(rule.optionalOldSelf === true);
    const { src, idents } = rewriteSource(text);
    const compiled = compile(e, src, text, 'bool');
    if (typeof compiled === 'string') {
      c.error = compiled === 'type' ? 'cel expression must evaluate to a bool' : `compilation failed: ${compiled}`;
      const detail = c.error;
      errors.push({ relPath: vpath(i, 'rule'), error: (sp) => fe.invalid(sp, ruleValue(rule), detail) });
      return;
    }
    c.program = compiled;
    c.usesOldSelf = idents.has('oldSelf');
    const decl = node.decl as Decl;
    if (costs) {
      c.maxCost = estimateCost(compiled.ast, decl).max;
      // getExpressionCost: times the bounded cardinality, or as often as the node's smallest value fits in a request
      const cost = multiplyWithOverflowGuard(c.maxCost, p.cardinality ?? maxCardinality(decl.minSize));
      if (!costs.suppressPerExpressionCost && cost > STATIC_ESTIMATED_COST_LIMIT) {
        const detail = costErrorMessage('estimated rule cost', cost, STATIC_ESTIMATED_COST_LIMIT);
        errors.push({ relPath: vpath(i, 'rule'), error: (sp) => fe.forbidden(sp, detail) });
      }
      costs.total.observe(vpath(i, 'rule'), cost);
    }
    if (typeof rule.messageExpression === 'string' && rule.messageExpression !== '') {
      const m = rewriteSource(rule.messageExpression);
      const mc = compile(e, m.src, rule.messageExpression, 'string');
      if (typeof mc === 'string') {
        c.messageError = mc === 'type' ? 'messageExpression must evaluate to a string' : `messageExpression compilation failed: ${mc}`;
        const detail = c.messageError;
        errors.push({ relPath: vpath(i, 'messageExpression'), error: (sp) => fe.invalid(sp, ruleValue(rule), detail) });
      } else {
        c.message = mc;
        if (costs) {
          // (upstream does not multiply a messageExpression's cost by the cardinality)
          const cost = (c.messageMaxCost = estimateCost(mc.ast, decl).max);
          if (!costs.suppressPerExpressionCost && cost > STATIC_ESTIMATED_COST_LIMIT) {
            const detail = costErrorMessage('estimated messageExpression cost', cost, STATIC_ESTIMATED_COST_LIMIT);
            errors.push({ relPath: vpath(i, 'messageExpression'), error: (sp) => fe.forbidden(sp, detail) });
          }
          costs.total.observe(vpath(i, 'messageExpression'), cost);
        }
      }
    }
    if (rule.fieldPath) {
      const fp = validFieldPath(rule.fieldPath, node.schema);
      if (!(fp instanceof Error)) c.fieldPath = fp.path;
    }
    if (c.usesOldSelf && p.uncorrelatable !== undefined) {
      const un = p.uncorrelatable;
      errors.push({
        relPath: vpath(i, 'rule'),
        error: (sp) => fe.invalid(sp, text, `oldSelf cannot be used on the uncorrelatable portion of the schema within ${schemaPathOf(sp, relPath, un)}`),
      });
    } else if (!c.usesOldSelf && rule.optionalOldSelf !== undefined && rule.optionalOldSelf !== null) {
      errors.push({ relPath: vpath(i, 'optionalOldSelf'), error: (sp) => fe.invalid(sp, rule.optionalOldSelf, 'may not be set if oldSelf is not used in rule') });
    }
  });
}

/** The CRD path of the uncorrelatable list, from the path of the error inside the same schema. */
function schemaPathOf(errorPath: string, relPath: string, uncorrelatable: string): string {
  const suffix = `${relPath ? '.' + relPath : ''}`;
  const rulePart = errorPath.lastIndexOf('.x-kubernetes-validations[');
  const nodePath = errorPath.slice(0, rulePart);
  const schemaRoot = suffix && nodePath.endsWith(suffix) ? nodePath.slice(0, nodePath.length - suffix.length) : nodePath;
  return uncorrelatable ? `${schemaRoot}.${uncorrelatable}` : schemaRoot;
}

/** A checked program, or the issues text ('type' when the result type is wrong). */
function compile(env: Environment, src: string, original: string, want: 'bool' | 'string'): Program | string {
  let prog: Program;
  try {
    prog = env.parse(src) as unknown as Program;
  } catch (e) {
    return formatIssue(original, e);
  }
  const r = prog.check();
  if (!r.valid) return formatIssue(original, r.error);
  if (r.type !== want) return 'type';
  return prog;
}
