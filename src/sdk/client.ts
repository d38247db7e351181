/**
 * A client of the Kubernetes API: JSON requests by group, version and resource, over a transport that is
 * either kapi's loopback (in-process controllers and `kapi.client()`, through the server's whole request
 * path) or HTTPS to any API server (`connect()` with a kubeconfig, sdk/kubeconfig.ts). Failures come back
 * as the server's Status, as StatusError. ResourceClient is typed by the objects it handles.
 */
import { StatusError, type Status } from '../machinery/status.js';
import type { LoopbackRequest, LoopbackSink } from '../api/serving.js';
import type { KObject } from '../api/object.js';

/** Sends one request; the returned function abandons it. */
export type Transport = (request: LoopbackRequest, sink: LoopbackSink) => () => void;

/** A resource as the API addresses it, as apimachinery's schema.GroupVersionResource. */
export interface GroupVersionResource {
  /** The API group ('' for the core group: pods, configmaps...). */
  group: string;
  version: string;
  /** The plural resource name, e.g. `deployments`. */
  resource: string;
}

/** The parts of one request besides its method and path. */
export interface RequestOptions {
  /** Query parameters; undefined ones are left out. */
  query?: Record<string, string | undefined>;
  /** Sent as JSON. */
  body?: unknown;
  /** The body's Content-Type (default application/json; e.g. application/merge-patch+json for a patch). */
  contentType?: string;
  /** The Accept header (default application/json). */
  accept?: string;
  /**
   * The answer's body is neither kept nor parsed when it is a success (it resolves with an empty body): for requests
   * whose answer only matters by its status, such as a deletecollection of many objects (whose body lists them all).
   */
  discardBody?: boolean;
}

/** What a watch tells, as client-go's watch.Interface result channel. */
export interface WatchHandlers {
  /** One event: ADDED, MODIFIED, DELETED, BOOKMARK or ERROR (its object a Status), as the server sends them. */
  event(type: string, object: KObject): void;
  /** The stream ended (err: it could not start, or broke). */
  closed(err?: Error): void;
}

/** A JSON answer, or a StatusError for a failure. */
export interface Reply {
  status: number;
  body: KObject;
}

/** The longest watch event line read (the server's objects are far smaller: 3 MiB requests). */
const MAX_WATCH_LINE = 64 * 1024 * 1024;

/** A safety net beyond the server's own request timeout (60 s), which answers first. */
const DEFAULT_TIMEOUT_MS = 70_000;

/**
 * A client of a Kubernetes API server, as client-go's REST client: made by `connect()` (a kubeconfig) or
 * `server.client()` (kapi in the process). A failed request rejects with a StatusError; one not answered
 * within 70 s with a 504 Timeout.
 */
export class Client {
  constructor(
    /** Sends the requests (kapi's loopback, or HTTPS to a server). */
    private readonly transport: Transport,
    /** A bearer token, or where to get it for each request (a token file that is rotated); none: the transport authenticates. */
    private readonly token: string | (() => string | undefined) | undefined,
    /** The User-Agent: its product is the field manager of this client's writes. */
    readonly userAgent: string,
  ) {}

  /** The verbs on one resource (a group, version and resource, or a resource defined with `defineResource`). */
  resource<T extends KObject = KObject, In extends KObject = T>(r: GroupVersionResource | { gvr: GroupVersionResource }): ResourceClient<T, In> {
    return new ResourceClient<T, In>(this, 'gvr' in r ? r.gvr : r);
  }

  /** One request and its whole JSON answer. */
  request(method: string, path: string, opts: RequestOptions = {}): Promise<Reply> {
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let status = 0;
      let cancel: () => void = () => {};
      const timer = setTimeout(() => {
        cancel();
        reject(new StatusError(504, 'Timeout', `the loopback request ${method} ${path} took longer than ${DEFAULT_TIMEOUT_MS} ms`));
      }, DEFAULT_TIMEOUT_MS);
      const discard = () => opts.discardBody === true && status > 0 && status < 400;
      cancel = this.transport(this.build(method, path, opts), {
        head: (code) => (status = code),
        data: (chunk) => {
          if (!discard()) chunks.push(chunk);
        },
        end: () => {
          clearTimeout(timer);
          if (discard()) {
            resolve({ status, body: {} as KObject });
            return;
          }
          let text = '';
          try {
            // A body longer than a string may be (512 MiB), or an error whose body is no object, fails here: the
            // request fails with it, never hangs.
            text = Buffer.concat(chunks).toString('utf8');
            const body = (text ? JSON.parse(text) : {}) as KObject;
            if (status >= 400) reject(statusErrorOf(status, body));
            else resolve({ status, body });
          } catch (err) {
            reject(new StatusError(status >= 400 ? status : 500, 'InternalError', text ? text.slice(0, 200) : (err as Error).message));
          }
        },
      });
    });
  }

  /** A watch: events as they come, until `close` or the server ends it. */
  watch(path: string, query: Record<string, string | undefined>, handlers: WatchHandlers): { close(): void } {
    let buffered = '';
    let status = 0;
    let errorText = '';
    let done = false;
    const finish = (err?: Error) => {
      if (done) return;
      done = true;
      handlers.closed(err);
    };
    const cancel = this.transport(this.build('GET', path, { query: { ...query, watch: 'true' } }), {
      head: (code) => (status = code),
      data: (chunk) => {
        if (status >= 400) {
          if (errorText.length < 1 << 20) errorText += chunk.toString('utf8');
          return;
        }
        buffered += chunk.toString('utf8');
        let nl: number;
        while ((nl = buffered.indexOf('\n')) >= 0) {
          const line = buffered.slice(0, nl);
          buffered = buffered.slice(nl + 1);
          if (!line.trim() || done) continue;
          let event: { type: string; object: KObject };
          try {
            event = JSON.parse(line);
          } catch (err) {
            finish(err as Error);
            cancel();
            return;
          }
          handlers.event(event.type, event.object);
        }
        // What is left is one unfinished line: bounded.
        if (buffered.length > MAX_WATCH_LINE) {
          finish(new Error(`a watch event longer than ${MAX_WATCH_LINE} characters`));
          cancel();
        }
      },
      end: () => {
        if (status >= 400) {
          let body: KObject = {};
          try {
            body = JSON.parse(errorText);
          } catch {
            // not a Status
          }
          finish(statusErrorOf(status, body));
        } else finish();
      },
    });
    return {
      close: () => {
        cancel();
        finish();
      },
    };
  }

  private build(method: string, path: string, opts: RequestOptions): LoopbackRequest {
    const query = new URLSearchParams();
    for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined) query.set(k, v);
    const target = query.size > 0 ? `${path}?${query}` : path;
    const headers: Record<string, string> = { 'user-agent': this.userAgent, accept: opts.accept ?? 'application/json' };
    const token = typeof this.token === 'function' ? this.token() : this.token;
    if (token) headers.authorization = `Bearer ${token}`;
    let body: Buffer | undefined;
    if (opts.body !== undefined) {
      body = Buffer.from(JSON.stringify(opts.body));
      headers['content-type'] = opts.contentType ?? 'application/json';
    }
    return { method, path: target, headers, body };
  }
}

function statusErrorOf(code: number, body: unknown): StatusError {
  // An answer whose body is no object (`null`, a number) is an error all the same.
  const s = (typeof body === 'object' && body !== null ? body : {}) as Partial<Status>;
  return new StatusError(code, (s.reason ?? '') as StatusError['reason'], typeof s.message === 'string' ? s.message : `the server answered ${code}`, s.details);
}

/** The path of a resource's collection, object or subresource. */
export function resourcePath(gvr: GroupVersionResource, namespace?: string, name?: string, subresource?: string): string {
  let p = gvr.group ? `/apis/${gvr.group}/${gvr.version}` : `/api/${gvr.version}`;
  if (namespace) p += `/namespaces/${encodeURIComponent(namespace)}`;
  p += `/${gvr.resource}`;
  if (name !== undefined) p += `/${encodeURIComponent(name)}`;
  if (subresource) p += `/${subresource}`;
  return p;
}

/** A delete's options (meta/v1 DeleteOptions). */
export interface DeleteOptionsBody {
  /** Delete only if the object still has this uid or resourceVersion (else 409 Conflict). */
  preconditions?: { uid?: string; resourceVersion?: string };
  /** What becomes of the dependents (objects it owns): deleted first (Foreground), after (Background), or kept (Orphan). */
  propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
}

/**
 * The verbs on one resource, its objects typed as T as they are read, and as `In` as they are created (fields with a
 * schema default may be left out: `client.resource<TypeOf<typeof v1>, InputOf<typeof v1>>(Foo)`).
 */
export class ResourceClient<T extends KObject = KObject, In extends KObject = T> {
  constructor(
    private readonly client: Client,
    readonly gvr: GroupVersionResource,
  ) {}

  /** One object (or its subresource); 404 NotFound when there is none. `namespace` is undefined for a cluster-scoped resource. */
  async get(namespace: string | undefined, name: string, opts: { accept?: string; subresource?: string } = {}): Promise<T> {
    return (await this.client.request('GET', resourcePath(this.gvr, namespace, name, opts.subresource), { accept: opts.accept })).body as T;
  }

  /** A list (`items` typed); query: labelSelector, fieldSelector, limit, continue, resourceVersion... */
  async list(namespace: string | undefined, query: Record<string, string | undefined> = {}, accept?: string): Promise<KObject & { items: T[] }> {
    return (await this.client.request('GET', resourcePath(this.gvr, namespace), { query, accept })).body as KObject & { items: T[] };
  }

  /** Creates the object, resolving to it as stored; 409 AlreadyExists, 422 Invalid. query: dryRun, fieldManager... */
  async create(namespace: string | undefined, obj: In, query: Record<string, string | undefined> = {}): Promise<T> {
    return (await this.client.request('POST', resourcePath(this.gvr, namespace), { body: obj, query })).body as T;
  }

  /** Replaces the object (PUT); with its metadata.resourceVersion, 409 Conflict when it changed meanwhile. */
  async update(namespace: string | undefined, name: string, obj: T, subresource?: string): Promise<T> {
    return (await this.client.request('PUT', resourcePath(this.gvr, namespace, name, subresource), { body: obj })).body as T;
  }

  /** The status subresource's update (the object's status is written, the rest kept). */
  updateStatus(namespace: string | undefined, name: string, obj: T): Promise<T> {
    return this.update(namespace, name, obj, 'status');
  }

  /** A JSON merge patch (or, with contentType, any other patch). */
  async patch(namespace: string | undefined, name: string, patch: unknown, opts: { contentType?: string; subresource?: string } = {}): Promise<T> {
    const contentType = opts.contentType ?? 'application/merge-patch+json';
    return (await this.client.request('PATCH', resourcePath(this.gvr, namespace, name, opts.subresource), { body: patch, contentType })).body as T;
  }

  /** Server-side apply of the fields `obj` names, owned by `fieldManager` (force: take them from other managers). */
  async apply(obj: Partial<In> & { metadata: { name?: string; namespace?: string } }, opts: { fieldManager: string; force?: boolean; subresource?: string }): Promise<T> {
    const path = resourcePath(this.gvr, obj.metadata.namespace, String(obj.metadata.name ?? ''), opts.subresource);
    const query = { fieldManager: opts.fieldManager, ...(opts.force ? { force: 'true' } : {}) };
    return (await this.client.request('PATCH', path, { body: obj, contentType: 'application/apply-patch+yaml', query })).body as T;
  }

  /**
   * Deletes the object; resolves to it (still there while finalizers hold it, or as it was for resources that
   * return it) or to a Success Status. 404 NotFound when there is none.
   */
  async delete(namespace: string | undefined, name: string, options: DeleteOptionsBody = {}): Promise<KObject> {
    const body = { apiVersion: 'v1', kind: 'DeleteOptions', ...options };
    return (await this.client.request('DELETE', resourcePath(this.gvr, namespace, name), { body })).body;
  }

  /** Deletes the objects a query selects (labelSelector, fieldSelector...; all without one); resolves to their list. */
  async deleteCollection(namespace: string | undefined, query: Record<string, string | undefined> = {}): Promise<KObject> {
    return (await this.client.request('DELETE', resourcePath(this.gvr, namespace), { query })).body;
  }

  /** A watch of the collection (query: resourceVersion, labelSelector, allowWatchBookmarks...); see Client.watch. */
  watch(namespace: string | undefined, query: Record<string, string | undefined>, handlers: WatchHandlers): { close(): void } {
    return this.client.watch(resourcePath(this.gvr, namespace), query, handlers);
  }
}
