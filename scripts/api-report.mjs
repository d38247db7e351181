#!/usr/bin/env node
/**
 * The public API of the package, as a report checked into the repo (docs/api-report.md), in the
 * manner of api-extractor's: every export of each entry point (`kapi`, `kapi/sdk`, `kapi/testing`)
 * with its type, the members of its interfaces and classes, and every named type of the project
 * those reach (a type reachable from the surface is part of it, exported or not). A change to the
 * surface is a visible diff in review; `npm run lint` fails when the report is out of date.
 * Exports without a doc comment are marked `(undocumented)`.
 *
 *   node scripts/api-report.mjs            check that docs/api-report.md matches the code
 *   node scripts/api-report.mjs --write    write it
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const reportFile = join(root, 'docs', 'api-report.md');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

/** Entry points from package.json's exports: `kapi/sdk` → src/sdk/index.ts. */
const entries = Object.entries(pkg.exports)
  .filter(([, target]) => typeof target === 'object' && target.types)
  .map(([sub, target]) => ({ name: sub === '.' ? pkg.name : `${pkg.name}/${sub.slice(2)}`, file: join(root, target.types.replace(/^\.\/dist\//, '').replace(/\.d\.ts$/, '.ts')) }));

const config = ts.getParsedCommandLineOfConfigFile(join(root, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => console.error(d.messageText) });
const program = ts.createProgram(entries.map((e) => e.file), { ...config.options, noEmit: true });
const checker = program.getTypeChecker();
const FLAGS = ts.TypeFormatFlags.NoTruncation | ts.TypeFormatFlags.WriteArrowStyleSignature;

const inProject = (decl) => {
  const f = decl.getSourceFile().fileName;
  return f.startsWith(join(root, 'src')) && !f.includes('/node_modules/');
};
const where = (decl) => relative(root, decl.getSourceFile().fileName);
const documented = (symbol) =>
  symbol.getDocumentationComment(checker).length > 0 ||
  // (`export * as x from`: the comment is the export declaration's.)
  (symbol.declarations ?? []).some((d) => ts.getJSDocCommentsAndTags(ts.isNamespaceExport(d) ? d.parent : d).length > 0);
// One line, and types named as in the source (never by a path of this machine).
const oneLine = (s) => s.replace(/import\("[^"]*"(?:, \{[^}]*\}\s*\})?\)\./g, '').replace(/\s+/g, ' ');

/** Named project types a type mentions (aliases, interfaces, classes, enums), to print them too. */
function mentioned(type, out, seen = new Set()) {
  if (seen.has(type)) return;
  seen.add(type);
  const named = type.aliasSymbol ?? type.getSymbol();
  if (named?.declarations?.some(inProject) && named.flags & (ts.SymbolFlags.TypeAlias | ts.SymbolFlags.Interface | ts.SymbolFlags.Class | ts.SymbolFlags.Enum)) out.add(named);
  for (const t of type.aliasTypeArguments ?? []) mentioned(t, out, seen);
  if (type.isUnionOrIntersection()) for (const t of type.types) mentioned(t, out, seen);
  if (type.flags & ts.TypeFlags.Object) {
    for (const t of checker.getTypeArguments?.(type) ?? []) mentioned(t, out, seen);
    // Anonymous object types (literals, mapped types such as Omit<...>): their members' types.
    if (!(named?.flags & (ts.SymbolFlags.Interface | ts.SymbolFlags.Class)) || type.aliasSymbol) {
      for (const p of checker.getPropertiesOfType(type)) mentioned(checker.getTypeOfSymbol(p), out, seen);
    }
    for (const s of [...type.getCallSignatures(), ...type.getConstructSignatures()]) {
      for (const p of s.getParameters()) mentioned(checker.getTypeOfSymbol(p), out, seen);
      mentioned(s.getReturnType(), out, seen);
    }
  }
}

/** The members of an object type, one line each (public ones: private and # members are not the contract). */
function members(type, out) {
  const lines = [];
  for (const p of checker.getPropertiesOfType(type)) {
    const decl = p.valueDeclaration ?? p.declarations?.[0];
    if (!decl) continue;
    const mods = ts.getCombinedModifierFlags(decl);
    if (mods & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected) || p.name.startsWith('#') || p.name.startsWith('__')) continue;
    const t = checker.getTypeOfSymbolAtLocation(p, decl);
    mentioned(t, out);
    const optional = p.flags & ts.SymbolFlags.Optional ? '?' : '';
    const ro = mods & ts.ModifierFlags.Readonly ? 'readonly ' : '';
    lines.push(`  - \`${ro}${p.name}${optional}: ${oneLine(checker.typeToString(t, decl, FLAGS))}\``);
  }
  for (const s of type.getCallSignatures()) lines.push(`  - call \`${oneLine(checker.signatureToString(s, undefined, FLAGS))}\``);
  return lines;
}

/** A symbol's entry: what it is, its type or signature, its members. */
function describe(symbol, name, out) {
  const s = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
  const decl = s.declarations?.[0];
  // A re-export's own doc comment counts (anywhere along its chain of aliases).
  let aliasDocumented = false;
  for (let a = symbol; a && a !== s && a.flags & ts.SymbolFlags.Alias; a = checker.getImmediateAliasedSymbol(a)) aliasDocumented ||= documented(a);
  const doc = documented(s) || aliasDocumented ? '' : ' (undocumented)';
  const lines = [];
  if (s.flags & ts.SymbolFlags.ValueModule) {
    // A module re-exported as a namespace (the generated built-in types): its size, not each member.
    const count = checker.getExportsOfModule(s).length;
    lines.push(`- namespace **${name}**: ${count} exports of \`${decl ? relative(root, decl.getSourceFile().fileName).replace(/^dist\//, '') : '?'}\`${doc}`);
  } else if (s.flags & ts.SymbolFlags.Class) {
    const instance = checker.getDeclaredTypeOfSymbol(s);
    const ctor = checker.getTypeOfSymbolAtLocation(s, decl);
    lines.push(`- class **${name}**${doc}`);
    for (const c of ctor.getConstructSignatures()) lines.push(`  - new \`${oneLine(checker.signatureToString(c, undefined, FLAGS))}\``);
    for (const c of ctor.getConstructSignatures()) for (const p of c.getParameters()) mentioned(checker.getTypeOfSymbol(p), out);
    lines.push(...members(instance, out));
  } else if (s.flags & ts.SymbolFlags.Interface) {
    lines.push(`- interface **${name}**${doc}`);
    lines.push(...members(checker.getDeclaredTypeOfSymbol(s), out));
  } else if (s.flags & ts.SymbolFlags.TypeAlias) {
    const t = checker.getDeclaredTypeOfSymbol(s);
    const text = oneLine(decl.type.getText());
    lines.push(`- type **${name}** = \`${text}\`${doc}`);
    mentioned(t, out);
    if (t.flags & ts.TypeFlags.Object && !t.isUnionOrIntersection()) lines.push(...members(t, out));
  } else if (s.flags & ts.SymbolFlags.Function) {
    lines.push(`- function **${name}**${doc}`);
    for (const sig of checker.getTypeOfSymbolAtLocation(s, decl).getCallSignatures()) {
      lines.push(`  - \`${oneLine(checker.signatureToString(sig, undefined, FLAGS))}\``);
      for (const p of sig.getParameters()) mentioned(checker.getTypeOfSymbol(p), out);
      mentioned(sig.getReturnType(), out);
    }
  } else if (s.flags & ts.SymbolFlags.Enum) {
    lines.push(`- enum **${name}**${doc}`);
  } else {
    const t = checker.getTypeOfSymbolAtLocation(s, decl);
    lines.push(`- const **${name}**: \`${oneLine(checker.typeToString(t, decl, FLAGS))}\`${doc}`);
    mentioned(t, out);
  }
  return { lines, where: decl ? where(decl) : '?', undocumented: doc !== '' };
}

let text = `# kapi's public API

GENERATED by \`node scripts/api-report.mjs --write\` from the entry points of package.json; \`npm run lint\`
fails when it differs from the code. Each export with its type and members, then the project's types the
surface reaches without exporting them (part of the contract all the same).

`;
let total = 0;
let undocumented = 0;
for (const entry of entries) {
  const source = program.getSourceFile(entry.file);
  const moduleSymbol = checker.getSymbolAtLocation(source);
  const exports = checker.getExportsOfModule(moduleSymbol).sort((a, b) => a.name.localeCompare(b.name));
  const reached = new Set();
  const exported = new Set(exports.map((e) => (e.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(e) : e)));
  text += `## \`${entry.name}\` (${relative(root, entry.file)})\n\n`;
  for (const e of exports) {
    const d = describe(e, e.name, reached);
    total++;
    if (d.undocumented) undocumented++;
    text += `${d.lines.join('\n')}\n`;
  }
  // The types the surface reaches without exporting them, and those they reach in turn.
  const printed = new Set();
  const pending = [...reached].filter((s) => !exported.has(s));
  const extra = [];
  while (pending.length > 0) {
    const s = pending.shift();
    if (printed.has(s) || exported.has(s)) continue;
    printed.add(s);
    const more = new Set();
    const d = describe(s, s.name, more);
    extra.push({ name: s.name, text: `${d.lines.join('\n')}\n  - from \`${d.where}\`\n` });
    for (const m of more) if (!printed.has(m) && !exported.has(m)) pending.push(m);
  }
  if (extra.length > 0) {
    text += `\n### Reached from \`${entry.name}\`, not exported\n\n`;
    for (const x of extra.sort((a, b) => a.name.localeCompare(b.name))) text += x.text;
  }
  text += '\n';
}
text += `---\n${total} exports, ${undocumented} without a doc comment.\n`;

if (process.argv.includes('--write')) {
  writeFileSync(reportFile, text);
  console.log(`api-report: ${relative(root, reportFile)} written: ${total} exports, ${undocumented} without a doc comment`);
} else {
  let current = '';
  try {
    current = readFileSync(reportFile, 'utf8');
  } catch {
    // missing: reported below
  }
  if (current !== text) {
    console.error(`api-report: the public API differs from ${relative(root, reportFile)}; review the change and run node scripts/api-report.mjs --write`);
    process.exit(1);
  }
}
