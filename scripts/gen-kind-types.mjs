#!/usr/bin/env node
/**
 * Generates src/api/kinds/<group>-<version>.ts: TypeScript interfaces of the built-in API types, as their JSON
 * reads, from kapi's Go type model (src/api/go-types.ts) and its documentation (src/api/go-type-docs.ts), one
 * module per API package, and src/api/kinds/index.ts naming them as client-go's imports do (corev1, appsv1,
 * metav1, ...). The SDK exports them (`import type { corev1 } from 'kapi/sdk'`).
 *
 *   node scripts/gen-kind-types.mjs           write the files
 *   node scripts/gen-kind-types.mjs --check   exit 1 when a file differs from what it would write (npm run lint)
 *
 * JSON types: strings, booleans and numbers as themselves (int64 too: kapi's JSON reads what fits a double);
 * []byte a base64 string; Time and MicroTime RFC 3339 strings; Quantity and IntOrString a string or a number;
 * RawExtension and JSON any JSON; FieldsV1 an object. Every field may be left out, except those upstream
 * marks required; an object's apiVersion and kind are its own.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { withHeader } from './generated.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const check = process.argv.includes('--check');
const GENERATOR = 'scripts/gen-kind-types.mjs from src/api/go-types.ts, src/api/go-type-docs.ts and src/openapi/apiextensions-v1-definitions.ts';

/** The JSON text inside the first String.raw`…` of a file. */
function rawJson(file) {
  const text = readFileSync(join(root, file), 'utf8');
  const start = text.indexOf('String.raw`') + 'String.raw`'.length;
  return JSON.parse(text.slice(start, text.indexOf('`', start)));
}

const goTypesText = readFileSync(join(root, 'src/api/go-types.ts'), 'utf8');
const packagesAt = goTypesText.indexOf('GO_PACKAGES');
const PACKAGES = JSON.parse(goTypesText.slice(goTypesText.indexOf('{', packagesAt), goTypesText.indexOf(';\n', packagesAt)));
const STRUCTS = rawJson('src/api/go-types.ts');
const DOCS = rawJson('src/api/go-type-docs.ts');
/** apiextensions' descriptions are in its published OpenAPI (src/api/go-type-docs.ts has the API groups' types.go only). */
const APIEXTENSIONS_OPENAPI = (() => {
  const text = readFileSync(join(root, 'src/openapi/apiextensions-v1-definitions.ts'), 'utf8');
  const start = text.indexOf('= {', text.indexOf('APIEXTENSIONS_V1_DEFINITIONS')) + 2;
  // One definition per line, each ending in a comma (the last one too).
  return JSON.parse(text.slice(start, text.lastIndexOf('};') + 1).replace(/,\s*\}$/, '}'));
})();
/** A struct's descriptions ('' for the type's own), from go-type-docs or, for apiextensions, its OpenAPI. */
function docsOf(id) {
  if (DOCS[id]) return DOCS[id];
  const def = APIEXTENSIONS_OPENAPI[`io.k8s.apiextensions-apiserver.pkg.apis.${packageOf(id).replace('/', '.')}.${nameOf(id)}`];
  if (!def) return {};
  const out = { '': def.description };
  for (const [field, schema] of Object.entries(def.properties ?? {})) out[field] = schema.description;
  return out;
}

const fileOf = (pkg) => pkg.replace('/', '-');
/** client-go's alias of a package: core/v1 → corev1. */
const aliasOf = (pkg) => pkg.replace('/', '');
const packageOf = (id) => id.slice(0, id.indexOf('.'));
const nameOf = (id) => id.slice(id.indexOf('.') + 1);

const SPECIALS = {
  '@Time': 'string',
  '@MicroTime': 'string',
  '@Duration': 'string',
  '@Quantity': 'string | number',
  '@IntOrString': 'string | number',
  '@RawExtension': 'unknown',
  '@JSON': 'unknown',
  '@FieldsV1': 'Record<string, unknown>',
};
const SCALARS = { string: 'string', bool: 'boolean', bytes: 'string', int32: 'number', int64: 'number', int: 'number', uint32: 'number', uint64: 'number', float64: 'number' };

/** The TypeScript type of a Go type expression, in package `pkg` (other packages' structs through their alias). */
function tsType(expr, pkg, uses) {
  let t = expr.endsWith('@items') ? expr.slice(0, -'@items'.length) : expr;
  if (t.startsWith('*')) return tsType(t.slice(1), pkg, uses);
  if (t.startsWith('[]')) {
    const elem = tsType(t.slice(2), pkg, uses);
    return elem.includes(' ') ? `Array<${elem}>` : `${elem}[]`;
  }
  if (t.startsWith('map[string]')) return `Record<string, ${tsType(t.slice('map[string]'.length), pkg, uses)}>`;
  if (t in SPECIALS) return SPECIALS[t];
  if (t in SCALARS) return SCALARS[t];
  if (!STRUCTS[t]) throw new Error(`unknown type ${expr}`);
  const other = packageOf(t);
  if (other === pkg) return nameOf(t);
  uses.add(other);
  return `${aliasOf(other)}.${nameOf(t)}`;
}

/** A JSDoc comment of upstream's text, at `indent`. */
function doc(text, indent) {
  if (!text) return '';
  const lines = text.replace(/\*\//g, '*\\/').split('\n');
  if (lines.length === 1) return `${indent}/** ${lines[0]} */\n`;
  return `${indent}/**\n${lines.map((l) => `${indent} *${l ? ` ${l}` : ''}`).join('\n')}\n${indent} */\n`;
}

const PROPERTY = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

function structDecl(id, pkg, uses) {
  const s = STRUCTS[id];
  const name = nameOf(id);
  const docs = docsOf(id);
  let out = doc(docs[''], '');
  if (s.jsonForm) {
    const schema = 'JSONSchemaProps';
    const form = { orArray: `${schema} | ${schema}[]`, orBool: `boolean | ${schema}`, orStringArray: `${schema} | string[]` }[s.jsonForm];
    return `${out}export type ${name} = ${form};\n`;
  }
  const inline = s.fields.filter((f) => f.inline).map((f) => tsType(f.type, pkg, uses));
  const fields = s.fields.filter((f) => !f.inline);
  if (fields.length === 0 && inline.length === 0 && !s.typeMeta) return `${out}export type ${name} = Record<string, never>;\n`;
  out += `export interface ${name}${inline.length ? ` extends ${inline.join(', ')}` : ''} {\n`;
  if (s.typeMeta) {
    const { group, version } = PACKAGES[pkg];
    out += `  /** The object's group and version. */\n  apiVersion?: '${group ? `${group}/${version}` : version}';\n  /** The object's kind. */\n  kind?: '${name}';\n`;
  }
  for (const f of fields) {
    out += doc(docs[f.json], '  ');
    const key = PROPERTY.test(f.json) ? f.json : JSON.stringify(f.json);
    out += `  ${key}${f.required ? '' : '?'}: ${tsType(f.type, pkg, uses)};\n`;
  }
  return `${out}}\n`;
}

function moduleOf(pkg) {
  const uses = new Set();
  const ids = Object.keys(STRUCTS)
    .filter((id) => packageOf(id) === pkg)
    .sort();
  const decls = ids.map((id) => structDecl(id, pkg, uses)).join('\n');
  const { group, version } = PACKAGES[pkg];
  const imports = [...uses].sort().map((p) => `import type * as ${aliasOf(p)} from './${fileOf(p)}.js';\n`).join('');
  const head = `/** The types of ${pkg} (${group ? `group ${group}` : 'the core group'}, version ${version}), as their JSON reads. */\n`;
  return `${head}${imports}${imports ? '\n' : ''}${decls}`;
}

const dir = join(root, 'src/api/kinds');
/** Versions upstream no longer serves, which kapi serves only when asked (--runtime-config): not typed for the SDK. */
const REMOVED = new Set(['batch/v1beta1', 'discovery/v1beta1', 'policy/v1beta1']);
const packages = [...new Set(Object.keys(STRUCTS).map(packageOf))].filter((p) => !REMOVED.has(p)).sort();
const files = new Map();
for (const pkg of packages) files.set(`${fileOf(pkg)}.ts`, withHeader(GENERATOR, moduleOf(pkg)));
files.set(
  'index.ts',
  withHeader(
    GENERATOR,
    `/** The built-in API types by package, named as client-go's imports are (corev1, appsv1, metav1, ...). */\n${packages
      .map((p) => `/** The types of ${p}${PACKAGES[p].group ? ` (${PACKAGES[p].group})` : ' (the core group)'}. */\nexport type * as ${aliasOf(p)} from './${fileOf(p)}.js';\n`)
      .join('')}`,
  ),
);

if (check) {
  let stale = [];
  let present = [];
  try {
    present = readdirSync(dir).filter((f) => f.endsWith('.ts'));
  } catch {
    // none yet
  }
  for (const [f, text] of files) {
    let have;
    try {
      have = readFileSync(join(dir, f), 'utf8');
    } catch {
      have = undefined;
    }
    if (have !== text) stale.push(f);
  }
  stale = stale.concat(present.filter((f) => !files.has(f)));
  if (stale.length > 0) {
    console.error(`gen-kind-types: src/api/kinds differs from the Go type model (${stale.join(', ')}): run node scripts/gen-kind-types.mjs`);
    process.exit(1);
  }
} else {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const [f, text] of files) writeFileSync(join(dir, f), text);
  console.log(`wrote ${files.size} files to src/api/kinds`);
}
