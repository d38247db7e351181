/**
 * A resource's objects, as the server's Table prints them, kept live by a watch: rows added, changed and deleted
 * are marked as such; the watch resumes from the last resourceVersion and lists again after a 410. Rows are drawn
 * only where the view is (10,000 objects scroll as 50 do), and watch events are applied once per frame.
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ApiError, get, resourcePath, TABLE, watch, type Obj, type WatchEvent } from './api.js';
import { can, type Resource } from './model.js';
import { href, type Route } from './route.js';
import { cellText, ErrorNote, Flash } from './parts.js';
import { humanDuration } from '../../src/printing/duration.js';

interface Row {
  key: string;
  namespace?: string;
  name: string;
  cells: unknown[];
  /** When the object was made (ms): its age is shown as it grows. */
  created?: number;
  mark?: 'added' | 'modified' | 'deleted';
  /** When the mark was set (performance.now()): marks end, and deleted rows go, in a sweep once a second. */
  markedAt?: number;
}

const ROW_HEIGHT = 30;
const PAGE = 500;
/** How long a deleted row stays, struck through, before it goes. */
const DELETED_SHOWN_MS = 4000;
/** How long an added or changed row is marked (app.css fades its colour in as long). */
const MARK_SHOWN_MS = 3000;

function rowOf(r: Obj): Row {
  const meta = r.object?.metadata ?? {};
  const name = String(meta.name ?? '');
  const created = meta.creationTimestamp ? Date.parse(meta.creationTimestamp) : NaN;
  return { key: `${meta.namespace ?? ''}/${name}`, namespace: meta.namespace, name, cells: Array.isArray(r.cells) ? r.cells : [], created: Number.isNaN(created) ? undefined : created };
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

export function ListPage({ resource, route }: { resource: Resource; route: Route }) {
  const namespace = resource.namespaced ? (route.query.get('ns') ?? '') : '';
  const labelSelector = route.query.get('l') ?? '';
  const fieldSelector = route.query.get('f') ?? '';
  /** The printer's columns shown (priority 0), with their places in each row's cells. */
  const [columns, setColumns] = useState<Array<{ name: string; description?: string; index: number; age: boolean }>>([]);
  const rows = useRef(new Map<string, Row>());
  const [version, setVersion] = useState(0);
  const [error, setError] = useState<ApiError | undefined>();
  const [live, setLive] = useState<'listing' | 'live' | 'reconnecting' | 'failed'>('listing');
  const [now, setNow] = useState(Date.now());
  const [namespaces, setNamespaces] = useState<string[]>([]);
  const [mayCreate, setMayCreate] = useState(false);
  const [scrollTop, setScrollTop] = useState(0);
  const [height, setHeight] = useState(600);
  const viewport = useRef<HTMLDivElement>(null);

  useEffect(() => {
    void Promise.all([can('create', resource, namespace || undefined), can('patch', resource, namespace || undefined)]).then(([c, p]) => setMayCreate(c && p));
  }, [resource, namespace]);

  useEffect(() => {
    const abort = new AbortController();
    const pending: WatchEvent[] = [];
    let frame = 0;
    let rv = '';
    const query = (extra: Record<string, string>) => {
      const q = new URLSearchParams(extra);
      if (labelSelector) q.set('labelSelector', labelSelector);
      if (fieldSelector) q.set('fieldSelector', fieldSelector);
      return `${resourcePath(resource, namespace)}?${q}`;
    };
    const flush = () => {
      frame = 0;
      for (const e of pending.splice(0)) {
        if (e.type === 'BOOKMARK') continue;
        for (const r of (e.object.rows ?? []) as Obj[]) {
          const row = rowOf(r);
          if (e.type === 'DELETED') {
            const old = rows.current.get(row.key);
            rows.current.set(row.key, { ...(old ?? row), mark: 'deleted', markedAt: performance.now() });
          } else {
            row.mark = e.type === 'ADDED' && !rows.current.has(row.key) ? 'added' : 'modified';
            row.markedAt = performance.now();
            rows.current.set(row.key, row);
          }
        }
      }
      setVersion((v) => v + 1);
    };
    const list = async () => {
      setLive('listing');
      setError(undefined);
      // Events of the watch before this list are older than it.
      pending.length = 0;
      const fresh = new Map<string, Row>();
      let cont = '';
      do {
        const page = await get(query({ limit: String(PAGE), ...(cont ? { continue: cont } : {}) }), TABLE, abort.signal);
        if (page.json.columnDefinitions) {
          // The server's Age is the age when listed: the page shows it growing (as the creation timestamp gives it).
          setColumns((page.json.columnDefinitions as Obj[]).map((c, index) => ({ name: String(c.name), description: c.description, index, priority: c.priority, age: c.name === 'Age' && c.type === 'date' })).filter((c) => !c.priority));
        }
        for (const r of (page.json.rows ?? []) as Obj[]) {
          const row = rowOf(r);
          fresh.set(row.key, row);
        }
        rv = page.json.metadata?.resourceVersion ?? rv;
        cont = page.json.metadata?.continue ?? '';
      } while (cont);
      rows.current = fresh;
      setVersion((v) => v + 1);
    };
    const run = async () => {
      let relist = true;
      while (!abort.signal.aborted) {
        try {
          if (relist) await list();
          relist = false;
          await watch(
            query({ watch: '1', resourceVersion: rv, allowWatchBookmarks: 'true' }),
            TABLE,
            (events) => {
              for (const e of events) {
                if (e.type === 'ERROR') {
                  if (e.object.code === 410) relist = true;
                  continue;
                }
                const next = e.object.rows?.[0]?.object?.metadata?.resourceVersion ?? e.object.metadata?.resourceVersion;
                if (next) rv = next;
                pending.push(e);
              }
              if (!frame) frame = requestAnimationFrame(flush);
            },
            abort.signal,
            () => {
              setLive('live');
              setError(undefined);
            },
          );
        } catch (err) {
          if (abort.signal.aborted) return;
          if (err instanceof ApiError && err.status === 410) relist = true;
          else if (err instanceof ApiError) {
            setError(err);
            if (err.status === 403 || err.status === 404 || err.status === 400) {
              // What was shown before belongs to another question: the table is emptied, the status says so.
              rows.current = new Map();
              setVersion((v) => v + 1);
              setLive('failed');
              return;
            }
          }
        }
        if (abort.signal.aborted) return;
        setLive('reconnecting');
        await new Promise((r) => setTimeout(r, 1000));
      }
    };
    void run();
    return () => {
      abort.abort();
      if (frame) cancelAnimationFrame(frame);
    };
  }, [resource, namespace, labelSelector, fieldSelector]);

  useEffect(() => {
    // Once a second: deleted rows go and marks end (the words for screen readers last as long as the colour);
    // every 5 s, ages grow.
    let seconds = 0;
    const tick = setInterval(() => {
      const at = performance.now();
      let changed = false;
      for (const [key, row] of rows.current) {
        if (!row.mark || row.markedAt === undefined) continue;
        if (row.mark === 'deleted' ? at - row.markedAt < DELETED_SHOWN_MS : at - row.markedAt < MARK_SHOWN_MS) continue;
        if (row.mark === 'deleted') rows.current.delete(key);
        else row.mark = undefined;
        changed = true;
      }
      if (changed) setVersion((v) => v + 1);
      if (++seconds % 5 === 0) setNow(Date.now());
    }, 1000);
    // The namespaces the user may list, offered in the namespace filter.
    get('/api/v1/namespaces').then(
      (a) => setNamespaces(((a.json.items ?? []) as Obj[]).map((n) => String(n.metadata?.name)).sort()),
      // A user who may not list namespaces gets the one every cluster has.
      () => setNamespaces(['default']),
    );
    return () => clearInterval(tick);
  }, []);

  useEffect(() => {
    const el = viewport.current;
    if (!el) return;
    const measure = () => setHeight(el.clientHeight);
    measure();
    const ro = new ResizeObserver(measure);
    ro.observe(el);
    return () => ro.disconnect();
  }, []);

  const sorted = useMemo(() => [...rows.current.values()].sort((a, b) => (a.namespace ?? '').localeCompare(b.namespace ?? '') || a.name.localeCompare(b.name)), [version]);
  const first = Math.max(0, Math.floor(scrollTop / ROW_HEIGHT) - 10);
  const last = Math.min(sorted.length, Math.ceil((scrollTop + height) / ROW_HEIGHT) + 10);
  const visible = sorted.slice(first, last);
  const showNamespace = resource.namespaced && !namespace;
  const present = useMemo(() => sorted.filter((r) => r.mark !== 'deleted').length, [sorted]);
  const allNamespacesForbidden = error?.status === 403 && resource.namespaced && !namespace;

  const setFilters = (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.target as HTMLFormElement);
    location.hash = href('list', resource, undefined, undefined, { ns: String(form.get('ns') ?? ''), l: String(form.get('l') ?? ''), f: String(form.get('f') ?? '') });
  };
  return (
    <>
      <Flash />
      <h1>
        {resource.kind} <span class="muted">{resource.group ? `${resource.group}/${resource.version}` : resource.version}</span>
      </h1>
      <div class="toolbar">
        <form onSubmit={setFilters} class="filters" aria-label="Filters">
          {resource.namespaced && (
            <label>
              Namespace <input name="ns" defaultValue={namespace} placeholder="all namespaces" size={14} list="namespaces" />
              <datalist id="namespaces">
                {namespaces.map((n) => (
                  <option key={n} value={n} />
                ))}
              </datalist>
            </label>
          )}
          <label>
            Labels <input name="l" defaultValue={labelSelector} placeholder="app=web,tier!=db" size={18} />
          </label>
          <label>
            Fields <input name="f" defaultValue={fieldSelector} placeholder="metadata.name=x" size={18} />
          </label>
          <button type="submit">Filter</button>
        </form>
        <span class={`live live-${live}`} role="status">
          {live === 'live' ? `${plural(present, 'object', 'objects')}, live` : live === 'listing' ? 'listing…' : live === 'failed' ? 'not listed' : 'reconnecting…'}
        </span>
        <a href={href('schema', resource)}>Schema</a>
        {mayCreate && resource.verbs.includes('create') && (
          <a class="button" href={href('new', resource, namespace || (resource.namespaced ? 'default' : undefined))}>
            Create
          </a>
        )}
      </div>
      {error && <ErrorNote error={error} />}
      {allNamespacesForbidden && <p class="hint">You may not list {resource.resource} in all namespaces: name one in the namespace filter.</p>}
      <div class="viewport" ref={viewport} onScroll={(e) => setScrollTop((e.target as HTMLDivElement).scrollTop)} tabIndex={0} aria-label={`${resource.kind} objects`}>
        <table class="grid rows" aria-rowcount={sorted.length + 1}>
          <thead>
            <tr>
              {showNamespace && <th scope="col">Namespace</th>}
              {columns.map((c) => (
                <th scope="col" key={c.name} title={c.description}>
                  {c.name}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {first > 0 && <tr style={{ height: `${first * ROW_HEIGHT}px` }} aria-hidden="true" />}
            {visible.map((row, i) => (
              <tr key={row.key} class={row.mark ? `mark-${row.mark}` : undefined} aria-rowindex={first + i + 2} data-name={row.name} title={row.mark}>
                {showNamespace && <td>{row.namespace}</td>}
                {columns.map((c, j) => {
                  // A browser clock behind the server's shows a new object as 0s old, not as <invalid>.
                  const text = c.age && row.created !== undefined ? humanDuration(Math.max(0, now - row.created)) : cellText(row.cells[c.index]);
                  return (
                    <td key={c.name}>
                      {j === 0 && row.mark !== 'deleted' ? <a href={href('object', resource, row.namespace, row.name)}>{text}</a> : text}
                      {/* The row's change in words, for those who do not see its colour. */}
                      {j === 0 && row.mark && <span class="sr-only"> ({row.mark})</span>}
                    </td>
                  );
                })}
              </tr>
            ))}
            {last < sorted.length && <tr style={{ height: `${(sorted.length - last) * ROW_HEIGHT}px` }} aria-hidden="true" />}
          </tbody>
        </table>
        {live === 'live' && sorted.length === 0 && <p class="muted">No objects.</p>}
      </div>
    </>
  );
}
