/**
 * The REST operations of a resource as kube-openapi publishes them (the routes
 * of apiextensions-apiserver's OpenAPI builder): paths, operation ids and tags
 * (GetOperationIDAndTags), descriptions, parameters, request and response
 * types, x-kubernetes-action and x-kubernetes-group-version-kind; rendered as
 * OpenAPI v2 path items and OpenAPI v3 path objects.
 */
import { actionParameters, nameParameter, NAMESPACE, PRETTY, type Parameter } from './parameters.js';
import { DELETE_OPTIONS, PATCH, SCALE, STATUS, V2_PREFIX, V3_PREFIX, type GroupVersionKind, type Schema } from './schema-types.js';
import { isGoDigit, isGoLetter } from '../machinery/go-text.js';

export interface ResourceInfo extends GroupVersionKind {
  plural: string;
  namespaced: boolean;
  /** Definition names of the kind and of its list. */
  kindDefinition: string;
  listDefinition: string;
  /** Verbs served (discovery's); every verb when absent. */
  verbs?: readonly string[];
  status?: boolean;
  scale?: boolean;
  /** Built-in resources also take strategic merge patches. */
  strategicMergePatch?: boolean;
}

export interface RouteOptions {
  /** Publish the fieldValidation query parameter (only when the server honours it: kubectl then relies on it). */
  fieldValidation?: boolean;
}

type Method = 'get' | 'put' | 'post' | 'delete' | 'patch';

export interface Route {
  path: string;
  method: Method;
  action: string;
  operationId: string;
  tag: string;
  description: string;
  /** Path and query parameters, then the body parameter if any. */
  params: Parameter[];
  consumes: string[];
  responses: { code: number; description: string; ref: string }[];
  gvk: GroupVersionKind;
}

const PRODUCES = ['application/json', 'application/yaml'];
const VERB_PREFIXES = ['get', 'log', 'read', 'replace', 'patch', 'delete', 'deletecollection', 'watch', 'connect', 'proxy', 'list', 'create'];

/** The routes upstream's builder installs for a resource, limited to its verbs. */
export function resourceRoutes(r: ResourceInfo, opts: RouteOptions = {}): Route[] {
  const has = (verb: string) => !r.verbs || r.verbs.includes(verb);
  const prefix = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
  const routes: Route[] = [];
  let root = `${prefix}/${r.plural}`;
  const name = nameParameter(r.kind);
  const bodies = new Map<string, Parameter>();
  const body = (ref: string, required: boolean) => {
    const key = `${ref}/${required}`;
    let p = bodies.get(key);
    if (!p) bodies.set(key, (p = { name: 'body', in: 'body', description: '', required, schemaRef: ref }));
    return p;
  };
  const add = (path: string, method: Method, action: string, verb: string, sample: string, read?: string, operation?: string) =>
    routes.push(route(r, root, path, method, action, verb, sample, read ? body(read, action !== 'delete') : undefined, operation, opts, name));
  if (r.namespaced) {
    if (has('list')) add('', 'get', 'list', 'list', r.listDefinition, undefined, `list${r.kind}ForAllNamespaces`);
    root = `${prefix}/namespaces/{namespace}/${r.plural}`;
  }
  if (has('list')) add('', 'get', 'list', 'list', r.listDefinition);
  if (has('create')) add('', 'post', 'post', 'create', r.kindDefinition, r.kindDefinition);
  if (has('deletecollection')) add('', 'delete', 'deletecollection', 'deletecollection', STATUS);
  if (has('get')) add('/{name}', 'get', 'get', 'read', r.kindDefinition);
  if (has('update')) add('/{name}', 'put', 'put', 'replace', r.kindDefinition, r.kindDefinition);
  if (has('delete')) add('/{name}', 'delete', 'delete', 'delete', STATUS, DELETE_OPTIONS);
  if (has('patch')) add('/{name}', 'patch', 'patch', 'patch', r.kindDefinition, PATCH);
  for (const [sub, sample] of [
    ['status', r.kindDefinition],
    ['scale', SCALE],
  ] as const) {
    if (!(sub === 'status' ? r.status : r.scale)) continue;
    add(`/{name}/${sub}`, 'get', 'get', 'read', sample);
    add(`/{name}/${sub}`, 'put', 'put', 'replace', sample, sample);
    add(`/{name}/${sub}`, 'patch', 'patch', 'patch', sample, PATCH);
  }
  return routes;
}

function route(
  r: ResourceInfo,
  root: string,
  path: string,
  method: Method,
  action: string,
  verb: string,
  sample: string,
  read: Parameter | undefined,
  operation: string | undefined,
  opts: RouteOptions,
  name: Parameter,
): Route {
  const sub = path.split('/')[2] ?? '';
  const full = root + path;
  const params: Parameter[] = [PRETTY];
  if (full.includes('{namespace}')) params.push(NAMESPACE);
  if (full.includes('{name}')) params.push(name);
  params.push(...actionParameters(action, opts.fieldValidation ?? false));
  if (read) params.push(read);
  const responses = [{ code: 200, description: 'OK', ref: sample }];
  if (action === 'post') responses.push({ code: 201, description: 'Created', ref: sample }, { code: 202, description: 'Accepted', ref: sample });
  if (action === 'delete') responses.push({ code: 202, description: 'Accepted', ref: sample });
  if (action === 'put') responses.push({ code: 201, description: 'Created', ref: sample });
  const op = operation ?? verb + (r.namespaced ? 'Namespaced' : '') + r.kind + (sub ? sub[0].toUpperCase() + sub.slice(1) : '');
  const { id, tag } = operationIdAndTag(op, full);
  const patchTypes = ['application/json-patch+json', 'application/merge-patch+json', ...(r.strategicMergePatch ? ['application/strategic-merge-patch+json'] : []), 'application/apply-patch+yaml'];
  return {
    path: full,
    method,
    action,
    operationId: id,
    tag,
    description: describe(r.kind, sub, verb),
    params,
    consumes: method === 'patch' ? patchTypes : ['application/json', 'application/yaml'],
    responses,
    gvk: { group: r.group, version: r.version, kind: r.kind },
  };
}

/** descriptionFor of the builder: "list objects of kind X", "read status of the specified X", "create a X", ... */
function describe(kind: string, sub: string, verb: string): string {
  let article = '';
  if (verb === 'list') article = ' objects of kind ';
  else if (verb === 'read' || verb === 'replace' || verb === 'patch') article = ' the specified ';
  else if (verb === 'create' || verb === 'delete') article = articleForNoun(kind);
  const of = sub ? ` ${sub} of` : '';
  if (verb === 'patch') return `partially update${of}${article}${kind}`;
  if (verb === 'deletecollection') return `delete collection of${sub ? of + ' a' : ''} ${kind}`;
  return `${verb}${of}${article}${kind}`;
}

/** endpoints.GetArticleForNoun with a space of padding. */
function articleForNoun(noun: string): string {
  if (!noun.endsWith('ss') && noun.endsWith('s')) return ' ';
  return /^[aeiou]/i.test(noun) ? ' an ' : ' a ';
}

/** GetOperationIDAndTags: `listStableExampleComV1NamespacedCronTab` and tag `stableExampleCom_v1`. */
export function operationIdAndTag(operation: string, path: string): { id: string; tag: string } {
  // The trie returns the shortest verb that prefixes the operation ("delete" for deletecollection...).
  const prefix = VERB_PREFIXES.filter((v) => operation.startsWith(v)).sort((a, b) => a.length - b.length)[0] ?? '';
  const rest = operation.slice(prefix.length);
  let parts = path.replace(/^\/+|\/+$/g, '').split('/');
  if (parts[0] === 'api') parts = ['apis', 'core', ...parts.slice(1)];
  let id = prefix;
  let tag = '';
  if (parts.length >= 2 && parts[0] === 'apis') {
    const group = parts[1].endsWith('.k8s.io') ? parts[1].slice(0, -'.k8s.io'.length) : parts[1];
    id += validOperationId(group, id !== '');
    tag = validOperationId(group, false);
    if (parts.length > 2) {
      id += validOperationId(parts[2], id !== '');
      tag += '_' + validOperationId(parts[2], false);
    }
  } else if (parts.length >= 1) tag = validOperationId(parts[0], false);
  return { id: id + validOperationId(rest, id !== ''), tag };
}

/** ToValidOperationID: letters, digits (not first) and underscores, capitalizing after each dropped character. */
function validOperationId(s: string, capitalizeFirst: boolean): string {
  let out = '';
  let capitalize = capitalizeFirst;
  let i = 0;
  for (const ch of s) {
    if (isGoLetter(ch) || ch === '_' || (i !== 0 && isGoDigit(ch))) {
      out += capitalize ? ch.toUpperCase() : ch;
      capitalize = false;
    } else capitalize = true;
    i += ch.length;
  }
  return out;
}

/** A shared-parameter reference resolver for v2 documents; undefined keeps the parameter inline. */
export type SharedParameterRef = (p: Parameter) => string | undefined;

/** The routes as OpenAPI v2 path items (path → item), parameters common to every operation of a path hoisted. */
export function v2PathItems(routes: readonly Route[], shared: SharedParameterRef): Map<string, Schema> {
  const out = new Map<string, Schema>();
  for (const [path, group] of byPath(routes)) {
    const common = commonParameters(group);
    const item: Schema = {};
    for (const m of ['get', 'put', 'post', 'delete', 'patch'] as const) {
      const r = group.find((x) => x.method === m);
      if (!r) continue;
      const op: Schema = {
        description: r.description,
        consumes: r.consumes,
        produces: PRODUCES,
        schemes: ['https'],
        tags: [r.tag],
        operationId: r.operationId,
        parameters: sortParameters(r.params.filter((p) => !common.has(p))).map((p) => v2Parameter(p, shared)),
        responses: v2Responses(r),
        'x-kubernetes-action': r.action,
        'x-kubernetes-group-version-kind': { group: r.gvk.group, kind: r.gvk.kind, version: r.gvk.version },
      };
      item[m] = op;
    }
    item.parameters = sortParameters([...common.values()]).map((p) => v2Parameter(p, shared));
    out.set(path, item);
  }
  return out;
}

function v2Responses(r: Route): Schema {
  const responses: Schema = {};
  for (const x of [...r.responses].sort((a, b) => a.code - b.code)) responses[String(x.code)] = { description: x.description, schema: { $ref: V2_PREFIX + x.ref } };
  responses['401'] = { description: 'Unauthorized' };
  return responses;
}

/** A parameter as written inline in a v2 document. */
export function v2Parameter(p: Parameter, shared?: SharedParameterRef): Schema {
  const name = shared?.(p);
  if (name) return { $ref: `#/parameters/${name}` };
  if (p.in === 'body') {
    const body: Schema = { name: p.name, in: 'body' };
    if (p.required) body.required = true;
    body.schema = { $ref: V2_PREFIX + (p.schemaRef as string) };
    return body;
  }
  const out: Schema = { uniqueItems: true, type: p.type ?? 'string', description: p.description, name: p.name, in: p.in };
  if (p.required) out.required = true;
  return out;
}

/** The routes as OpenAPI v3 path objects; shared parameters become `#/components/parameters/` references. */
export function v3Paths(routes: readonly Route[], shared?: SharedParameterRef): Map<string, Schema> {
  const param = (p: Parameter): Schema => {
    const name = shared?.(p);
    return name ? { $ref: `#/components/parameters/${name}` } : v3Parameter(p);
  };
  const out = new Map<string, Schema>();
  for (const [path, group] of byPath(routes)) {
    const common = commonParameters(group);
    const item: Schema = {};
    for (const m of ['get', 'put', 'post', 'delete', 'patch'] as const) {
      const r = group.find((x) => x.method === m);
      if (!r) continue;
      const op: Schema = { tags: [r.tag], description: r.description, operationId: r.operationId };
      const params = sortParameters(r.params.filter((p) => p.in !== 'body' && !common.has(p)));
      if (params.length) op.parameters = params.map(param);
      const body = r.params.find((p) => p.in === 'body');
      if (body) {
        const content: Schema = {};
        for (const c of r.consumes) content[c] = { schema: { $ref: V3_PREFIX + (body.schemaRef as string) } };
        op.requestBody = body.required ? { content, required: true } : { content };
      }
      const responses: Schema = {};
      for (const x of [...r.responses].sort((a, b) => a.code - b.code)) {
        const content: Schema = {};
        for (const c of PRODUCES) content[c] = { schema: { $ref: V3_PREFIX + x.ref } };
        responses[String(x.code)] = { description: x.description, content };
      }
      responses['401'] = { description: 'Unauthorized' };
      op.responses = responses;
      op['x-kubernetes-action'] = r.action;
      op['x-kubernetes-group-version-kind'] = { group: r.gvk.group, kind: r.gvk.kind, version: r.gvk.version };
      item[m] = op;
    }
    item.parameters = sortParameters([...common.values()]).map(param);
    out.set(path, item);
  }
  return out;
}

/** A parameter as written inline in a v3 document. */
export function v3Parameter(p: Parameter): Schema {
  const out: Schema = { name: p.name, in: p.in, description: p.description };
  if (p.required) out.required = true;
  out.schema = { type: p.type ?? 'string', uniqueItems: true };
  return out;
}

function byPath(routes: readonly Route[]): Map<string, Route[]> {
  const m = new Map<string, Route[]>();
  for (const r of routes) {
    const list = m.get(r.path);
    if (list) list.push(r);
    else m.set(r.path, [r]);
  }
  return m;
}

/** Non-body parameters present in every route of a path (parameter objects are shared, so identity tells). */
function commonParameters(routes: readonly Route[]): Set<Parameter> {
  const counts = new Map<Parameter, number>();
  for (const r of routes) for (const p of r.params) counts.set(p, (counts.get(p) ?? 0) + 1);
  const out = new Set<Parameter>();
  for (const [p, n] of counts) if (n === routes.length && p.in !== 'body') out.add(p);
  return out;
}

function sortParameters(ps: Parameter[]): Parameter[] {
  return [...ps].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.in < b.in ? -1 : a.in > b.in ? 1 : 0));
}
