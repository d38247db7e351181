#!/usr/bin/env node
/**
 * The import rules of docs/architecture.md, run by `npm run lint`:
 *   1. a folder of src/ imports only from folders of lower layers (and from itself), type-only
 *      imports included: a type belongs to a layer too;
 *   2. no module of src/ imports itself again through others (no cycle of value imports: ESM
 *      would hand one of them an unfinished module).
 *
 *   node scripts/check-layers.mjs            check
 *   node scripts/check-layers.mjs --graph    print the folder-to-folder imports, counted
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');

/** The layers, from the bottom: a folder imports from lower rows only (never from its own row's other folders). */
export const LAYERS = [
  ['util'],
  ['api'],
  ['machinery'],
  ['schema', 'storage'],
  ['apply', 'printing', 'cache'],
  ['registry', 'openapi'],
  ['apis', 'sdk', 'discovery'],
  ['crd'],
  ['server'],
  ['controllers'],
  ['kapi'],
  ['index', 'cli'],
  ['testing'],
];
const rank = new Map(LAYERS.flatMap((folders, i) => folders.map((f) => [f, i])));

/** The top folder (or top file, without .ts) of a path under src/. */
function unit(file) {
  const [first, ...rest] = relative(src, file).split('/');
  return rest.length > 0 ? first : first.replace(/\.ts$/, '');
}

function sources(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sources(p);
    return e.name.endsWith('.ts') ? [p] : [];
  });
}

const resolve = (file, spec) => normalize(join(dirname(file), spec)).replace(/\.js$/, '.ts');

/** Whether an import or export declaration brings in values (not only types). */
function bringsValues(node) {
  if (ts.isExportDeclaration(node)) return !node.isTypeOnly;
  const clause = node.importClause;
  if (!clause) return true; // import './x.js': run for its effects
  if (clause.isTypeOnly) return false;
  if (clause.name) return true;
  const bindings = clause.namedBindings;
  return !bindings || ts.isNamespaceImport(bindings) || bindings.elements.length === 0 || bindings.elements.some((e) => !e.isTypeOnly);
}

const problems = [];
const unknown = new Set();
/** Value imports between files, for the cycle check. */
const graph = new Map();
const pairs = new Map();
for (const file of sources(src)) {
  const text = readFileSync(file, 'utf8');
  const from = unit(file);
  if (!rank.has(from)) unknown.add(from);
  for (const { fileName } of ts.preProcessFile(text, true, true).importedFiles) {
    if (!fileName.startsWith('.')) continue;
    const target = resolve(file, fileName);
    if (!target.startsWith(src + '/')) continue;
    const to = unit(target);
    if (to === from) continue;
    pairs.set(`${from} -> ${to}`, (pairs.get(`${from} -> ${to}`) ?? 0) + 1);
    if (!rank.has(to)) unknown.add(to);
    else if (rank.get(to) >= (rank.get(from) ?? -1)) problems.push(`an import goes ${rank.get(to) === rank.get(from) ? 'sideways' : 'up'}: ${relative(root, file)} -> ${relative(root, target)}`);
  }
  const values = [];
  for (const node of ts.createSourceFile(file, text, ts.ScriptTarget.Latest).statements) {
    if (!(ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) || !node.moduleSpecifier || !ts.isStringLiteral(node.moduleSpecifier)) continue;
    if (node.moduleSpecifier.text.startsWith('.') && bringsValues(node)) values.push(resolve(file, node.moduleSpecifier.text));
  }
  graph.set(file, values);
}
for (const u of unknown) problems.push(`src/${u} is in no layer: add it to LAYERS here and to docs/architecture.md`);

// Cycles: the strongly connected components of more than one module (Tarjan's algorithm, iterative).
const index = new Map();
const low = new Map();
const stack = [];
const onStack = new Set();
let next = 0;
for (const start of graph.keys()) {
  if (index.has(start)) continue;
  const work = [[start, 0]];
  index.set(start, next);
  low.set(start, next++);
  stack.push(start);
  onStack.add(start);
  while (work.length > 0) {
    const top = work[work.length - 1];
    const [v, i] = top;
    const edges = (graph.get(v) ?? []).filter((w) => graph.has(w));
    if (i < edges.length) {
      top[1]++;
      const w = edges[i];
      if (!index.has(w)) {
        index.set(w, next);
        low.set(w, next++);
        stack.push(w);
        onStack.add(w);
        work.push([w, 0]);
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
      continue;
    }
    work.pop();
    if (work.length > 0) {
      const parent = work[work.length - 1][0];
      low.set(parent, Math.min(low.get(parent), low.get(v)));
    }
    if (low.get(v) === index.get(v)) {
      const component = [];
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        component.push(relative(root, w));
      } while (w !== v);
      if (component.length > 1) problems.push(`modules import each other (values): ${component.sort().join(', ')}`);
    }
  }
}

if (process.argv.includes('--graph')) {
  for (const [pair, n] of [...pairs].sort()) console.log(`${String(n).padStart(4)}  ${pair}`);
}
for (const p of problems) console.error(`check-layers: ${p}`);
if (problems.length > 0) {
  console.error('check-layers: see docs/architecture.md: move what both sides need down a layer instead');
  process.exit(1);
}
