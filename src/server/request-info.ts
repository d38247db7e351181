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
}

export type DiscoveryRequest =
  | { kind: 'api-versions' }
  | { kind: 'api-groups' }
  | { kind: 'group'; group: string }
  | { kind: 'group-version'; group: string; version: string };

export type RequestInfo = ResourceRequest | DiscoveryRequest | { kind: 'other'; path: string };

const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

export function parseRequestInfo(method: string, path: string, query: URLSearchParams): RequestInfo {
  const parts = path.split('/').filter((p) => p !== '');
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
      verb = method.toLowerCase();
  }
  return {
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
}

/** Go's strconv.ParseBool, as apiserver reads boolean query parameters. */
export function isTrue(v: string | null): boolean {
  return v === '1' || v === 't' || v === 'T' || v === 'true' || v === 'TRUE' || v === 'True';
}

/** A path with nothing the WHATWG URL parser would rewrite: no percent-escapes, dot segments, backslashes or fragment. */
const PLAIN_PATH = /^\/[\w\-.~:@!$&'()*+,;=/]*$/;

/**
 * A request target's path and query. Plain paths (nearly every API request)
 * are split directly; anything else goes through `URL`, which decodes and
 * normalizes it. Both give the same result for plain paths; the split skips a
 * full URL parse per request.
 */
export function parseTarget(target: string): { path: string; query: URLSearchParams } {
  const q = target.indexOf('?');
  const path = q < 0 ? target : target.slice(0, q);
  if (PLAIN_PATH.test(path) && !path.includes('/.') && !target.includes('#')) {
    return { path, query: new URLSearchParams(q < 0 ? '' : target.slice(q + 1)) };
  }
  const url = new URL(target, 'https://kapi');
  return { path: url.pathname, query: url.searchParams };
}
