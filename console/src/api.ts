/**
 * The console's one way to the API: same-origin requests with the session's cookie and CSRF header, so every
 * request is the signed-in user's own (the console has no rights of its own). Errors come back as the server's
 * Status.
 */

export interface Status {
  kind?: string;
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: { name?: string; group?: string; kind?: string; causes?: Array<{ reason?: string; message?: string; field?: string }> };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Obj = Record<string, any>;

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: Status | undefined,
  ) {
    super(body?.message ?? `HTTP ${status}`);
  }
}

export interface Answer {
  status: number;
  json: Obj;
  warnings: string[];
}

let csrf = '';
/** Called when a request finds the session gone (401): the app shows the sign-in page again. */
let onSignedOut: () => void = () => {};

export function setSession(token: string, signedOut: () => void): void {
  csrf = token;
  onSignedOut = signedOut;
}

function headers(extra: Record<string, string> = {}): Record<string, string> {
  return { 'x-kapi-csrf': csrf, ...extra };
}

/** `Warning: 299 - "text"` headers, as the server sends them. */
function warningsOf(h: Headers): string[] {
  const raw = h.get('warning');
  if (!raw) return [];
  const out: string[] = [];
  const re = /\d{3} \S+ "((?:[^"\\]|\\.)*)"/g;
  for (let m = re.exec(raw); m; m = re.exec(raw)) out.push(m[1].replace(/\\(.)/g, '$1'));
  return out;
}

export async function request(method: string, path: string, opts: { body?: string; contentType?: string; accept?: string; signal?: AbortSignal } = {}): Promise<Answer> {
  const res = await fetch(path, {
    method,
    credentials: 'same-origin',
    headers: headers({ accept: opts.accept ?? 'application/json', ...(opts.contentType ? { 'content-type': opts.contentType } : {}) }),
    body: opts.body,
    signal: opts.signal,
  });
  const text = await res.text();
  let json: Obj = {};
  try {
    json = text ? (JSON.parse(text) as Obj) : {};
  } catch {
    json = { message: text };
  }
  if (res.status === 401) onSignedOut();
  if (!res.ok) throw new ApiError(res.status, json as Status);
  return { status: res.status, json, warnings: warningsOf(res.headers) };
}

export const get = (path: string, accept?: string, signal?: AbortSignal) => request('GET', path, { accept, signal });

export const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';

/** One watch event. */
export interface WatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: Obj;
}

/**
 * A watch, read as newline-delimited JSON from a streamed response; `onEvents` gets the events of each chunk
 * together. Resolves when the server ends the stream; rejects with ApiError when the server refuses it.
 */
export async function watch(path: string, accept: string, onEvents: (events: WatchEvent[]) => void, signal: AbortSignal, onOpen: () => void = () => {}): Promise<void> {
  const res = await fetch(path, { credentials: 'same-origin', headers: headers({ accept }), signal });
  if (res.status === 401) onSignedOut();
  if (!res.ok || !res.body) {
    let body: Status | undefined;
    try {
      body = (await res.json()) as Status;
    } catch {
      body = undefined;
    }
    throw new ApiError(res.status, body);
  }
  onOpen();
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    buffered += value;
    const events: WatchEvent[] = [];
    let nl = buffered.indexOf('\n');
    let start = 0;
    while (nl >= 0) {
      const line = buffered.slice(start, nl).trim();
      if (line) events.push(JSON.parse(line) as WatchEvent);
      start = nl + 1;
      nl = buffered.indexOf('\n', start);
    }
    buffered = buffered.slice(start);
    if (events.length) onEvents(events);
  }
}

/** The path of a collection or an object: `/api/v1` or `/apis/<group>/<version>`, the namespace when there is one. */
export function resourcePath(r: { group: string; version: string; resource: string; namespaced: boolean }, namespace?: string, name?: string): string {
  const base = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
  const ns = r.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  return `${base}${ns}/${r.resource}${name !== undefined ? `/${encodeURIComponent(name)}` : ''}`;
}

/**
 * A collection kept current, in plain JSON: listed, then watched from the list's resourceVersion (listed again
 * after a 410, resumed a second after the stream ends); `onItems` gets all items after the list and after each
 * change. It stops with the signal, or at a refusal (400, 403, 404), which goes to `onError` as other errors do.
 */
export async function follow(path: string, query: Record<string, string>, onItems: (items: Obj[]) => void, onError: (e: ApiError) => void, signal: AbortSignal): Promise<void> {
  const items = new Map<string, Obj>();
  const key = (o: Obj) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
  const url = (extra: Record<string, string>) => `${path}?${new URLSearchParams({ ...query, ...extra })}`;
  let rv = '';
  let relist = true;
  while (!signal.aborted) {
    try {
      if (relist) {
        const listed = await get(url({}), 'application/json', signal);
        items.clear();
        for (const o of (listed.json.items ?? []) as Obj[]) items.set(key(o), o);
        rv = listed.json.metadata?.resourceVersion ?? '';
        relist = false;
        onItems([...items.values()]);
      }
      await watch(
        url({ watch: '1', resourceVersion: rv, allowWatchBookmarks: 'true' }),
        'application/json',
        (events) => {
          let changed = false;
          for (const e of events) {
            if (e.type === 'ERROR') {
              if (e.object.code === 410) relist = true;
              continue;
            }
            rv = e.object.metadata?.resourceVersion ?? rv;
            if (e.type === 'BOOKMARK') continue;
            if (e.type === 'DELETED') items.delete(key(e.object));
            else items.set(key(e.object), e.object);
            changed = true;
          }
          if (changed) onItems([...items.values()]);
        },
        signal,
      );
    } catch (e) {
      if (signal.aborted) return;
      if (e instanceof ApiError && e.status === 410) relist = true;
      else if (e instanceof ApiError) {
        onError(e);
        if (e.status === 400 || e.status === 403 || e.status === 404) return;
      }
    }
    if (signal.aborted) return;
    await new Promise((r) => setTimeout(r, 1000));
  }
}
