/**
 * YAML as the apiserver and kubectl read it (sigs.k8s.io/yaml: go-yaml v2, then
 * JSON): YAML 1.1 scalars (yes/on are booleans, 0777 is octal), non-string keys
 * turned into strings, timestamps kept as strings, merge keys and aliases
 * expanded, and numbers kept as the apiserver's JSON decoding keeps them
 * (int64 exact, BigInt beyond 2^53). The `yaml` package does the parsing;
 * scalars are resolved here with go-yaml's rules.
 */
import { isAlias, isMap, isScalar, isSeq, LineCounter, parseAllDocuments, type Document, type Node, type Pair } from 'yaml';
import { formatGoFloat } from './go-text.js';
import { jsonNumber, stringifyJson } from './json.js';
import { BINARY_TAG, FLOAT_TAG, INT_TAG, MERGE_TAG, resolveScalar, YamlResolveError, type Resolved } from './yaml-resolve.js';

export { stringifyYaml } from './yaml-emit.js';

export class YamlSyntaxError extends SyntaxError {
  constructor(
    message: string,
    /** 1-based line of the problem, when known. */
    readonly line?: number,
  ) {
    super(message);
    this.name = 'YamlSyntaxError';
  }
}

/**
 * All documents of a stream, skipping empty ones: like kubectl, a document that reads as
 * null (nothing but comments, or `~`) is dropped.
 */
export function parseYamlDocuments(text: string): unknown[] {
  return parseDocs(text, Infinity)
    .map((d) => new Converter(d).document())
    .filter((v) => v !== null);
}

/** The first document (as sigs.k8s.io/yaml.YAMLToJSON reads only that); null when there is none. */
export function parseYaml(text: string): unknown {
  try {
    const [doc] = parseDocs(text, 1);
    return doc ? new Converter(doc).document() : null;
  } catch (e) {
    // The parser and the conversion recurse: a document can nest deeper than the stack goes.
    if (e instanceof RangeError && /call stack/.test(e.message)) throw new YamlSyntaxError(NESTED_TOO_DEEPLY);
    throw e;
  }
}

/**
 * The error of a document nested deeper than the parser (which recurses) can go on this
 * thread's stack; go-yaml reads up to 10000 levels. yaml-bodies.ts parses such a body again on
 * its parser thread, whose stack is larger.
 */
export const NESTED_TOO_DEEPLY = 'yaml: document nested too deeply';

function parseDocs(text: string, limit: number): Document.Parsed[] {
  checkDepth(text);
  checkVersionDirectives(text);
  const lineCounter = new LineCounter();
  // The failsafe schema leaves every scalar a string; Converter resolves them like go-yaml.
  const docs = parseAllDocuments(text, {
    version: '1.1',
    schema: 'failsafe',
    resolveKnownTags: false,
    uniqueKeys: false,
    prettyErrors: false,
    lineCounter,
  });
  const list = Array.isArray(docs) ? docs.slice(0, limit) : [];
  for (const doc of list) {
    const err = doc.errors[0];
    if (err) {
      // The parser recurses; nesting far below go-yaml's limit of 10000 can exhaust the stack.
      if (/call stack/.test(err.message)) throw new YamlSyntaxError(NESTED_TOO_DEEPLY);
      const go = goYamlProblem(text, err.code, err.message, err.pos[0]);
      if (go) throw goYamlError(go, lineCounter, text);
      const line = lineCounter.linePos(err.pos[0]).line || 1;
      throw new YamlSyntaxError(`yaml: line ${line}: ${err.message.split('\n')[0]}`, line);
    }
  }
  return list;
}

/** A syntax error as go-yaml names it: its problem text, whether its scanner or parser found it, and where. */
interface GoYamlProblem {
  problem: string;
  scanner: boolean;
  at: number;
}

/**
 * go-yaml's text for the common syntax errors the `yaml` package reports in its own words
 * (scannerc.go and parserc.go), with the position go-yaml's mark would have. Undefined for others.
 */
function goYamlProblem(text: string, code: string, message: string, pos: number): GoYamlProblem | undefined {
  const parser = (problem: string, at = pos) => ({ problem, scanner: false, at });
  const scanner = (problem: string, at = pos) => ({ problem, scanner: true, at });
  const startsEntry = text[pos] === '-' && /[\s]/.test(text[pos + 1] ?? ' ');
  if (/Flow sequence .*end with a \]/.test(message)) return parser(`did not find expected ',' or ']'`, nextToken(text, pos));
  if (/Flow map .*end with a \}/.test(message)) return parser(`did not find expected ',' or '}'`, nextToken(text, pos));
  if (/Missing closing ["']quote/.test(message)) return scanner('found unexpected end of stream', text.length);
  if (code === 'BAD_SCALAR_START') return scanner('found character that cannot start any token');
  if (code === 'TAB_AS_INDENT') return scanner('found a tab character that violates indentation');
  if (code === 'BAD_INDENT' && /same column/.test(message)) return parser('did not find expected key');
  if (/block sequence may not be used as an implicit map key/.test(message) || (code === 'MULTILINE_IMPLICIT_KEY' && startsEntry)) {
    return parser('did not find expected key');
  }
  if (code === 'BLOCK_AS_IMPLICIT_KEY' || code === 'MULTILINE_IMPLICIT_KEY') {
    return scanner('mapping values are not allowed in this context', mappingValue(text, pos));
  }
  if (/Implicit map keys need to be followed by map values/.test(message)) return scanner(`could not find expected ':'`, nextToken(text, lineEnd(text, pos)));
  if (code === 'UNEXPECTED_TOKEN' && /at node end/.test(message)) {
    // A key where a sequence entry was due, or a lone scalar that the scanner took for a key.
    const line = text.slice(pos, lineEnd(text, pos));
    return /:(\s|$)/.test(line) ? parser(`did not find expected '-' indicator`) : scanner(`could not find expected ':'`, nextToken(text, lineEnd(text, pos)));
  }
  return undefined;
}

/**
 * go-yaml's `yaml: line N: problem` (decode.go parser.fail): marks count lines from 0, and only
 * scanner errors add one, so a parser error on the second line says "line 1"; none on the first.
 */
function goYamlError(go: GoYamlProblem, lines: LineCounter, text: string): YamlSyntaxError {
  let line0 = lines.linePos(go.at).line - 1;
  // The stream's end is a token of its own, which libyaml puts at the start of a new line (fetch_stream_end).
  if (!go.scanner && go.at >= text.length && text.length > 0 && !text.endsWith('\n')) line0++;
  const line = line0 === 0 ? 0 : go.scanner ? line0 + 1 : line0;
  return new YamlSyntaxError(line ? `yaml: line ${line}: ${go.problem}` : `yaml: ${go.problem}`, line0 + 1);
}

function lineEnd(text: string, at: number): number {
  const nl = text.indexOf('\n', at);
  return nl < 0 ? text.length : nl;
}

/** Where the scanner's next token starts: past blanks, line breaks and comments. */
function nextToken(text: string, at: number): number {
  let i = at;
  while (i < text.length) {
    const c = text[i];
    if (c === ' ' || c === '\t' || c === '\r' || c === '\n') i++;
    else if (c === '#') i = lineEnd(text, i);
    else break;
  }
  return i;
}

/** The `:` of the first mapping value at or after `at` (a colon followed by a blank or the end). */
function mappingValue(text: string, at: number): number {
  for (let i = at; i < text.length; i++) if (text[i] === ':' && /\s/.test(text[i + 1] ?? ' ')) return i;
  return at;
}

/**
 * go-yaml v2 reads YAML 1.1 only: a `%YAML` directive of another version is "found incompatible YAML document",
 * a second one in a document's directives "found duplicate %YAML directive" (parser errors, at the directive).
 */
function checkVersionDirectives(text: string): void {
  if (!text.includes('%YAML')) return;
  let line = 0;
  let seen = false;
  // Directives come before a document's `---`: at the start of the stream and after a `...` end marker. A `%YAML`
  // line anywhere else is part of a scalar, or the parser's error to report.
  let directives = true;
  for (let start = 0; start <= text.length; line++) {
    const end = lineEnd(text, start);
    const head = text.slice(start, Math.min(end, start + 64));
    const m = directives ? /^%YAML[ \t]+(\d+)\.(\d+)/.exec(head) : null;
    if (m) {
      const where = line === 0 ? '' : `line ${line}: `;
      if (seen) throw new YamlSyntaxError(`yaml: ${where}found duplicate %YAML directive`, line + 1);
      if (m[1] !== '1' || m[2] !== '1') throw new YamlSyntaxError(`yaml: ${where}found incompatible YAML document`, line + 1);
      seen = true;
    } else if (head.startsWith('...')) {
      directives = true;
      seen = false;
    } else if (directives && !/^(%|#|[ \t]*\r?$)/.test(head)) {
      directives = false;
      seen = false;
    }
    start = end + 1;
  }
}

const MAX_DEPTH = 10000;

/**
 * go-yaml's scanner refuses more than 10000 nested flow collections or block indents.
 * This cheap scan finds such input before the parser spends time and memory on it:
 * flow brackets that start a node (outside quotes and comments), and block indicators
 * (`- `, `? `, `: `) stacked at the start of a line.
 */
function checkDepth(text: string): void {
  const isSpace = (c: number) => c === 32 || c === 9 || c === 10 || c === 13 || Number.isNaN(c);
  // Characters after which a bracket or quote starts a node: whitespace and : , [ { -
  const startsNode = (c: number) => isSpace(c) || c === 58 || c === 44 || c === 91 || c === 123 || c === 45;
  let depth = 0;
  let line = 1;
  let lineStart = true;
  let lineIndicators = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const prev = i > 0 ? text.charCodeAt(i - 1) : 10;
    if (c === 10) {
      line++;
      lineStart = true;
      lineIndicators = 0;
      continue;
    }
    if (lineStart) {
      // "- ", "? " and ": " at the start of a line each open a block level.
      if ((c === 45 || c === 63 || c === 58) && isSpace(text.charCodeAt(i + 1))) {
        if (++lineIndicators > MAX_DEPTH) tooDeep(line);
        continue;
      }
      if (c !== 32 && c !== 9) lineStart = false;
    }
    if (c === 35 /* # */ && isSpace(prev)) {
      while (i + 1 < text.length && text.charCodeAt(i + 1) !== 10) i++;
    } else if ((c === 34 || c === 39) /* " ' */ && startsNode(prev)) {
      for (i++; i < text.length && text.charCodeAt(i) !== c; i++) {
        if (text.charCodeAt(i) === 10) line++;
        if (c === 34 && text.charCodeAt(i) === 92) i++;
      }
    } else if ((c === 91 || c === 123) /* [ { */ && startsNode(prev)) {
      if (++depth > MAX_DEPTH) tooDeep(line);
    } else if ((c === 93 || c === 125) && depth > 0) depth--;
  }
}

function tooDeep(line: number): never {
  // go-yaml names no line for a problem on the first one.
  throw new YamlSyntaxError(line > 1 ? `yaml: line ${line}: exceeded max depth of ${MAX_DEPTH}` : `yaml: exceeded max depth of ${MAX_DEPTH}`, line);
}

// go-yaml's limits against alias bombs (decode.go allowedAliasRatio).
function allowedAliasRatio(decodeCount: number): number {
  if (decodeCount <= 400_000) return 0.99;
  if (decodeCount >= 4_000_000) return 0.1;
  return 0.99 - 0.89 * ((decodeCount - 400_000) / 3_600_000);
}

class Converter {
  private decodeCount = 0;
  private aliasCount = 0;
  private aliasDepth = 0;
  private readonly expanding = new Set<Node>();

  constructor(private readonly doc: Document.Parsed) {}

  document(): unknown {
    try {
      return this.node(this.doc.contents);
    } catch (e) {
      if (e instanceof YamlResolveError) throw new YamlSyntaxError(e.message);
      throw e;
    }
  }

  private count(): void {
    this.decodeCount++;
    if (this.aliasDepth > 0) this.aliasCount++;
    if (this.aliasCount > 100 && this.decodeCount > 1000 && this.aliasCount / this.decodeCount > allowedAliasRatio(this.decodeCount)) {
      throw new YamlSyntaxError('yaml: document contains excessive aliasing');
    }
  }

  /** The node an alias points at (or the node itself). */
  private target(node: unknown): unknown {
    if (!isAlias(node)) return node;
    const t = node.resolve(this.doc);
    if (!t) throw new YamlSyntaxError(`yaml: unknown anchor '${node.source}' referenced`);
    return t;
  }

  private node(node: unknown): unknown {
    if (node === null || node === undefined) return null;
    this.count();
    if (isAlias(node)) {
      const t = this.target(node) as Node;
      if (this.expanding.has(t)) throw new YamlSyntaxError(`yaml: anchor '${node.source}' value contains itself`);
      this.expanding.add(t);
      this.aliasDepth++;
      try {
        return this.node(t);
      } finally {
        this.aliasDepth--;
        this.expanding.delete(t);
      }
    }
    if (isScalar(node)) return jsonValue(this.scalar(node));
    if (isSeq(node)) return this.within(node, () => node.items.map((item) => this.node(item)));
    if (isMap(node)) return this.within(node, () => this.mapping(node.items as Pair[]));
    throw new YamlSyntaxError('yaml: unsupported node');
  }

  /** Runs f while `node` is being expanded, so an alias inside it back to it is caught. */
  private within<T>(node: Node, f: () => T): T {
    const added = !this.expanding.has(node);
    if (added) this.expanding.add(node);
    try {
      return f();
    } finally {
      if (added) this.expanding.delete(node);
    }
  }

  private scalar(node: Node & { source?: string; type?: string; tag?: string; value?: unknown }): Resolved {
    const text = node.source ?? String(node.value);
    // Quoted and block scalars without a tag are strings; plain ones and tagged ones resolve.
    const tag = node.tag === '!' ? '!' : node.tag ?? (node.type === 'PLAIN' ? '' : undefined);
    if (tag === undefined) return { tag: 'tag:yaml.org,2002:str', value: text };
    if (tag === BINARY_TAG) {
      const clean = text.replace(/[\r\n]/g, '');
      if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(clean)) {
        throw new YamlSyntaxError('yaml: !!binary value contains invalid base64 data');
      }
      return { tag: 'tag:yaml.org,2002:str', value: new TextDecoder().decode(Buffer.from(clean, 'base64')) };
    }
    return resolveScalar(tag, text);
  }

  private mapping(pairs: Pair[]): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const pair of pairs) {
      if (isMergeKey(pair.key)) {
        this.merge(pair.value, out);
        continue;
      }
      const key = this.key(pair.key, pair.value);
      setOwn(out, key, this.node(pair.value));
    }
    return out;
  }

  /** `<<: *base` or `<<: [*a, *b]`: earlier maps in a list take precedence. */
  private merge(value: unknown, out: Record<string, unknown>): void {
    const wantMap = () => new YamlSyntaxError('yaml: map merge requires map or sequence of maps as the value');
    const target = this.target(value);
    if (isMap(target)) {
      for (const [k, v] of Object.entries(this.node(value) as Record<string, unknown>)) setOwn(out, k, v);
      return;
    }
    if (!isSeq(target) || isAlias(value)) throw wantMap();
    for (const item of [...target.items].reverse()) {
      if (!isMap(this.target(item))) throw wantMap();
      const merged = this.node(item) as Record<string, unknown>;
      for (const [k, v] of Object.entries(merged)) setOwn(out, k, v);
    }
  }

  /** A map key as sigs.k8s.io/yaml turns it into a JSON key. */
  private key(keyNode: unknown, valueNode: unknown): string {
    const t = this.target(keyNode);
    if (!isScalar(t)) throw new YamlSyntaxError(`yaml: invalid map key: ${JSON.stringify(this.node(keyNode))}`);
    const r = this.scalar(t);
    if (r.tag === INT_TAG) return (r.value as bigint).toString();
    if (r.tag === FLOAT_TAG) {
      const s = formatGoFloat(r.value as number, 32);
      return s === '+Inf' ? '.inf' : s === '-Inf' ? '-.inf' : s === 'NaN' ? '.nan' : s;
    }
    if (typeof r.value === 'boolean') return String(r.value);
    if (typeof r.value === 'string') return r.value;
    // A null key has no JSON form; Go's message prints the nil type oddly, like this.
    const value = stringifyJson(this.node(valueNode)) ?? 'null';
    throw new YamlSyntaxError(`unsupported map key of type: %!s(<nil>), key: <nil>, value: ${value}`);
  }
}

function isMergeKey(key: unknown): boolean {
  return isScalar(key) && key.source === '<<' && ((key.type === 'PLAIN' && !key.tag) || key.tag === MERGE_TAG);
}

/** The value the apiserver ends up with after YAML → JSON → its JSON decoding. */
function jsonValue(r: Resolved): unknown {
  if (r.tag === INT_TAG) return jsonNumber((r.value as bigint).toString());
  if (r.tag === FLOAT_TAG) {
    const f = r.value as number;
    if (!Number.isFinite(f)) throw new YamlSyntaxError(`json: unsupported value: ${formatGoFloat(f)}`);
    return jsonNumber(String(f));
  }
  return r.value;
}

function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
  else obj[key] = value;
}
