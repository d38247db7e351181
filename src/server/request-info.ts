/**
 * Parses a request path into what it addresses, as apiserver's
 * RequestInfoFactory does: API group and version, namespace, resource, name,
 * subresource and verb.
 */

export interface ResourceRequest {
  kind: 'resource';
  group: string;
  version: string;
  namespace?: string;
  resource: string;
  name?: string;
  subresource?: string;
  /** get, list, watch, create, update, patch, delete, deletecollection */
  verb: string;
  /** The path had more segments than resource/name/subresource. */
  extraParts: boolean;
  /** Came through the namespaced path form. */
  namespacedPath: boolean;
  /**
   * The one name a list or watch selects (`fieldSelector=metadata.name=x`): what authorization sees as the
   * request's name, as upstream's RequestInfoFactory sets it (a user allowed one name may watch it).
   */
  selectedName?: string;
}

export type DiscoveryRequest =
  | { kind: 'api-versions' }
  | { kind: 'api-groups' }
  | { kind: 'group'; group: string }
  | { kind: 'group-version'; group: string; version: string };

export type RequestInfo = ResourceRequest | DiscoveryRequest | { kind: 'other'; path: string };

const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

/**
 * The segments of a path, or undefined when it is not in clean form: every
 * segment non-empty (a trailing slash aside) and neither `.` nor `..`.
 * kube-apiserver's routes never match such paths, so they address nothing.
 */
function cleanSegments(path: string): string[] | undefined {
  const parts = path.split('/');
  if (parts[0] !== '') return undefined;
  if (parts[parts.length - 1] === '') parts.pop();
  parts.shift();
  for (const p of parts) if (p === '' || p === '.' || p === '..') return undefined;
  return parts;
}

export function parseRequestInfo(method: string, path: string, query: URLSearchParams): RequestInfo {
  const parts = cleanSegments(path);
  if (!parts) return { kind: 'other', path };
  if (parts[0] === 'api') {
    if (parts.length === 1) return { kind: 'api-versions' };
    if (parts.length === 2) return { kind: 'group-version', group: '', version: parts[1] };
    return resourceInfo(method, '', parts[1], parts.slice(2), query);
  }
  if (parts[0] === 'apis') {
    if (parts.length === 1) return { kind: 'api-groups' };
    if (parts.length === 2) return { kind: 'group', group: parts[1] };
    if (parts.length === 3) return { kind: 'group-version', group: parts[1], version: parts[2] };
    return resourceInfo(method, parts[1], parts[2], parts.slice(3), query);
  }
  return { kind: 'other', path };
}

function resourceInfo(method: string, group: string, version: string, rest: string[], query: URLSearchParams): RequestInfo {
  let watchPath = false;
  if (rest[0] === 'watch') {
    watchPath = true;
    rest = rest.slice(1);
  }
  let namespace: string | undefined;
  let namespacedPath = false;
  if (rest[0] === 'namespaces' && rest.length > 1) {
    namespace = rest[1];
    if (rest.length > 2 && !NAMESPACE_SUBRESOURCES.has(rest[2])) {
      rest = rest.slice(2);
      namespacedPath = true;
    }
  }
  if (rest.length === 0) return { kind: 'other', path: '' };
  const [resource, name, subresource] = rest;
  const watch = watchPath || isTrue(query.get('watch'));
  let verb: string;
  switch (method) {
    case 'GET':
    case 'HEAD':
      verb = watch ? 'watch' : name !== undefined ? 'get' : 'list';
      break;
    case 'POST':
      verb = 'create';
      break;
    case 'PUT':
      verb = 'update';
      break;
    case 'PATCH':
      verb = 'patch';
      break;
    case 'DELETE':
      verb = name !== undefined ? 'delete' : 'deletecollection';
      break;
    default:
      // RequestInfoFactory: a resource request with another method has no verb.
      verb = '';
  }
  const info: ResourceRequest = {
    kind: 'resource',
    group,
    version,
    namespace,
    resource,
    name,
    subresource,
    verb,
    extraParts: rest.length > 3,
    namespacedPath,
  };
  if (verb === 'list' || verb === 'watch') {
    const selected = nameOfFieldSelector(query.get('fieldSelector'));
    if (selected !== undefined) info.selectedName = selected;
  }
  return info;
}

/** RequiresExactMatch("metadata.name") of a field selector, when the name is a valid path segment. */
function nameOfFieldSelector(selector: string | null): string | undefined {
  if (!selector || selector.length > 4096) return undefined;
  // Terms are comma-separated; a backslash escapes a comma, an equals sign or itself.
  for (const term of selector.split(/(?<!\\),/)) {
    const m = /^\s*metadata\.name\s*==?(.*)$/.exec(term);
    if (!m || m[1].startsWith('=')) continue;
    const name = m[1].trim().replace(/\\(.)/g, '$1');
    return name && name !== '.' && name !== '..' && !name.includes('/') && !name.includes('%') ? name : undefined;
  }
  return undefined;
}

/** Go's strconv.ParseBool, as apiserver reads boolean query parameters. */
export function isTrue(v: string | null): boolean {
  return v === '1' || v === 't' || v === 'T' || v === 'true' || v === 'TRUE' || v === 'True';
}

/** A path with nothing to decode: no percent-escapes. */
const PLAIN_PATH = /^\/[\w\-.~:@!$&'()*+,;=/]*$/;
/** The scheme and authority of an absolute-form target (`http://host:port/path`), which HTTP/1.1 allows. */
const ABSOLUTE_FORM = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^/?]*/;
const BAD_ESCAPE = /%(?![0-9a-fA-F]{2})/;

/**
 * A request target's path and query, as Go's `url.ParseRequestURI` reads it
 * for kube-apiserver: the path is percent-decoded and nothing else (dot
 * segments, empty segments and backslashes are kept, so they address nothing).
 * Never throws: a target that cannot be read (a bad escape, a malformed
 * absolute form) gives undefined, which is a 400.
 */
export function parseTarget(target: string): { path: string; query: URLSearchParams } | undefined {
  const q = target.indexOf('?');
  let path = q < 0 ? target : target.slice(0, q);
  const query = new URLSearchParams(q < 0 ? '' : target.slice(q + 1));
  if (PLAIN_PATH.test(path)) return { path, query };
  if (path[0] !== '/') {
    const authority = ABSOLUTE_FORM.exec(path);
    if (!authority || !URL.canParse(authority[0])) return undefined;
    path = path.slice(authority[0].length) || '/';
  }
  if (!path.includes('%')) return { path, query };
  if (BAD_ESCAPE.test(path)) return undefined;
  try {
    return { path: decodeURIComponent(path), query };
  } catch {
    // Escapes that are not UTF-8: Go keeps the bytes; such a path addresses nothing here either.
    return { path: Buffer.from(path.replace(/%([0-9a-fA-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16))), 'latin1').toString('utf8'), query };
  }
}
