#!/usr/bin/env node
/**
 * Generates src/api/go-types.ts, kapi's one source of the built-in API types: for each Go
 * struct of upstream's API packages, its fields with their JSON name, omitempty, Go type (pointer, slice,
 * map), protobuf field number, patch strategy and merge key, and list/map/struct markers. Read from the
 * types.go files of kubernetes/api, kubernetes/apimachinery, kubernetes/apiextensions-apiserver and
 * kubernetes/kube-aggregator (bare git mirrors, read with `git show`):
 *
 *   node scripts/gen-builtin-types.mjs <api mirror> <apimachinery mirror> <apiextensions-apiserver mirror> <kube-aggregator mirror>
 *
 * Facts only (names, numbers, types) are carried over; the output is data.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { withHeader } from './generated.mjs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const [apiRepo, machineryRepo, extRepo, aggregatorRepo] = process.argv.slice(2);
if (!apiRepo || !machineryRepo || !extRepo || !aggregatorRepo) {
  console.error('usage: gen-builtin-types.mjs <kubernetes/api git dir> <kubernetes/apimachinery git dir> <kubernetes/apiextensions-apiserver git dir> <kubernetes/kube-aggregator git dir>');
  process.exit(2);
}

/** Package id -> [git dir, directory, import path]. */
const PACKAGES = {
  'meta/v1': [machineryRepo, 'pkg/apis/meta/v1', 'k8s.io/apimachinery/pkg/apis/meta/v1'],
  'apiextensions/v1': [extRepo, 'pkg/apis/apiextensions/v1', 'k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1'],
  'apiregistration/v1': [aggregatorRepo, 'pkg/apis/apiregistration/v1', 'k8s.io/kube-aggregator/pkg/apis/apiregistration/v1'],
};
for (const p of ['core/v1', 'apps/v1', 'batch/v1', 'batch/v1beta1', 'policy/v1beta1', 'discovery/v1beta1', 'coordination/v1', 'events/v1', 'networking/v1', 'policy/v1', 'rbac/v1', 'authentication/v1', 'authorization/v1', 'autoscaling/v1', 'autoscaling/v2', 'discovery/v1', 'flowcontrol/v1', 'admissionregistration/v1', 'scheduling/v1', 'storage/v1', 'node/v1', 'certificates/v1', 'scheduling/v1alpha3', 'apidiscovery/v2']) {
  PACKAGES[p] = [apiRepo, p, `k8s.io/api/${p}`];
}
const BY_IMPORT = new Map(Object.entries(PACKAGES).map(([id, [, , imp]]) => [imp, id]));

/**
 * Types outside the packages read, or with a wire form of their own: the codecs know them by these names.
 * Time and MicroTime: RFC 3339 text / {seconds 1, nanos 2}; Duration: Go duration text / {duration 1};
 * Quantity: text / {string 1}; IntOrString: number or text / {type 1, intVal 2, strVal 3}; RawExtension
 * and FieldsV1 and apiextensions' JSON: any JSON / {raw 1} holding its JSON bytes.
 */
const SPECIAL = {
  'k8s.io/apimachinery/pkg/apis/meta/v1.Time': '@Time',
  'k8s.io/apimachinery/pkg/apis/meta/v1.MicroTime': '@MicroTime',
  'k8s.io/apimachinery/pkg/apis/meta/v1.Duration': '@Duration',
  'k8s.io/apimachinery/pkg/apis/meta/v1.FieldsV1': '@FieldsV1',
  'k8s.io/apimachinery/pkg/api/resource.Quantity': '@Quantity',
  'k8s.io/apimachinery/pkg/util/intstr.IntOrString': '@IntOrString',
  'k8s.io/apimachinery/pkg/runtime.RawExtension': '@RawExtension',
  'k8s.io/apimachinery/pkg/types.UID': 'string',
  'k8s.io/apimachinery/pkg/types.NodeName': 'string',
  'k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1.JSON': '@JSON',
};
const SCALARS = new Set(['string', 'bool', 'int', 'int32', 'int64', 'uint32', 'uint64', 'float64', 'byte']);

/**
 * Structs whose JSON is not their fields (a custom MarshalJSON): their protobuf message is the struct,
 * their JSON one of two forms. orArray: a schema or a list of schemas; orBool: a boolean or a schema;
 * orStringArray: a schema or a list of strings.
 */
const JSON_FORMS = {
  'apiextensions/v1.JSONSchemaPropsOrArray': 'orArray',
  'apiextensions/v1.JSONSchemaPropsOrBool': 'orBool',
  'apiextensions/v1.JSONSchemaPropsOrStringArray': 'orStringArray',
};

const git = (repo, ...args) => execFileSync('git', ['-C', repo, ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });

/** One package's declarations: structs, and named non-struct types (their underlying type expression). */
function readPackage(id) {
  const [repo, dir] = PACKAGES[id];
  const files = git(repo, 'ls-tree', '--name-only', 'HEAD', `${dir}/`)
    .split('\n')
    .filter((f) => f.endsWith('.go') && !/_test\.go$|zz_generated|generated\.pb\.go|_swagger_doc|_fuzz\.go/.test(f));
  const structs = {};
  const named = {};
  currentPackageName = dir.slice(dir.lastIndexOf('/') + 1);
  currentDocs = commentDocs[id] = {};
  for (const f of files) parseFile(git(repo, 'show', `HEAD:${f}`), structs, named);
  return { structs, named };
}

function parseFile(text, structs, named) {
  const imports = { '': '' };
  // Imports in a block (one per line) or alone (`import metav1 "k8s.io/..."`).
  for (const m of text.matchAll(/^\s*(?:import\s+)?(?:(\w+)\s+)?"([^"]+)"\s*$/gm)) {
    const path = m[2];
    imports[m[1] ?? path.slice(path.lastIndexOf('/') + 1)] = path;
  }
  const lines = text.split('\n');
  let comments = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (/^\s*\/\//.test(line)) {
      comments.push(line.replace(/^\s*\/\/ ?/, ''));
      continue;
    }
    const empty = /^type (\w+) struct ?\{\s*\}/.exec(line);
    if (empty) {
      structs[empty[1]] = { markers: markersOf(comments), fields: [] };
      comments = [];
      continue;
    }
    const st = /^type (\w+) struct \{\s*$/.exec(line);
    if (st) {
      const fields = [];
      let fieldComments = [];
      for (i++; i < lines.length && !/^\}/.test(lines[i]); i++) {
        const l = lines[i].trim();
        if (l.startsWith('//')) {
          fieldComments.push(l.replace(/^\/\/ ?/, ''));
          continue;
        }
        if (!l) {
          fieldComments = [];
          continue;
        }
        const f = parseField(l, fieldComments, imports);
        if (f) {
          fields.push(f);
          const doc = docOf(fieldComments);
          if (doc && f.json) (currentDocs[st[1]] ??= {})[f.json] = doc;
        }
        fieldComments = [];
      }
      structs[st[1]] = { markers: markersOf(comments), fields };
      const doc = docOf(comments);
      if (doc) (currentDocs[st[1]] ??= {})[''] = doc;
      comments = [];
      continue;
    }
    const nt = /^type (\w+) (\[\]\S+|map\[\S+\]\S+|\*?[\w.]+)\s*(\/\/.*)?$/.exec(line);
    if (nt && nt[2] !== 'struct') named[nt[1]] = { expr: resolveExpr(nt[2], imports), markers: markersOf(comments) };
    comments = [];
  }
}

/** Each package's documentation from its Go comments (for packages without types_swagger_doc_generated.go). */
const commentDocs = {};
let currentDocs = {};

/**
 * A comment block as swagger-doc's generator makes it documentation: marker (`+...`) and TODO lines out,
 * the lines of a paragraph joined, paragraphs apart, nothing after a `---` line.
 */
function docOf(comments) {
  const paragraphs = [[]];
  for (const raw of comments) {
    const line = raw.trim();
    if (line.startsWith('---')) break;
    if (line.startsWith('+') || line.startsWith('TODO')) continue;
    if (!line) {
      if (paragraphs[paragraphs.length - 1].length) paragraphs.push([]);
      continue;
    }
    paragraphs[paragraphs.length - 1].push(line);
  }
  return paragraphs.filter((p) => p.length).map((p) => p.join(' ')).join('\n\n');
}

/** `+listType=map` and the like, from a comment block. */
function markersOf(comments) {
  const m = {};
  for (const c of comments) {
    const x = /^\+(?:k8s:)?(listType|listMapKey|mapType|structType|patchStrategy|patchMergeKey|default|optional|required)(?:=(.*))?$/.exec(c.trim());
    if (!x) continue;
    if (x[1] === 'listMapKey') (m.listMapKeys ??= []).push(x[2]);
    else m[x[1]] = x[2] ?? true;
  }
  return m;
}

function parseField(l, comments, imports) {
  const tagMatch = /`([^`]*)`/.exec(l);
  const tags = {};
  if (tagMatch) for (const t of tagMatch[1].matchAll(/(\w+):"([^"]*)"/g)) tags[t[1]] = t[2];
  const head = l.replace(/`[^`]*`/, '').replace(/\/\/.*$/, '').trim();
  // A field: `Name Type` or an embedded `Type`; anything else (a block comment's text) is not one.
  if (!/^(\w+\s+)?[\w.*[\]]+$/.test(head)) return undefined;
  const parts = head.split(/\s+/);
  let name;
  let typeExpr;
  if (parts.length === 1) {
    typeExpr = parts[0];
    name = typeExpr.replace(/^\*/, '').replace(/^.*\./, '');
  } else {
    [name, typeExpr] = parts;
  }
  // Without a json tag, encoding/json uses the Go field name.
  const json = tags.json ?? (parts.length === 1 ? '' : parts[0]);
  if (json === '-') return undefined;
  const [jsonName, ...opts] = json.split(',');
  const embedded = parts.length === 1;
  const field = { go: name, json: jsonName, type: resolveExpr(typeExpr, imports), goType: goTypeName(typeExpr, imports) };
  if (opts.includes('omitempty')) field.omitempty = true;
  if (opts.includes('omitzero')) field.omitzero = true;
  // Embedded without a JSON name (TypeMeta, VolumeSource, ...): its fields are this object's.
  if (embedded && !jsonName) field.inline = true;
  if (opts.includes('inline')) field.inline = true;
  if (tags.protobuf && tags.protobuf !== '-') {
    const [wire, num, card] = tags.protobuf.split(',');
    field.proto = [Number(num), wire, card === 'rep' ? 'rep' : 'opt'];
  }
  if (tags.patchStrategy) field.patchStrategy = tags.patchStrategy;
  if (tags.patchMergeKey) field.patchMergeKey = tags.patchMergeKey;
  Object.assign(field, markersOf(comments));
  return field;
}

/**
 * The type as reflect names it in encoding/json's errors (`[]v1.Container`, `v1.Protocol`,
 * `map[string]string`); a pointer is named by its element, which is what the decoder fills.
 */
function goTypeName(expr, imports) {
  const pkgName = (alias) => {
    const path = imports[alias];
    return path ? path.slice(path.lastIndexOf('/') + 1) : alias;
  };
  const name = (e) => {
    if (e.startsWith('*')) return '*' + name(e.slice(1));
    if (e.startsWith('[]')) return '[]' + name(e.slice(2));
    const map = /^map\[([^\]]+)\](.+)$/.exec(e);
    if (map) return `map[${name(map[1])}]${name(map[2])}`;
    const dot = e.indexOf('.');
    if (dot >= 0) return `${pkgName(e.slice(0, dot))}.${e.slice(dot + 1)}`;
    return SCALARS.has(e) ? e : `${currentPackageName}.${e}`;
  };
  return name(expr).replace(/^\*/, '');
}
let currentPackageName = '';

/** A Go type expression with package qualifiers made full import paths (`*k8s.io/api/core/v1.Probe`). */
function resolveExpr(expr, imports) {
  if (expr.startsWith('*')) return '*' + resolveExpr(expr.slice(1), imports);
  if (expr.startsWith('[]')) return '[]' + resolveExpr(expr.slice(2), imports);
  const map = /^map\[([^\]]+)\](.+)$/.exec(expr);
  if (map) return `map[${resolveExpr(map[1], imports)}]${resolveExpr(map[2], imports)}`;
  const dot = expr.indexOf('.');
  if (dot < 0) return SCALARS.has(expr) ? expr : `.${expr}`; // .Name: this package
  const alias = expr.slice(0, dot);
  const path = imports[alias];
  if (!path) throw new Error(`unknown package qualifier in ${expr}`);
  return `${path}.${expr.slice(dot + 1)}`;
}

// Read every package, then resolve each field type to a scalar, a special, or a struct id (`core/v1.Pod`).
const packages = Object.fromEntries(Object.keys(PACKAGES).map((id) => [id, readPackage(id)]));

function canonical(expr, pkg, seen = new Set()) {
  if (expr.startsWith('*')) return '*' + canonical(expr.slice(1), pkg, seen);
  if (expr === '[]byte') return 'bytes';
  if (expr.startsWith('[]')) return '[]' + canonical(expr.slice(2), pkg, seen);
  const map = /^map\[([^\]]+)\](.+)$/.exec(expr);
  if (map) return `map[${canonical(map[1], pkg, seen)}]${canonical(map[2], pkg, seen)}`;
  if (SCALARS.has(expr)) return expr;
  let id;
  let name;
  if (expr.startsWith('.')) {
    id = pkg;
    name = expr.slice(1);
  } else {
    const dot = expr.lastIndexOf('.');
    const path = expr.slice(0, dot);
    name = expr.slice(dot + 1);
    if (SPECIAL[expr]) return SPECIAL[expr];
    id = BY_IMPORT.get(path);
    if (!id) throw new Error(`type ${expr} (in ${pkg}) is outside the packages read`);
  }
  const full = `${PACKAGES[id][2]}.${name}`;
  if (SPECIAL[full]) return SPECIAL[full];
  const p = packages[id];
  if (p.structs[name]) return `${id}.${name}`;
  const n = p.named[name];
  if (!n) throw new Error(`type ${name} of ${id} not found`);
  if (seen.has(full)) throw new Error(`type cycle at ${full}`);
  seen.add(full);
  const under = canonical(n.expr, id, seen);
  // A named slice (ExtraValue, Verbs) is a message of its own on the protobuf wire: {repeated items = 1}.
  if (under.startsWith('[]') && under !== 'bytes') return `${under}@items`;
  return under;
}

const out = {};
for (const [id, p] of Object.entries(packages)) {
  for (const [name, s] of Object.entries(p.structs)) {
    if (SPECIAL[`${PACKAGES[id][2]}.${name}`]) continue; // a wire form of its own
    const fields = [];
    let typeMeta = false;
    for (const f of s.fields) {
      let type;
      try {
        type = canonical(f.type, id);
      } catch (e) {
        // Types the API does not serve (internal helpers) may refer to anything: such structs are left out.
        type = undefined;
        if (f.proto) throw new Error(`${id}.${name}.${f.go}: ${e.message}`);
      }
      if (type === undefined) continue;
      // A named slice is a message of its own (items = 1) as a map value or a single field (`opt`); a
      // field tagged `rep` (ValidationRules) repeats its elements directly.
      if (f.proto?.[2] === 'rep' && type.startsWith('[]') && type.endsWith('@items')) type = type.slice(0, -'@items'.length);
      if (f.inline && !f.proto && /(^|\.)(TypeMeta)$/.test(type)) {
        typeMeta = true; // apiVersion and kind: the envelope's
        continue;
      }
      const entry = { json: f.json, type };
      // The Go type's name, where it says more than `type` (a named or struct type), for decoding errors.
      if (f.goType !== f.type.replace(/^\*/, '')) entry.goType = f.goType;
      for (const k of ['inline', 'omitempty', 'omitzero', 'proto', 'patchStrategy', 'patchMergeKey', 'listType', 'listMapKeys', 'mapType', 'structType', 'optional', 'required', 'default']) {
        if (f[k] !== undefined) entry[k] = f[k];
      }
      fields.push(entry);
    }
    const struct = { fields };
    if (typeMeta) struct.typeMeta = true;
    for (const k of ['structType', 'mapType']) if (s.markers[k]) struct[k] = s.markers[k];
    if (JSON_FORMS[`${id}.${name}`]) struct.jsonForm = JSON_FORMS[`${id}.${name}`];
    out[`${id}.${name}`] = struct;
  }
}

/**
 * The documentation of each struct and field, as upstream publishes it in its OpenAPI descriptions:
 * the SwaggerDoc maps of types_swagger_doc_generated.go ("" is the struct's own).
 */
function readDocs(id) {
  const [repo, dir] = PACKAGES[id];
  let text;
  try {
    // Packages without the file (apiextensions, apidiscovery) have no documentation here.
    text = execFileSync('git', ['-C', repo, 'show', `HEAD:${dir}/types_swagger_doc_generated.go`], { encoding: 'utf8', maxBuffer: 64 << 20, stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    // Without the generated file (kube-aggregator): the Go comments, as swagger-doc's generator reads them.
    // (apiextensions and apidiscovery have their documentation elsewhere: none here.)
    if (!id.startsWith('apiregistration/')) return {};
    const docs = {};
    for (const [struct, entries] of Object.entries(commentDocs[id] ?? {})) if (out[`${id}.${struct}`]) docs[`${id}.${struct}`] = entries;
    return docs;
  }
  const docs = {};
  for (const m of text.matchAll(/^var map_(\w+) = map\[string\]string\{\n([\s\S]*?)^\}/gm)) {
    const entries = {};
    for (const e of m[2].matchAll(/^\s*"((?:[^"\\]|\\.)*)":\s*"((?:[^"\\]|\\.)*)",\s*$/gm)) entries[goUnquote(e[1])] = goUnquote(e[2]);
    if (out[`${id}.${m[1]}`]) docs[`${id}.${m[1]}`] = entries;
  }
  return docs;
}

/** A Go interpreted string literal's body. */
function goUnquote(body) {
  return JSON.parse(`"${body.replace(/\\x([0-9a-fA-F]{2})/g, '\\u00$1').replace(/\\'/g, "'")}"`);
}

const docs = {};
for (const id of Object.keys(PACKAGES)) Object.assign(docs, readDocs(id));

/** group/version of each package: register.go's GroupName. */
const groups = {};
for (const [id, [repo, dir]] of Object.entries(PACKAGES)) {
  const reg = git(repo, 'show', `HEAD:${dir}/register.go`);
  const g = /GroupName\s*=\s*"([^"]*)"/.exec(reg);
  groups[id] = { group: g ? g[1] : '', version: id.slice(id.indexOf('/') + 1) };
}
groups['meta/v1'] = { group: 'meta.k8s.io', version: 'v1' };

const commits = [apiRepo, machineryRepo, extRepo, aggregatorRepo].map((r) => git(r, 'rev-parse', 'HEAD').trim());
const header = `/**
 * GENERATED by scripts/gen-builtin-types.mjs from upstream's API types (kubernetes/api ${commits[0].slice(0, 12)},
 * kubernetes/apimachinery ${commits[1].slice(0, 12)}, kubernetes/apiextensions-apiserver ${commits[2].slice(0, 12)},
 * kubernetes/kube-aggregator ${commits[3].slice(0, 12)}).
 * Do not edit: run the script again. See go-types-model.ts for what the entries mean.
 */
import type { GoPackage, GoStruct } from './go-types-model.js';

`;
// One struct per line, in a JSON text parsed at load: JSON.parse reads this much data several times
// faster than the JavaScript parser reads the same object literal (startup time).
const sorted = Object.entries(out).sort(([a], [b]) => (a < b ? -1 : 1));
const jsonText = `{\n${sorted.map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}`).join(',\n')}\n}`;
const body =
  header +
  `export const GO_PACKAGES: Record<string, GoPackage> = ${JSON.stringify(groups)};\n\n` +
  `export const GO_STRUCTS: Record<string, GoStruct> = JSON.parse(String.raw\`${jsonText.replace(/`/g, '\\u0060').replace(/\$\{/g, '\\u0024{')}\`);\n`;
const target = join(dirname(fileURLToPath(import.meta.url)), '..', 'src', 'api', 'go-types.ts');
writeFileSync(target, withHeader('scripts/gen-builtin-types.mjs from upstream\'s API types', body));
console.log(`${Object.keys(out).length} structs written to ${target} (${body.length} bytes)`);

// The documentation is read only to publish OpenAPI: kept as text until then (startup time).
const sortedDocs = Object.entries(docs).sort(([a], [b]) => (a < b ? -1 : 1));
const docsText = `{\n${sortedDocs.map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}`).join(',\n')}\n}`;
const docsBody =
  header.replace(/\nimport type[^\n]*\n/, '\n').replace('See go-types-model.ts for what the entries mean.', 'The SwaggerDoc of each struct of go-types.ts: "" is the struct\'s own, the rest its fields\' by JSON name.') +
  `const TEXT = String.raw\`${docsText.replace(/`/g, '\\u0060').replace(/\$\{/g, '\\u0024{')}\`;\n\n` +
  `let docs: Record<string, Record<string, string>> | undefined;\n\n` +
  `/** Struct id -> JSON field name ("" for the struct) -> description. */\n` +
  `export function goTypeDocs(): Record<string, Record<string, string>> {\n  docs ??= JSON.parse(TEXT) as Record<string, Record<string, string>>;\n  return docs;\n}\n`;
const docsTarget = join(dirname(target), 'go-type-docs.ts');
writeFileSync(docsTarget, withHeader('scripts/gen-builtin-types.mjs from upstream\'s API types', docsBody));
console.log(`${sortedDocs.length} structs' documentation written to ${docsTarget} (${docsBody.length} bytes)`);
