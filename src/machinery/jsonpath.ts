/**
 * kubectl-style JSONPath (client-go util/jsonpath) over decoded JSON: parse a
 * template once, then FindResults (the values of each action, with `range`/`end`
 * loops expanded) and PrintResults (scalars as fmt.Print shows them, maps and
 * lists as JSON, separated by spaces). Run-time errors carry client-go's texts
 * (`array index out of bounds: index 5, length 2`, `x is not found`).
 */
import { parseJsonPath, type JsonPathNode, type ListNode, type SliceParam } from './jsonpath-parser.js';
import { ByteValue, FloatLiteral, goEqual, goFormatValue, goJsonMarshal, goKind, goLess, goPrintScalar, goTypeName } from './jsonpath-values.js';

export { JsonPathSyntaxError, parseJsonPath, type JsonPathNode, type ListNode } from './jsonpath-parser.js';

/** A template that failed while being evaluated against some data. */
export class JsonPathError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JsonPathError';
  }
}

interface Step {
  values: unknown[];
  error?: string;
}

export class JsonPath {
  private root: ListNode | undefined;
  private allowMissing = false;
  private beginRange = 0;
  private inRange = 0;
  private endRange = 0;
  private lastEndNode: JsonPathNode | undefined;

  constructor(readonly name = '') {}

  /** Whether a missing map key yields no value instead of an error (kubectl's printers allow it). */
  allowMissingKeys(allow: boolean): this {
    this.allowMissing = allow;
    return this;
  }

  /** Parses the template; throws JsonPathSyntaxError with client-go's message. */
  parse(text: string): this {
    this.root = undefined;
    this.root = parseJsonPath(text);
    return this;
  }

  /** One list of values per top-level node (text or action), range bodies once per element. */
  findResults(data: unknown): unknown[][] {
    if (!this.root) throw new JsonPathError(`${this.name} is an incomplete jsonpath template`);
    this.beginRange = this.inRange = this.endRange = 0;
    this.lastEndNode = undefined;
    return this.find(this.root.nodes, data);
  }

  /** The values of one result list as text: JSON for maps and lists, fmt.Print for the rest, space-separated. */
  printResults(values: readonly unknown[]): string {
    return values.map((v) => (goKind(v) === 'map' || goKind(v) === 'slice' ? goJsonMarshal(v) : goPrintScalar(v))).join(' ');
  }

  /** FindResults then PrintResults of each list, concatenated (what `kubectl -o jsonpath` prints). */
  execute(data: unknown): string {
    return this.findResults(data)
      .map((r) => this.printResults(r))
      .join('');
  }

  private find(nodes: JsonPathNode[], data: unknown): unknown[][] {
    const full: unknown[][] = [];
    for (let i = 0; i < nodes.length; i++) {
      const step = this.walk([data], nodes[i]);
      if (step.error !== undefined) throw new JsonPathError(step.error);
      if (this.endRange > 0 && this.endRange <= this.inRange) {
        this.endRange--;
        this.lastEndNode = nodes[i];
        break;
      }
      if (this.beginRange > 0) {
        this.beginRange--;
        this.inRange++;
        const rest = nodes.slice(i + 1);
        if (step.values.length > 0) for (const v of step.values) full.push(...this.find(rest, v));
        // An empty range still walks its body, to find where it ends.
        else this.find(rest, null);
        this.inRange--;
        for (let k = i + 1; k < nodes.length; k++) {
          if (nodes[k] === this.lastEndNode) {
            i = k;
            break;
          }
        }
        continue;
      }
      full.push(step.values);
    }
    return full;
  }

  private walk(input: unknown[], node: JsonPathNode): Step {
    switch (node.type) {
      case 'list':
        return this.evalList(input, node);
      case 'text':
        return { values: [node.text] };
      case 'field':
        return this.evalField(input, node.name);
      case 'array':
        return evalArray(input, node.params);
      case 'filter':
        return this.evalFilter(input, node);
      case 'int':
      case 'bool':
        return { values: input.map(() => node.value) };
      case 'float':
        return { values: input.map(() => new FloatLiteral(node.value)) };
      case 'wildcard':
        return { values: input.flatMap(children) };
      case 'recursive':
        return { values: recursive(input) };
      case 'union':
        return this.evalUnion(input, node.branches);
      case 'identifier':
        return this.evalIdentifier(input, node.name);
    }
  }

  private evalList(input: unknown[], list: ListNode): Step {
    let cur = input;
    for (const node of list.nodes) {
      const step = this.walk(cur, node);
      if (step.error !== undefined) return step;
      cur = step.values;
    }
    return { values: cur };
  }

  private evalIdentifier(input: unknown[], name: string): Step {
    if (name === 'range') {
      this.beginRange++;
      return { values: input };
    }
    if (name === 'end') {
      if (this.inRange > 0) {
        this.endRange++;
        return { values: [] };
      }
      return { values: [], error: 'not in range, nothing to end' };
    }
    return { values: input, error: `unrecognized identifier ${name}` };
  }

  private evalField(input: unknown[], name: string): Step {
    const results: unknown[] = [];
    if (input.length === 0) return { values: results };
    for (const v of input) {
      if (goKind(v) !== 'map') continue;
      const obj = v as Record<string, unknown>;
      if (Object.prototype.hasOwnProperty.call(obj, name)) results.push(obj[name]);
    }
    if (results.length === 0 && !this.allowMissing) return { values: results, error: `${name} is not found` };
    return { values: results };
  }

  private evalUnion(input: unknown[], branches: ListNode[]): Step {
    const results: unknown[] = [];
    for (const b of branches) {
      const step = this.evalList(input, b);
      if (step.error !== undefined) return { values: input, error: step.error };
      results.push(...step.values);
    }
    return { values: results };
  }

  private evalFilter(input: unknown[], node: { left: ListNode; right: ListNode; operator: string }): Step {
    const results: unknown[] = [];
    for (const v of input) {
      if (goKind(v) !== 'slice') return { values: input, error: `${goFormatValue(v)} is not array or slice and cannot be filtered` };
      for (const item of v as unknown[]) {
        const lefts = this.evalList([item], node.left);
        if (node.operator === 'exists') {
          if (lefts.values.length > 0) results.push(item);
          continue;
        }
        if (lefts.error !== undefined) return { values: input, error: lefts.error };
        if (lefts.values.length === 0) continue;
        if (lefts.values.length > 1) return { values: input, error: 'can only compare one element at a time' };
        const rights = this.evalList([item], node.right);
        if (rights.error !== undefined) return { values: input, error: rights.error };
        if (rights.values.length === 0) continue;
        if (rights.values.length > 1) return { values: input, error: 'can only compare one element at a time' };
        let pass: boolean;
        try {
          pass = compare(node.operator, lefts.values[0], rights.values[0]);
        } catch (e) {
          return { values: results, error: (e as Error).message };
        }
        if (pass) results.push(item);
      }
    }
    return { values: results };
  }
}

function compare(op: string, a: unknown, b: unknown): boolean {
  switch (op) {
    case '<':
      return goLess(a, b);
    case '>':
      return !(goLess(a, b) || goEqual(a, b));
    case '==':
      return goEqual(a, b);
    case '!=':
      return !goEqual(a, b);
    case '<=':
      return goLess(a, b) || goEqual(a, b);
    case '>=':
      return !goLess(a, b);
  }
  throw new Error(`unrecognized filter operator ${op}`);
}

function evalArray(input: unknown[], nodeParams: readonly SliceParam[]): Step {
  const result: unknown[] = [];
  for (const v of input) {
    const kind = goKind(v);
    if (kind === 'nil') continue;
    if (kind !== 'slice') return { values: input, error: `${goTypeName(v)} is not array or slice` };
    const arr = v as unknown[];
    const len = arr.length;
    const p = nodeParams.map((x) => ({ ...x }));
    if (!p[0].known) p[0].value = 0;
    if (p[0].value < 0) p[0].value += len;
    if (!p[1].known) p[1].value = len;
    if (p[1].value < 0 || (p[1].value === 0 && p[1].derived)) p[1].value += len;
    if (p[1].value === p[0].value) return { values: result };
    if (p[0].value >= len || p[0].value < 0) return { values: input, error: `array index out of bounds: index ${p[0].value}, length ${len}` };
    if (p[1].value > len || p[1].value < 0) return { values: input, error: `array index out of bounds: index ${p[1].value - 1}, length ${len}` };
    if (p[0].value > p[1].value) return { values: input, error: `starting index ${p[0].value} is greater than ending index ${p[1].value}` };
    const slice = arr.slice(p[0].value, p[1].value);
    let step = 1;
    if (p[2].known) {
      if (p[2].value <= 0) return { values: input, error: 'step must be > 0' };
      step = p[2].value;
    }
    for (let i = 0; i < slice.length; i += step) result.push(slice[i]);
  }
  return { values: result };
}

/** The elements of a list, the values of a map, the bytes of a string; nothing for scalars. */
function children(v: unknown): unknown[] {
  switch (goKind(v)) {
    case 'slice':
      return v as unknown[];
    case 'map':
      return Object.values(v as Record<string, unknown>);
    case 'string':
      return [...new TextEncoder().encode(v as string)].map((b) => new ByteValue(b));
  }
  return [];
}

/** `..`: every container under the inputs (themselves included), depth first. */
function recursive(input: unknown[]): unknown[] {
  const out: unknown[] = [];
  const stack: unknown[][] = [[...input].reverse()];
  while (stack.length) {
    const top = stack[stack.length - 1];
    if (top.length === 0) {
      stack.pop();
      continue;
    }
    const v = top.pop();
    const kids = children(v);
    if (kids.length === 0) continue;
    out.push(v);
    stack.push([...kids].reverse());
  }
  return out;
}
