/**
 * The static cost estimate of a CEL expression, as kube-apiserver computes it when a CRD is
 * written: cel-go's checker.Cost over the type-checked expression (google/cel-go checker/cost.go),
 * with Kubernetes' library.CostEstimator (apiserver pkg/cel/library/cost.go) for the library
 * functions, the estimators of the cel-go extensions Kubernetes enables (ext/lists.go, ext/sets.go),
 * has() free of charge (environment/base.go: PresenceTestHasCost(false)), and the sizes of the
 * schema's values from their declared maxLength, maxItems and maxProperties or, when unbounded,
 * from the request size limit (sizeEstimator in apiextensions' schema/cel/compilation.go).
 *
 * The walk runs over the surface syntax tree of @marcbachmann/cel-js and models cel-go's macro
 * expansions (all, exists, exists_one, map, filter, cel.bind) by their known shape. It visits
 * every node once, with an explicit stack instead of recursion, so any expression the parser
 * accepts (whose size its maxAstNodes limit bounds) is estimated in linear time.
 *
 * Costs and sizes are uint64 in cel-go; here they are doubles saturating at 2^64 (math.MaxUint64
 * as a float64), exact below 2^53, far above any limit that is compared with them.
 */
import { MAP_KEY_DECL, MAX_REQUEST_SIZE_BYTES, type Decl } from './decl.js';
import { MATCHES_ALIAS } from './library.js';

/** math.MaxUint64 */
export const MAX_UINT64 = 2 ** 64;

/** apiextensions validation: StaticEstimatedCostLimit and StaticEstimatedCRDCostLimit. */
export const STATIC_ESTIMATED_COST_LIMIT = 10_000_000;
export const STATIC_ESTIMATED_CRD_COST_LIMIT = 100_000_000;

/** A range of sizes (checker.SizeEstimate) or of costs (checker.CostEstimate). */
export interface Estimate {
  min: number;
  max: number;
}

// common/cost.go
const SELECT_AND_IDENT_COST = 1;
const LIST_CREATE_BASE_COST = 10;
const MAP_CREATE_BASE_COST = 30;
const STRING_TRAVERSAL_COST_FACTOR = 0.1;
const REGEX_STRING_LENGTH_COST_FACTOR = 0.25;

const addU = (x: number, y: number): number => Math.min(MAX_UINT64, x + y);
const mulU = (x: number, y: number): number => (x === 0 || y === 0 ? 0 : Math.min(MAX_UINT64, x * y));
function byFactorU(x: number, f: number): number {
  if (x > 0 && f > 0 && x > MAX_UINT64 / f) return MAX_UINT64;
  return Math.min(MAX_UINT64, Math.ceil(x * f));
}

const fixed = (n: number): Estimate => ({ min: n, max: n });
const ZERO: Estimate = fixed(0);
const UNKNOWN: Estimate = { min: 0, max: MAX_UINT64 };
const add = (a: Estimate, b: Estimate): Estimate => ({ min: addU(a.min, b.min), max: addU(a.max, b.max) });
const mul = (a: Estimate, b: Estimate): Estimate => ({ min: mulU(a.min, b.min), max: mulU(a.max, b.max) });
const byFactor = (a: Estimate, f: number): Estimate => ({ min: byFactorU(a.min, f), max: byFactorU(a.max, f) });
const union = (a: Estimate, b: Estimate): Estimate => ({ min: Math.min(a.min, b.min), max: Math.max(a.max, b.max) });
const sum = (xs: Estimate[]): Estimate => xs.reduce(add, ZERO);

/** multiplyWithOverflowGuard of apiextensions validation. */
export function multiplyWithOverflowGuard(base: number, cardinality: number): number {
  if (base === 0) return 0;
  return Math.min(MAX_UINT64, base * cardinality);
}

/**
 * The number of times data of the given minimum size fits in a request (compilation.go
 * maxCardinality): the cardinality of a rule below lists or maps without maxItems/maxProperties.
 */
export function maxCardinality(minSize: number): number {
  return Math.floor(MAX_REQUEST_SIZE_BYTES / (minSize + 1));
}

/** Go's strconv formatting of %.<d>f: exact ties round to even, where JavaScript rounds them up. */
function goFixed(x: number, digits: number): string {
  const tie = x * 2 ** (digits + 1);
  if (Number.isInteger(tie) && tie % 2 === 1) {
    const scaled = Math.round(x * 10 ** digits);
    const even = scaled % 2 === 0 ? scaled : scaled - 1;
    return (even / 10 ** digits).toFixed(digits);
  }
  return x.toFixed(digits);
}

/** getCostErrorMessage of apiextensions validation. */
export function costErrorMessage(costName: string, cost: number, limit: number): string {
  const f = cost / limit;
  const factor = f > 100 ? 'more than 100x' : f < 1.5 ? `${goFixed(f, 6)}x` : `${goFixed(f, 1)}x`;
  return `${costName} exceeds budget by factor of ${factor} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`;
}

/** The parts of @marcbachmann/cel-js's AST nodes and types the estimator reads. */
interface CelType {
  kind: string;
  name: string;
  valueType?: CelType;
  keyType?: CelType;
}
interface Node {
  op: string;
  args: unknown;
  checkedType?: CelType;
  meta?: { alternate?: Node; macro?: unknown };
}

/** cel-go's type kinds, as far as costs tell them apart. */
type Kind = 'bool' | 'int' | 'uint' | 'double' | 'string' | 'bytes' | 'null' | 'type' | 'timestamp' | 'duration' | 'list' | 'map' | 'struct' | 'opaque' | 'optional' | 'dyn' | 'unknown';

interface TypeInfo {
  kind: Kind;
  /** cel-js's type name (e.g. kubernetes.Quantity) */
  name: string;
  /** list and optional: the element type */
  elem?: TypeInfo;
}

const DYN: TypeInfo = { kind: 'dyn', name: 'dyn' };
const UNKNOWN_TYPE: TypeInfo = { kind: 'unknown', name: '' };
const OPAQUE = new Set(['net.IP', 'net.CIDR']);
const NAMESPACES = new Set(['cel', 'optional', 'math', 'sets', 'lists', 'strings', 'base64']);

function typeInfo(t: CelType | undefined): TypeInfo {
  if (!t) return UNKNOWN_TYPE;
  switch (t.kind) {
    case 'primitive':
      switch (t.name) {
        case 'bool':
        case 'int':
        case 'uint':
        case 'double':
        case 'string':
        case 'bytes':
        case 'null':
        case 'type':
          return { kind: t.name, name: t.name };
      }
      return { kind: 'unknown', name: t.name };
    case 'message':
      if (t.name === 'google.protobuf.Timestamp') return { kind: 'timestamp', name: t.name };
      if (t.name === 'google.protobuf.Duration') return { kind: 'duration', name: t.name };
      if (OPAQUE.has(t.name)) return { kind: 'opaque', name: t.name };
      return { kind: 'struct', name: t.name };
    case 'list':
      return { kind: 'list', name: t.name, elem: typeInfo(t.valueType) };
    case 'map':
      return { kind: 'map', name: t.name };
    case 'optional':
      return { kind: 'optional', name: t.name, elem: typeInfo(t.valueType) };
    case 'dyn':
    case 'param':
      return DYN;
  }
  return UNKNOWN_TYPE;
}

function declTypeInfo(d: Decl): TypeInfo {
  switch (d.kind) {
    case 'object':
      return { kind: 'struct', name: d.name };
    case 'list':
      return { kind: 'list', name: d.name, elem: d.elem ? declTypeInfo(d.elem) : DYN };
    case 'dyn':
      return DYN;
    default:
      return { kind: d.kind, name: d.name };
  }
}

/** isScalar: values of a size known at compile time. */
function isScalar(t: TypeInfo): boolean {
  switch (t.kind) {
    case 'bool':
    case 'double':
    case 'duration':
    case 'int':
    case 'timestamp':
    case 'uint':
      return true;
    case 'optional':
      return t.elem ? isScalar(t.elem) : false;
  }
  return false;
}

/** Whether a value of type t may be of kind k (dyn may be anything). */
const mayBe = (t: TypeInfo, ...kinds: Kind[]): boolean => t.kind === 'dyn' || t.kind === 'unknown' || kinds.includes(t.kind);

interface EntrySize {
  container: 'list' | 'map';
  key: Estimate;
  val: Estimate;
}

const unionEntry = (a: EntrySize | undefined, b: EntrySize | undefined): EntrySize | undefined =>
  a && b ? { container: a.container, key: union(a.key, b.key), val: union(a.val, b.val) } : undefined;

/**
 * A field path (checker.AstNode's Path): a variable, then field names, @items, @keys and @values.
 * Paths share their prefixes, and each resolves to its schema type once, so that neither building
 * nor resolving one costs more than a step.
 */
interface Path {
  readonly parent: Path | undefined;
  readonly name: string;
  /** the schema type, once resolved (null: none) */
  decl?: Decl | null;
}

/** append(path, name), where a missing path counts as empty. */
const extend = (parent: Path | undefined, name: string): Path => ({ parent, name });

interface LocalVar {
  path: Path | undefined;
  size: Estimate | undefined;
  entry: EntrySize | undefined;
}

/** A call's estimate (checker.CallEstimate). */
interface CallEstimate {
  cost: Estimate;
  size?: Estimate;
}

/** The name under which the accumulator of a comprehension is in scope; no identifier can spell it. */
const ACCU = '@result';

type Visit = Generator<Node, Estimate, Estimate>;

/**
 * checker.Cost of a type-checked expression whose variables self and oldSelf have the type root.
 * Returns the range of the cost; upstream compares the maximum with its limits.
 */
export function estimateCost(ast: unknown, root: Decl): Estimate {
  return new Coster(root).run(ast as Node);
}

class Coster {
  private readonly paths = new Map<Node, Path>();
  private readonly sizes = new Map<Node, Estimate>();
  private readonly entries = new Map<Node, EntrySize>();
  private readonly scopes = new Map<string, LocalVar[]>();

  constructor(private readonly root: Decl) {}

  /** Drives the visits with an explicit stack: a visit yields a child and resumes with its cost. */
  run(ast: Node): Estimate {
    const stack: Visit[] = [this.visit(ast)];
    let input: Estimate = ZERO;
    while (stack.length > 0) {
      const step = stack[stack.length - 1].next(input);
      if (step.done) {
        stack.pop();
        input = step.value;
      } else {
        stack.push(this.visit(step.value));
        input = ZERO;
      }
    }
    return input;
  }

  // ---- scopes, paths and sizes (coster's localVars, exprPaths, computedSizes, computedEntrySizes)

  private push(name: string, v: LocalVar): void {
    const stack = this.scopes.get(name);
    if (stack) stack.push(v);
    else this.scopes.set(name, [v]);
  }

  private pop(name: string): void {
    this.scopes.get(name)?.pop();
  }

  private peek(name: string): LocalVar | undefined {
    const stack = this.scopes.get(name);
    return stack?.[stack.length - 1];
  }

  private pathOf(e: Node): Path | undefined {
    if (e.op === 'id') {
      const v = this.peek(e.args as string);
      if (v) return v.path;
    }
    return this.paths.get(e);
  }

  /**
   * The schema type a path leads to: its first element is the variable, self or oldSelf, whose
   * type is the root (compilation.go's sizeEstimator does not look at the name).
   */
  private declAt(path: Path | undefined): Decl | undefined {
    if (!path) return undefined;
    // the unresolved steps, nearest first, down to a resolved one or the variable
    const todo: Path[] = [];
    let p: Path | undefined = path;
    while (p && p.decl === undefined && p.parent) {
      todo.push(p);
      p = p.parent;
    }
    if (p && p.decl === undefined) p.decl = this.root;
    let d: Decl | undefined = p?.decl ?? undefined;
    for (let i = todo.length - 1; i >= 0; i--) {
      const name = todo[i].name;
      if (!d) d = undefined;
      else if (name === '@items' || name === '@values') d = d.elem;
      else if (name === '@keys') d = d.kind === 'map' ? MAP_KEY_DECL : undefined;
      else d = d.fields?.get(name)?.decl;
      todo[i].decl = d ?? null;
    }
    return d;
  }

  /** The size estimator of compilation.go: MaxElements of the schema type the path leads to. */
  private estimateSize(path: Path | undefined): Estimate | undefined {
    const d = this.declAt(path);
    return d ? { min: 0, max: d.maxElements } : undefined;
  }

  private typeOf(e: Node): TypeInfo {
    if (e.checkedType) return typeInfo(e.checkedType);
    // nodes inside has() are not type-checked by cel-js: their schema type tells
    const d = this.declAt(this.pathOf(e));
    return d ? declTypeInfo(d) : UNKNOWN_TYPE;
  }

  /** computeSize */
  private sizeOf(e: Node): Estimate | undefined {
    const known = this.sizes.get(e);
    if (known) return known;
    const literal = literalSize(e);
    if (literal) return literal;
    const est = this.estimateSize(this.pathOf(e));
    if (est) {
      this.sizes.set(e, est);
      return est;
    }
    if (isScalar(this.typeOf(e))) return fixed(1);
    if (e.op === 'id') return this.peek(e.args as string)?.size;
    return undefined;
  }

  private sizeOrUnknown(e: Node): Estimate {
    return this.sizeOf(e) ?? UNKNOWN;
  }

  private entryOf(e: Node): EntrySize | undefined {
    const known = this.entries.get(e);
    if (known) return known;
    if (e.op === 'id') return this.peek(e.args as string)?.entry;
    return undefined;
  }

  /** The size of the elements of a list (library.CostEstimator listElementNode), by path or unknown. */
  private elementSize(list: Node): Estimate {
    const path = this.pathOf(list);
    return (path ? this.estimateSize(extend(path, '@items')) : undefined) ?? UNKNOWN;
  }

  // ---- the visit of each kind of node

  private *visit(e: Node): Visit {
    switch (e.op) {
      case 'value':
        return ZERO;
      case 'id': {
        // a local variable's path is its value's; anything else starts a path
        const name = e.args as string;
        const v = this.peek(name);
        if (!v) this.paths.set(e, extend(undefined, name));
        else if (v.path) this.paths.set(e, v.path);
        return fixed(SELECT_AND_IDENT_COST);
      }
      case '.': {
        const [operand, fieldName] = e.args as [Node, string];
        let cost = yield operand;
        const k = this.typeOf(operand).kind;
        if (k === 'map' || k === 'struct') cost = add(cost, fixed(SELECT_AND_IDENT_COST));
        this.paths.set(e, extend(this.pathOf(operand), fieldName));
        return cost;
      }
      case 'list': {
        const elems = e.args as Node[];
        let cost = ZERO;
        let item: Estimate = { min: elems.length === 0 ? 0 : MAX_UINT64, max: 0 };
        for (const x of elems) {
          cost = add(cost, yield x);
          item = union(item, this.sizeOrUnknown(x));
        }
        this.entries.set(e, { container: 'list', key: fixed(1), val: item });
        return add(cost, fixed(LIST_CREATE_BASE_COST));
      }
      case 'map': {
        const entries = e.args as [Node, Node][];
        let cost = ZERO;
        const empty = entries.length === 0;
        let key: Estimate = { min: empty ? 0 : MAX_UINT64, max: 0 };
        let val: Estimate = { min: empty ? 0 : MAX_UINT64, max: 0 };
        for (const [k, v] of entries) {
          cost = add(cost, yield k);
          cost = add(cost, yield v);
          key = union(key, this.sizeOrUnknown(k));
          val = union(val, this.sizeOrUnknown(v));
        }
        this.entries.set(e, { container: 'map', key, val });
        return add(cost, fixed(MAP_CREATE_BASE_COST));
      }
      case '&&':
      case '||': {
        const [l, r] = e.args as [Node, Node];
        const lc = yield l;
        const rc = yield r;
        // the right side may be short-circuited
        return { min: lc.min, max: addU(lc.max, rc.max) };
      }
      case '?:': {
        const [c, t, f] = e.args as [Node, Node, Node];
        const cc = yield c;
        const tc = yield t;
        const fc = yield f;
        this.sizes.set(e, union(this.sizeOrUnknown(t), this.sizeOrUnknown(f)));
        const entry = unionEntry(this.entryOf(t), this.entryOf(f));
        if (entry) this.entries.set(e, entry);
        return add(cc, union(tc, fc));
      }
      case 'call':
      case 'rcall':
        return yield* this.visitCall(e);
      case '-_': {
        // cel-go's parser reads -1 as a literal
        const operand = e.args as Node;
        if (operand.op === 'value' && (typeof operand.args === 'bigint' || typeof operand.args === 'number')) {
          this.sizes.set(e, fixed(1));
          return ZERO;
        }
        return yield* this.visitOperator(e);
      }
      default:
        return yield* this.visitOperator(e);
    }
  }

  /** Operators: cel-go's calls of _+_, _==_, _[_], !_ and the like. */
  private *visitOperator(e: Node): Visit {
    // _?._(operand, "field") costs as a call whose second argument is a literal
    const args = (e.op === '.?' ? [(e.args as [Node])[0]] : Array.isArray(e.args) ? e.args : [e.args]) as Node[];
    const argCosts: Estimate[] = [];
    for (const a of args) argCosts.push(yield a);
    const argSum = sum(argCosts);
    const dflt = (): CallEstimate => ({ cost: add(fixed(1), argSum) });
    const candidates: CallEstimate[] = [];
    const types = args.map((a) => this.typeOf(a));
    switch (e.op) {
      case '+': {
        const [l, r] = args;
        const concat = (): CallEstimate => {
          const size = add(this.sizeOrUnknown(l), this.sizeOrUnknown(r));
          const entry = unionEntry(this.entryOf(l), this.entryOf(r));
          if (entry) this.entries.set(e, entry);
          return { cost: add(byFactor(size, STRING_TRAVERSAL_COST_FACTOR), argSum), size };
        };
        if (types.every((t) => mayBe(t, 'string'))) candidates.push(concat());
        if (types.every((t) => mayBe(t, 'bytes'))) candidates.push(concat());
        if (types.every((t) => mayBe(t, 'list'))) {
          // list concatenation is O(1), tracked for its size
          const c = concat();
          candidates.push({ cost: add(fixed(1), argSum), size: c.size });
        }
        if (candidates.length === 0 || types.every((t) => mayBe(t, 'int', 'uint', 'double', 'timestamp', 'duration'))) candidates.push(dflt());
        break;
      }
      case '==':
      case '!=':
        if (e.op === '==' && types[0].kind === types[1].kind && types[0].name === types[1].name && cheapEquality(types[0])) {
          candidates.push({ cost: add(fixed(1), argSum) });
        } else candidates.push(this.compareSizes(args, argSum));
        break;
      case '<':
      case '<=':
      case '>':
      case '>=':
        if (types.every((t) => mayBe(t, 'string')) || types.every((t) => mayBe(t, 'bytes'))) candidates.push(this.compareSizes(args, argSum));
        if (candidates.length === 0 || types.every((t) => mayBe(t, 'int', 'uint', 'double', 'bool', 'timestamp', 'duration'))) candidates.push(dflt());
        break;
      case 'in':
        // list containment is O(n): constant lists are not told apart
        if (mayBe(types[1], 'list')) candidates.push({ cost: add(byFactor(this.sizeOrUnknown(args[1]), 1), argSum) });
        if (candidates.length === 0 || mayBe(types[1], 'map')) candidates.push(dflt());
        break;
      case '[]': {
        const [container] = args;
        const k = types[0].kind;
        const index = (sub: string): CallEstimate => {
          this.paths.set(e, extend(this.pathOf(container), sub));
          return { cost: dflt().cost, size: this.entryOf(container)?.val ?? this.sizeOf(e) };
        };
        if (k === 'list' || k === 'dyn' || k === 'unknown') candidates.push(index('@items'));
        if (k === 'map' || k === 'dyn' || k === 'unknown') candidates.push(index('@values'));
        if (candidates.length === 0) candidates.push(dflt());
        break;
      }
      default:
        // !_, -_, -, *, /, %, _?._ (.?), _[?_]
        candidates.push(dflt());
    }
    return this.settle(e, candidates);
  }

  /** Equality and ordering of strings and bytes: the shorter operand is traversed. */
  private compareSizes(args: Node[], argSum: Estimate): CallEstimate {
    const l = this.sizeOrUnknown(args[0]);
    const r = this.sizeOrUnknown(args[1]);
    const smallestMax = Math.min(l.max, r.max);
    return { cost: add(byFactor({ min: smallestMax > 0 ? 1 : 0, max: smallestMax }, STRING_TRAVERSAL_COST_FACTOR), argSum) };
  }

  /** costCall's union over the overloads, and the result size. */
  private settle(e: Node, candidates: CallEstimate[]): Estimate {
    let cost: Estimate = { min: MAX_UINT64, max: 0 };
    let size: Estimate | undefined;
    for (const c of candidates) {
      cost = union(cost, c.cost);
      if (c.size) size = size ? union(size, c.size) : c.size;
    }
    size ??= this.sizeOf(e);
    if (size) this.sizes.set(e, size);
    return cost;
  }

  private *visitCall(e: Node): Visit {
    let name: string;
    let target: Node | undefined;
    let args: Node[];
    if (e.op === 'rcall') {
      const [fn, receiver, fnArgs] = e.args as [string, Node, Node[]];
      args = fnArgs;
      if (receiver.op === 'id' && NAMESPACES.has(receiver.args as string) && !this.peek(receiver.args as string) && isNamespace(receiver)) {
        name = `${receiver.args as string}.${fn}`;
      } else {
        name = fn;
        target = receiver;
      }
    } else {
      [name, args] = e.args as [string, Node[]];
    }
    if (name === MATCHES_ALIAS) name = 'matches';

    const macro = e.meta?.alternate?.op === 'comprehension' || e.meta?.macro !== undefined;
    if (macro && target && ['all', 'exists', 'exists_one', 'map', 'filter'].includes(name)) return yield* this.visitComprehension(e, name, target, args);
    if (macro && !target && name === 'has' && args.length === 1) {
      // has(a.f): a presence test, free of charge but for its operand
      const sel = args[0];
      return Array.isArray(sel.args) && sel.args[0] && typeof sel.args[0] === 'object' ? yield (sel.args as [Node])[0] : ZERO;
    }
    if (macro && name === 'cel.bind' && args.length === 3) return yield* this.visitBind(e, args);
    if (!target && name === 'dyn' && args.length === 1) {
      // dyn() only disables type checking
      const c = yield args[0];
      const size = this.sizeOf(args[0]);
      if (size) this.sizes.set(e, size);
      const entry = this.entryOf(args[0]);
      if (entry) this.entries.set(e, entry);
      return add(fixed(1), c);
    }

    const argCosts: Estimate[] = [];
    for (const a of args) argCosts.push(yield a);
    const targetCost = target ? yield target : ZERO;
    const argSum = sum(argCosts);
    const est = this.functionCost(name, target, args) ?? { cost: fixed(1) };
    const cost = this.settle(e, [{ cost: add(est.cost, argSum), size: est.size }]);
    return add(targetCost, cost);
  }

  /**
   * The cost of a function call without its arguments: the estimators of the cel-go extensions,
   * Kubernetes' library.CostEstimator, then checker's own cases. Undefined: O(1), a cost of 1.
   */
  private functionCost(name: string, target: Node | undefined, args: Node[]): CallEstimate | undefined {
    const size = (n: Node): Estimate => this.sizeOrUnknown(n);
    const t = target ? this.typeOf(target) : undefined;
    const onList = t?.kind === 'list';
    const onString = t !== undefined && mayBe(t, 'string');

    // ext.Lists (version 3) and ext.Sets estimators
    const allocating = (factor: number, listSize: Estimate): CallEstimate => ({ cost: add(add(byFactor(listSize, factor), fixed(1)), fixed(LIST_CREATE_BASE_COST)), size: listSize });
    if (target && onList) {
      switch (name) {
        case 'slice':
          if (args.length === 2) {
            const start = uintLiteral(args[0], 0);
            const end = uintLiteral(args[1], size(target).max);
            return allocating(1, fixed(end >= start ? end - start : MAX_UINT64));
          }
          break;
        case 'flatten':
          if (args.length <= 1) return allocating(args.length === 1 ? uintLiteral(args[0], MAX_UINT64) : 1, size(target));
          break;
        case 'reverse':
          if (args.length === 0) return allocating(1, size(target));
          break;
        case 'distinct':
          if (args.length === 0) return allocating(2, mul(size(target), size(target)));
          break;
        case 'sort': {
          if (args.length !== 0) break;
          const elem = t?.elem?.kind;
          const sz = size(target);
          return allocating(elem === 'string' || elem === 'bytes' ? 2 + STRING_TRAVERSAL_COST_FACTOR : 2, mul(sz, sz));
        }
      }
    }
    if (!target) {
      switch (name) {
        case 'lists.range':
          if (args.length === 1) return allocating(1, fixed(uintLiteral(args[0], MAX_UINT64)));
          break;
        case 'sets.contains':
        case 'sets.intersects':
        case 'sets.equivalent':
          if (args.length === 2) return { cost: add(byFactor(mul(size(args[0]), size(args[1])), name === 'sets.equivalent' ? 2 : 1), fixed(1)) };
          break;
      }
    }

    // Kubernetes' library.CostEstimator, by function name
    switch (name) {
      case 'isSorted':
      case 'sum':
      case 'max':
      case 'min':
      case 'indexOf':
      case 'lastIndexOf':
        if (target) {
          if (onList) {
            let el = fixed(1);
            const ek = t?.elem?.kind;
            if (ek === 'string' || ek === 'bytes') el = add(el, byFactor(this.elementSize(target), STRING_TRAVERSAL_COST_FACTOR));
            return { cost: mul(size(target), el) };
          }
          return { cost: byFactor(size(target), STRING_TRAVERSAL_COST_FACTOR) };
        }
        break;
      case 'url':
        if (!target && args.length === 1) return { cost: byFactor(size(args[0]), STRING_TRAVERSAL_COST_FACTOR), size: size(args[0]) };
        break;
      case 'lowerAscii':
      case 'upperAscii':
      case 'substring':
      case 'trim':
        if (target) return { cost: byFactor(size(target), STRING_TRAVERSAL_COST_FACTOR), size: size(target) };
        break;
      case 'replace':
        if (target && args.length >= 2) return replaceEstimate(size(target), size(args[0]), size(args[1]));
        break;
      case 'split':
        if (target) {
          const sz = size(target);
          const max = args.length > 1 ? intLiteral(args[1]) ?? sz.max : sz.max;
          return { cost: byFactor(sz, 2 * STRING_TRAVERSAL_COST_FACTOR), size: { min: 0, max } };
        }
        break;
      case 'join':
        if (target) {
          const listSize = size(target);
          let sz: Estimate = onList ? mul(listSize, this.elementSize(target)) : ZERO;
          if (args.length > 0) {
            const separators = { min: listSize.min > 0 ? listSize.min - 1 : 0, max: listSize.max > 0 ? listSize.max - 1 : 0 };
            sz = add(sz, mul(size(args[0]), separators));
          }
          return { cost: byFactor(sz, STRING_TRAVERSAL_COST_FACTOR), size: sz };
        }
        break;
      case 'find':
      case 'findAll':
        if (target && args.length >= 1) {
          const sz = size(target);
          const strCost = byFactor(add(sz, fixed(1)), STRING_TRAVERSAL_COST_FACTOR);
          const regexCost = byFactor(size(args[0]), REGEX_STRING_LENGTH_COST_FACTOR);
          return { cost: mul(strCost, regexCost), size: { min: 0, max: sz.max } };
        }
        break;
      case 'cidr':
      case 'isIP':
      case 'isCIDR':
        if (args.length >= 1) return { cost: byFactor(size(args[0]), STRING_TRAVERSAL_COST_FACTOR) };
        break;
      case 'ip':
        if (target) return { cost: fixed(1) };
        if (args.length >= 1) return { cost: byFactor(size(args[0]), STRING_TRAVERSAL_COST_FACTOR) };
        break;
      case 'masked':
      case 'prefixLength':
      case 'family':
      case 'isUnspecified':
      case 'isLoopback':
      case 'isLinkLocalMulticast':
      case 'isLinkLocalUnicast':
      case 'isGlobalUnicast':
        return { cost: fixed(1) };
      case 'containsIP':
      case 'containsCIDR':
        if (args.length >= 1) {
          // two IPv4 or IPv6 byte strings compared
          const ipSize: Estimate = { min: 4, max: 16 };
          let cost = byFactor(add(ipSize, ipSize), STRING_TRAVERSAL_COST_FACTOR);
          if (name === 'containsCIDR') cost = add(add(cost, byFactor(ipSize, STRING_TRAVERSAL_COST_FACTOR)), fixed(1));
          if (this.typeOf(args[0]).kind === 'string') cost = add(cost, byFactor(size(args[0]), STRING_TRAVERSAL_COST_FACTOR));
          return { cost };
        }
        break;
      case 'quantity':
      case 'isQuantity':
        if (args.length >= 1) return { cost: byFactor(size(args[0]), STRING_TRAVERSAL_COST_FACTOR) };
        break;
      case 'sign':
      case 'asInteger':
      case 'isInteger':
      case 'asApproximateFloat':
      case 'isGreaterThan':
      case 'isLessThan':
      case 'compareTo':
      case 'add':
      case 'sub':
      case 'getScheme':
      case 'getHostname':
      case 'getHost':
      case 'getPort':
      case 'getEscapedPath':
      case 'getQuery':
        return { cost: fixed(1) };
    }

    // checker.Cost's own cases
    switch (name) {
      case 'format':
        if (target && onString) return { cost: byFactor(size(target), STRING_TRAVERSAL_COST_FACTOR) };
        break;
      case 'bytes':
        if (!target && args.length === 1 && this.typeOf(args[0]).kind === 'string') {
          const sz = size(args[0]);
          return { cost: byFactor(sz, STRING_TRAVERSAL_COST_FACTOR), size: { min: sz.min, max: mulU(sz.max, 4) } };
        }
        break;
      case 'string':
        if (!target && args.length === 1 && this.typeOf(args[0]).kind === 'bytes') {
          const sz = size(args[0]);
          return { cost: byFactor(sz, STRING_TRAVERSAL_COST_FACTOR), size: { min: Math.floor(sz.min / 4), max: sz.max } };
        }
        break;
      case 'strings.quote':
        if (args.length === 1) {
          const sz = size(args[0]);
          return { cost: byFactor(sz, STRING_TRAVERSAL_COST_FACTOR), size: { min: addU(sz.min, 2), max: addU(mulU(sz.max, 2), 2) } };
        }
        break;
      case 'startsWith':
      case 'endsWith':
        if (target && onString && args.length === 1) return { cost: byFactor(size(args[0]), STRING_TRAVERSAL_COST_FACTOR) };
        break;
      case 'matches':
        // only the method: the global matches(s, re) is O(1) to cel-go's estimator
        if (target && args.length === 1) {
          const strCost = byFactor(add(size(target), fixed(1)), STRING_TRAVERSAL_COST_FACTOR);
          const regexCost = byFactor(size(args[0]), REGEX_STRING_LENGTH_COST_FACTOR);
          return { cost: mul(strCost, regexCost) };
        }
        break;
      case 'contains':
        if (target && onString && args.length === 1) {
          return { cost: mul(byFactor(size(target), STRING_TRAVERSAL_COST_FACTOR), byFactor(size(args[0]), STRING_TRAVERSAL_COST_FACTOR)) };
        }
        break;
    }
    return undefined;
  }

  /** cel.bind(v, init, expr): a comprehension over [] whose accumulator v is init. */
  private *visitBind(e: Node, args: Node[]): Visit {
    const [v, init, expr] = args;
    let cost = fixed(LIST_CREATE_BASE_COST); // the empty iteration range
    cost = add(cost, yield init);
    const name = v.op === 'id' ? (v.args as string) : '';
    this.push(name, { path: this.pathOf(init), size: this.sizeOf(init), entry: this.entryOf(init) });
    cost = add(cost, yield expr);
    this.pop(name);
    const size = this.sizeOf(expr);
    if (size) this.sizes.set(e, size);
    const entry = this.entryOf(expr);
    if (entry) this.entries.set(e, entry);
    return cost;
  }

  /**
   * The comprehension macros as cel-go expands them (parser/macro.go), with accu their accumulator:
   *   all:        init true,  condition @not_strictly_false(accu),  step accu && p,  result accu
   *   exists:     init false, condition @not_strictly_false(!accu), step accu || p,  result accu
   *   exists_one: init 0,     condition true, step p ? accu + 1 : accu,             result accu == 1
   *   map:        init [],    condition true, step accu + [t] (f ? accu + [t] : accu), result accu
   *   filter:     init [],    condition true, step p ? accu + [x] : accu,           result accu
   */
  private *visitComprehension(e: Node, kind: string, range: Node, args: Node[]): Visit {
    const iterVar = args[0]?.op === 'id' ? (args[0].args as string) : '';
    let cost = yield range;
    const listInit = kind === 'map' || kind === 'filter';
    // the accumulator's initial value: [] costs a list creation, literals nothing
    const emptyEntry: EntrySize = { container: 'list', key: fixed(1), val: ZERO };
    if (listInit) cost = add(cost, fixed(LIST_CREATE_BASE_COST));
    this.push(ACCU, { path: undefined, size: listInit ? ZERO : fixed(1), entry: listInit ? emptyEntry : undefined });

    // the iteration variable: a list's elements, a map's keys
    const rangeEntry = this.entryOf(range);
    const rk = this.typeOf(range).kind;
    const isList = rangeEntry ? rangeEntry.container === 'list' : rk === 'list';
    this.push(iterVar, { path: extend(this.pathOf(range), isList ? '@items' : '@keys'), size: isList ? rangeEntry?.val : rangeEntry?.key, entry: undefined });

    const accuCost = fixed(SELECT_AND_IDENT_COST);
    let loop: Estimate;
    let stepCost: Estimate;
    let stepEntry: EntrySize | undefined;
    switch (kind) {
      case 'all':
      case 'exists': {
        // @not_strictly_false(accu) or @not_strictly_false(!accu); accu && p or accu || p
        loop = kind === 'all' ? add(fixed(1), accuCost) : add(fixed(1), add(fixed(1), accuCost));
        const p = yield args[1];
        stepCost = { min: accuCost.min, max: addU(accuCost.max, p.max) };
        break;
      }
      case 'exists_one': {
        loop = ZERO;
        const p = yield args[1];
        // p ? accu + 1 : accu
        stepCost = add(p, union(add(fixed(1), accuCost), accuCost));
        break;
      }
      case 'map': {
        loop = ZERO;
        const filter = args.length === 3 ? args[1] : undefined;
        const transform = args.length === 3 ? args[2] : args[1];
        const f = filter ? yield filter : ZERO;
        const tc = yield transform;
        // accu + [t]: one for the concatenation, the accumulator, the list of one
        const append = add(add(fixed(1), accuCost), add(tc, fixed(LIST_CREATE_BASE_COST)));
        stepCost = filter ? add(f, union(append, accuCost)) : append;
        stepEntry = unionEntry(emptyEntry, { container: 'list', key: fixed(1), val: this.sizeOrUnknown(transform) });
        break;
      }
      default: {
        // filter
        loop = ZERO;
        const p = yield args[1];
        const x = args[0];
        const append = add(add(fixed(1), accuCost), add(fixed(SELECT_AND_IDENT_COST), fixed(LIST_CREATE_BASE_COST)));
        stepCost = add(p, union(append, accuCost));
        stepEntry = unionEntry(emptyEntry, { container: 'list', key: fixed(1), val: this.sizeOrUnknown(x) });
      }
    }
    this.pop(iterVar);
    // the result: accu, or accu == 1 (an int compared with an int: one unit and the accumulator)
    cost = add(cost, kind === 'exists_one' ? add(fixed(1), accuCost) : accuCost);
    this.pop(ACCU);

    const rangeCount = this.sizeOrUnknown(range);
    cost = add(cost, mul(rangeCount, add(stepCost, loop)));
    if (listInit) {
      this.sizes.set(e, rangeCount);
      if (stepEntry) this.entries.set(e, stepEntry);
    } else this.sizes.set(e, fixed(1));
    return cost;
  }
}

/** computeExprSize: literals, and the lengths of list and map literals. */
function literalSize(e: Node): Estimate | undefined {
  switch (e.op) {
    case 'value': {
      const v = e.args;
      if (typeof v === 'string') return fixed([...v].length);
      if (v instanceof Uint8Array) return fixed(v.length);
      return fixed(1);
    }
    case 'list':
      return fixed((e.args as unknown[]).length);
    case 'map':
      return fixed((e.args as unknown[]).length);
  }
  return undefined;
}

/** nodeAsUintValue: an int literal (negative ones count as 0), or the default. */
function uintLiteral(e: Node, dflt: number): number {
  const v = intLiteral(e);
  if (v === undefined) return dflt;
  return v < 0 ? 0 : v;
}

function intLiteral(e: Node): number | undefined {
  if (e.op !== 'value') return undefined;
  const v = e.args;
  if (typeof v === 'bigint') return v < 0n ? Number(v) + MAX_UINT64 : Number(v);
  return undefined;
}

/** Equality Kubernetes prices at one unit: quantities, URLs, IPs and CIDRs. */
function cheapEquality(t: TypeInfo): boolean {
  return t.kind === 'opaque' || (t.kind === 'struct' && (t.name === 'kubernetes.Quantity' || t.name === 'net.URL'));
}

/** A namespace constant of kapi's library (math, sets, ...), as the type checker saw it. */
function isNamespace(receiver: Node): boolean {
  const name = receiver.checkedType?.name;
  return name === undefined || name.endsWith('Namespace');
}

/** library.CostEstimator's estimate of string.replace(old, new). */
function replaceEstimate(sz: Estimate, toReplace: Estimate, replaceWith: Estimate): CallEstimate {
  const count: Estimate = { min: 0, max: 0 };
  const retained: Estimate = { min: 0, max: 0 };
  if (toReplace.min === 0) {
    // replacing "" surrounds every character
    count.max = sz.max < MAX_UINT64 ? sz.max + 1 : sz.max;
    retained.max = sz.max;
  } else if (replaceWith.max <= toReplace.min) {
    retained.max = sz.max;
  } else {
    count.max = Math.ceil(sz.max / toReplace.min);
  }
  if (toReplace.max === 0) {
    count.min = sz.min < MAX_UINT64 ? sz.min + 1 : sz.min;
    retained.min = sz.min;
  } else if (toReplace.max <= replaceWith.min) {
    retained.min = sz.min;
  } else {
    count.min = Math.ceil(sz.min / toReplace.max);
  }
  return { cost: byFactor(sz, 2 * STRING_TRAVERSAL_COST_FACTOR), size: add(mul(count, replaceWith), retained) };
}
