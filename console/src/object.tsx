/** One object: its metadata, conditions, owners and dependents, finalizers, managed fields, YAML and the Events about it. */
import { useEffect, useState } from 'preact/hooks';
import { stringify } from 'yaml';
import { ApiError, follow, get, request, resourcePath, type Obj } from './api.js';
import { can, resourceOfKind, type Resource } from './model.js';
import { href } from './route.js';
import { Conditions, ErrorNote, Flash, flash } from './parts.js';

type Tab = 'summary' | 'yaml' | 'events';
const TABS: Tab[] = ['summary', 'yaml', 'events'];
/** The dependents' search: objects of a kind a page asks for, and how many of a kind it reads at most. */
const PAGE = 500;
const MAX_SEARCHED = 10_000;

export function ObjectPage({ resource, resources, namespace, name }: { resource: Resource; resources: Resource[]; namespace?: string; name: string }) {
  const [obj, setObj] = useState<Obj | undefined>();
  const [error, setError] = useState<ApiError | undefined>();
  const [tab, setTab] = useState<Tab>('summary');
  const [events, setEvents] = useState<Obj[] | undefined>();
  const [dependents, setDependents] = useState<Array<{ r: Resource; o: Obj }> | undefined | 'not asked'>('not asked');
  const [searchGaps, setSearchGaps] = useState<string[]>([]);
  const [rights, setRights] = useState({ update: false, delete: false });
  const [gone, setGone] = useState(false);
  const [notLive, setNotLive] = useState<ApiError | undefined>();

  useEffect(() => {
    // The object as a get reads it (all a user with only `get` may do), then as it changes, where the resource
    // serves list and watch and the user may: a watch of it by name. Gone, it says so; not live, it says why.
    const abort = new AbortController();
    get(resourcePath(resource, namespace, name), undefined, abort.signal).then(
      (a) => {
        setObj(a.json);
        if (!resource.verbs.includes('list') || !resource.verbs.includes('watch')) return;
        void follow(
          resourcePath(resource, namespace),
          // A field selector escapes a backslash, `,` and `=` in its value.
          { fieldSelector: `metadata.name=${name.replace(/[\\,=]/g, (c) => `\\${c}`)}` },
          (items) => {
            setNotLive(undefined);
            if (items.length) {
              setObj(items[0]);
              setGone(false);
            } else setGone(true);
          },
          setNotLive,
          abort.signal,
        );
      },
      (e: ApiError) => abort.signal.aborted || setError(e),
    );
    void Promise.all([can('patch', resource, namespace, name), can('delete', resource, namespace, name)]).then(([update, del]) => setRights({ update, delete: del }));
    return () => abort.abort();
  }, [resource, namespace, name]);

  const uid = obj?.metadata?.uid as string | undefined;
  useEffect(() => {
    if (!uid) return;
    // Events name the object by uid; an object without a namespace has its Events in any. They come live too.
    const where = namespace ? `/api/v1/namespaces/${encodeURIComponent(namespace)}/events` : '/api/v1/events';
    const abort = new AbortController();
    void follow(where, { fieldSelector: `involvedObject.uid=${uid}` }, setEvents, () => setEvents([]), abort.signal);
    return () => abort.abort();
  }, [uid]);

  /**
   * Dependents, when asked for: objects whose owner references name this one, among the kinds the user may list (in
   * the object's namespace; for a cluster-scoped owner, every kind, in every namespace), page by page up to
   * MAX_SEARCHED of each kind; the kinds that could not be read, or were not read to the end, are named.
   */
  const findDependents = async () => {
    const uid = obj?.metadata.uid as string;
    setDependents(undefined);
    setSearchGaps([]);
    const candidates = resources.filter((r) => r.preferred && r.verbs.includes('list') && r.resource !== 'events' && (namespace === undefined || r.namespaced));
    const found: Array<{ r: Resource; o: Obj }> = [];
    const gaps: string[] = [];
    const searchKind = async (r: Resource) => {
      let token = '';
      for (let searched = 0; ; ) {
        const page = await get(`${resourcePath(r, namespace)}?limit=${PAGE}${token ? `&continue=${encodeURIComponent(token)}` : ''}`, 'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json');
        const items = (page.json.items ?? []) as Obj[];
        for (const o of items) if ((o.metadata?.ownerReferences ?? []).some((ref: Obj) => ref.uid === uid)) found.push({ r, o });
        searched += items.length;
        token = page.json.metadata?.continue ?? '';
        if (!token) return;
        if (searched >= MAX_SEARCHED) return void gaps.push(`${r.kind} (the first ${searched})`);
      }
    };
    // A few kinds at a time: the server serves everyone on one event loop.
    for (let i = 0; i < candidates.length; i += 4) {
      await Promise.all(candidates.slice(i, i + 4).map((r) => searchKind(r).catch((e: ApiError) => void gaps.push(`${r.kind} (${e.status === 403 ? 'not allowed' : e.message})`))));
    }
    setSearchGaps(gaps);
    setDependents(found);
  };

  if (error) return <ErrorNote error={error} />;
  if (gone && !obj) return <p role="alert">There is no {resource.kind} {name}{namespace ? ` in ${namespace}` : ''}.</p>;
  if (!obj) return <p class="loading">Loading…</p>;
  const meta = obj.metadata ?? {};
  // The tabs as WAI-ARIA's pattern has them: arrow keys, Home and End move between them.
  const tabKeys = (e: KeyboardEvent) => {
    const at = TABS.indexOf(tab);
    const next = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: TABS.length - 1 }[e.key];
    if (next === undefined) return;
    e.preventDefault();
    const t = TABS[(next + TABS.length) % TABS.length];
    setTab(t);
    document.getElementById(`tab-${t}`)?.focus();
  };
  const remove = async () => {
    if (!confirm(`Delete ${resource.kind} ${name}?`)) return;
    try {
      await request('DELETE', resourcePath(resource, namespace, name));
      flash(`${resource.kind} ${name} deleted${namespace ? ` from ${namespace}` : ''}.`);
      location.hash = href('list', resource, undefined, undefined, { ns: namespace ?? '' });
    } catch (e) {
      setError(e as ApiError);
    }
  };
  return (
    <>
      <h1>
        {resource.kind} <span class="objname">{meta.name}</span>
        {namespace && <span class="muted"> in {namespace}</span>}
      </h1>
      <Flash />
      {gone && <p role="alert">This {resource.kind} was deleted: what it was is shown below.</p>}
      {notLive && <p class="hint">Not kept live ({notLive.status === 403 ? 'you may not watch it' : notLive.message}): reload the page to see changes.</p>}
      <div class="toolbar">
        <a href={href('list', resource, undefined, undefined, { ns: namespace ?? '' })}>All {resource.resource}</a>
        {!gone && rights.update && resource.verbs.includes('patch') && (
          <a class="button" href={href('edit', resource, namespace, name)}>
            Edit
          </a>
        )}
        {!gone && rights.delete && resource.verbs.includes('delete') && (
          <button type="button" class="danger" onClick={remove}>
            Delete
          </button>
        )}
      </div>
      <div role="tablist" aria-label="Views of the object" class="tabs" onKeyDown={tabKeys}>
        {TABS.map((t) => (
          <button
            key={t}
            id={`tab-${t}`}
            role="tab"
            type="button"
            aria-selected={tab === t}
            aria-controls="tabpanel"
            tabIndex={tab === t ? 0 : -1}
            onClick={() => setTab(t)}
          >
            {t === 'summary' ? 'Summary' : t === 'yaml' ? 'YAML' : `Events${events ? ` (${events.length})` : ''}`}
          </button>
        ))}
      </div>
      <div id="tabpanel" role="tabpanel" aria-labelledby={`tab-${tab}`}>
      {tab === 'yaml' && (
        <pre class="yaml" tabIndex={0} aria-label="The object as YAML">
          {stringify(obj)}
        </pre>
      )}
      {tab === 'events' && <Events events={events} />}
      {tab === 'summary' && (
        <div class="summary">
          <dl>
            <dt>UID</dt>
            <dd>{meta.uid}</dd>
            <dt>Created</dt>
            <dd>{meta.creationTimestamp}</dd>
            <dt>Resource version</dt>
            <dd>{meta.resourceVersion}</dd>
            {meta.generation !== undefined && (
              <>
                <dt>Generation</dt>
                <dd>{meta.generation}</dd>
              </>
            )}
            {meta.deletionTimestamp && (
              <>
                <dt>Being deleted since</dt>
                <dd>{meta.deletionTimestamp}</dd>
              </>
            )}
            <dt>Labels</dt>
            <dd>{Object.entries(meta.labels ?? {}).map(([k, v]) => <span key={k} class="tag">{`${k}=${String(v)}`}</span>)}</dd>
            <dt>Finalizers</dt>
            <dd>{meta.finalizers?.length ? meta.finalizers.map((f: string) => <span key={f} class="tag">{f}</span>) : <span class="muted">none</span>}</dd>
          </dl>
          <h2>Conditions</h2>
          <Conditions conditions={obj.status?.conditions ?? []} />
          <h2>Owners</h2>
          {(meta.ownerReferences ?? []).length === 0 ? (
            <p class="muted">No owners.</p>
          ) : (
            <ul>
              {(meta.ownerReferences as Obj[]).map((o) => {
                const r = resourceOfKind(resources, o.apiVersion, o.kind);
                return (
                  <li key={o.uid}>
                    {o.kind} {r ? <a href={href('object', r, r.namespaced ? namespace : undefined, o.name)}>{o.name}</a> : o.name}
                    {o.controller ? ' (controller)' : ''}
                  </li>
                );
              })}
            </ul>
          )}
          <h2>Dependents</h2>
          {dependents === 'not asked' ? (
            <button type="button" onClick={() => void findDependents()}>
              Find dependents
            </button>
          ) : !dependents ? (
            <p class="muted">Looking…</p>
          ) : dependents.length === 0 ? (
            <p class="muted">No dependents{searchGaps.length > 0 ? ' found' : ''}.</p>
          ) : (
            <ul>
              {dependents.map(({ r, o }) => (
                <li key={o.metadata.uid}>
                  {r.kind} <a href={href('object', r, o.metadata.namespace, o.metadata.name)}>{o.metadata.name}</a>
                </li>
              ))}
            </ul>
          )}
          {dependents !== 'not asked' && dependents && searchGaps.length > 0 && <p class="hint">Not searched through: {searchGaps.join(', ')}.</p>}
          <h2>Managed fields</h2>
          <table class="grid">
            <thead>
              <tr>
                <th>Manager</th>
                <th>Operation</th>
                <th>API version</th>
                <th>Subresource</th>
                <th>Time</th>
                <th>Fields</th>
              </tr>
            </thead>
            <tbody>
              {((meta.managedFields ?? []) as Obj[]).map((m, i) => (
                <tr key={i}>
                  <td>{m.manager}</td>
                  <td>{m.operation}</td>
                  <td>{m.apiVersion}</td>
                  <td>{m.subresource ?? ''}</td>
                  <td>{m.time}</td>
                  <td>
                    <details>
                      <summary>{countFields(m.fieldsV1)} fields</summary>
                      <pre>{fieldList(m.fieldsV1).join('\n')}</pre>
                    </details>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      </div>
    </>
  );
}

function Events({ events }: { events?: Obj[] }) {
  if (!events) return <p class="loading">Loading…</p>;
  if (!events.length) return <p class="muted">No events.</p>;
  return (
    <table class="grid">
      <thead>
        <tr>
          <th>Type</th>
          <th>Reason</th>
          <th>From</th>
          <th>Message</th>
          <th>Count</th>
          <th>Last seen</th>
        </tr>
      </thead>
      <tbody>
        {events.map((e) => (
          <tr key={e.metadata.uid}>
            <td>{e.type}</td>
            <td>{e.reason}</td>
            <td>{e.source?.component ?? e.reportingComponent}</td>
            <td>{e.message}</td>
            <td>{e.count ?? 1}</td>
            <td>{e.lastTimestamp ?? e.eventTime ?? e.metadata.creationTimestamp}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** A fieldsV1 set as paths (`.spec.replicas`), without recursion (the set can be deep). */
function fieldList(fields: Obj | undefined): string[] {
  const out: string[] = [];
  const stack: Array<[string, Obj]> = [['', fields ?? {}]];
  while (stack.length && out.length < 2000) {
    const [prefix, node] = stack.pop()!;
    for (const k of Object.keys(node).reverse()) {
      if (k === '.') continue;
      const name = k.startsWith('f:') ? `.${k.slice(2)}` : `[${k}]`;
      const child = node[k] as Obj;
      if (child && typeof child === 'object' && Object.keys(child).some((c) => c !== '.')) stack.push([prefix + name, child]);
      else out.push(prefix + name);
    }
  }
  return out.sort();
}

function countFields(fields: Obj | undefined): number {
  return fieldList(fields).length;
}
