/** The kapi console: sign-in, the shell (header, resource navigation) and the overview. */
import { render } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ApiError, follow, setSession, type Obj } from './api.js';
import { forgetDecisions, gv, keepUnchanged, loadResources, type Resource } from './model.js';
import { href, mayLeave, useRoute } from './route.js';
import { ListPage } from './list.js';
import { ObjectPage } from './object.js';
import { SchemaPage } from './schema.js';
import { RightsPage } from './rights.js';
import { EditPage } from './edit.js';
import { Conditions, ErrorNote, Grid } from './parts.js';

interface Me {
  user: string;
  groups: string[];
  csrf: string;
}

async function session(method: 'GET' | 'POST' | 'DELETE', body?: unknown, csrf = ''): Promise<{ status: number; json: Obj }> {
  const res = await fetch('/console/session', {
    method,
    credentials: 'same-origin',
    headers: { 'content-type': 'application/json', 'x-kapi-csrf': csrf },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json().catch(() => ({}))) as Obj };
}

function SignIn({ onSignedIn, note }: { onSignedIn: (me: Me) => void; note?: string }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState(note ?? '');
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    const r = await session('POST', { token });
    setBusy(false);
    setToken('');
    if (r.status === 200) onSignedIn(r.json as Me);
    else setError(r.json.message ?? `sign-in failed (${r.status})`);
  };
  return (
    <main class="signin">
      <h1>kapi console</h1>
      <form onSubmit={submit} aria-label="Sign in">
        <label for="token">Bearer token</label>
        <input id="token" type="password" autocomplete="off" value={token} onInput={(e) => setToken((e.target as HTMLInputElement).value)} required />
        <p class="hint">The admin's is in <code>.kapi/admin.token</code>; <code>kubectl create token &lt;account&gt;</code> (kubectl 1.24 or later) makes one for a service account. Or open the one-time link <code>kapi serve</code> prints.</p>
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        {error && (
          <p role="alert" class="error">
            {error}
          </p>
        )}
      </form>
    </main>
  );
}

function Nav({ resources, current }: { resources: Resource[]; current?: { group: string; resource: string } }) {
  const [filter, setFilter] = useState('');
  const byGroup = useMemo(() => {
    const f = filter.toLowerCase();
    const groups = new Map<string, Resource[]>();
    for (const r of resources) {
      if (!r.preferred || !r.verbs.includes('list')) continue;
      if (f && !r.resource.includes(f) && !r.kind.toLowerCase().includes(f) && !r.group.includes(f) && !r.shortNames.includes(f)) continue;
      const list = groups.get(r.group) ?? [];
      list.push(r);
      groups.set(r.group, list);
    }
    return [...groups.entries()].sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b)));
  }, [resources, filter]);
  return (
    <nav aria-label="Resources">
      <input type="search" placeholder="Filter resources" aria-label="Filter resources" value={filter} onInput={(e) => setFilter((e.target as HTMLInputElement).value)} />
      {byGroup.map(([group, list]) => (
        <section key={group}>
          <h2>{group || 'core'}</h2>
          <ul>
            {list
              .sort((a, b) => a.kind.localeCompare(b.kind))
              .map((r) => (
                <li key={r.resource}>
                  <a href={href('list', r)} title={`${r.kind} (${r.resource})`} aria-current={current && current.group === r.group && current.resource === r.resource ? 'page' : undefined}>
                    {r.kind}
                  </a>
                </li>
              ))}
          </ul>
        </section>
      ))}
    </nav>
  );
}

function Overview({ resources, crds, error }: { resources: Resource[]; crds?: Obj[]; error?: ApiError }) {
  const groups = useMemo(() => {
    const m = new Map<string, Set<string>>();
    for (const r of resources) m.set(r.group, (m.get(r.group) ?? new Set()).add(r.version));
    return [...m.entries()];
  }, [resources]);
  return (
    <>
      <h1>Overview</h1>
      <section aria-labelledby="crds">
        <h2 id="crds">Custom resources</h2>
        {error && (error.status === 403 ? <p class="hint">You may not list CustomResourceDefinitions; the navigation shows the resources you may list.</p> : <ErrorNote error={error} />)}
        {crds && crds.length === 0 && <p>No CustomResourceDefinitions yet.</p>}
        {crds && crds.length > 0 && (
          <div class="wide">
          <table class="grid">
            <thead>
              <tr>
                <th>Name</th>
                <th>Versions</th>
                <th>Scope</th>
                <th>Conditions</th>
                <th>Stored versions</th>
                <th>Conversion</th>
              </tr>
            </thead>
            <tbody>
              {[...crds].sort((a, b) => String(a.metadata.name).localeCompare(b.metadata.name)).map((c) => {
                const served = (c.spec.versions as Obj[]).filter((v) => v.served);
                const storage = (c.spec.versions as Obj[]).find((v) => v.storage)?.name;
                const first = served.find((v) => v.storage) ?? served[0];
                const r = first && { group: c.spec.group, version: first.name, resource: c.spec.names.plural };
                return (
                  <tr key={c.metadata.name}>
                    <td>{r ? <a href={href('list', r)}>{c.metadata.name}</a> : c.metadata.name}</td>
                    <td>
                      {(c.spec.versions as Obj[]).map((v) => (
                        <span key={v.name} class="tag" title={`${v.served ? 'served' : 'not served'}${v.storage ? ', storage' : ''}${v.deprecated ? ', deprecated' : ''}`}>
                          {v.name}
                          {v.name === storage ? ' (storage)' : ''}
                          {v.served ? '' : ' (not served)'}{' '}
                          {v.served && <a href={href('schema', { group: c.spec.group, version: v.name, resource: c.spec.names.plural })}>schema</a>}
                        </span>
                      ))}
                    </td>
                    <td>{c.spec.scope}</td>
                    <td>
                      <Conditions conditions={c.status?.conditions ?? []} compact />
                    </td>
                    <td>{(c.status?.storedVersions ?? []).join(', ')}</td>
                    <td>{c.spec.conversion?.strategy ?? 'None'}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          </div>
        )}
      </section>
      <section aria-labelledby="groups">
        <h2 id="groups">API groups</h2>
        <Grid head={['Group', 'Versions', 'Resources']} rows={groups.map(([g, versions]) => [g || 'core', [...versions].join(', '), resources.filter((r) => r.group === g && r.preferred).length])} />
      </section>
    </>
  );
}

function App() {
  const [me, setMe] = useState<Me | undefined>();
  const [checked, setChecked] = useState(false);
  const [note, setNote] = useState<string | undefined>();
  const [resources, setResources] = useState<Resource[] | undefined>();
  const [loadError, setLoadError] = useState<ApiError | undefined>();
  const [crds, setCrds] = useState<Obj[] | undefined>();
  const [crdError, setCrdError] = useState<ApiError | undefined>();
  const rechecked = useRef(new Set<string>());
  const route = useRoute();

  const signedIn = (m: Me) => {
    setSession(m.csrf, () => {
      setMe(undefined);
      setNote('Your session ended: sign in again.');
    });
    forgetDecisions();
    setMe(m);
  };
  useEffect(() => {
    /** A one-time link's code, in the address when the page opens or pasted into it later. */
    const exchange = () => {
      const code = /(?:^#|&)code=([A-Za-z0-9_-]+)/.exec(location.hash)?.[1];
      if (!code) return false;
      // The one-time code leaves the address bar and the history before anything else happens.
      history.replaceState(null, '', `${location.pathname}#/`);
      void session('POST', { code }).then((r) => {
        if (r.status === 200) signedIn(r.json as Me);
        else setNote(r.json.message);
        setChecked(true);
      });
      return true;
    };
    addEventListener('hashchange', exchange);
    if (!exchange()) {
      void session('GET').then((r) => {
        if (r.json.signedIn) signedIn(r.json as Me);
        else if (r.json.message) setNote(r.json.message);
        setChecked(true);
      });
    }
    return () => removeEventListener('hashchange', exchange);
  }, []);
  useEffect(() => {
    if (!me) return;
    const abort = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const reload = () =>
      loadResources().then(
        (next) => {
          setResources((previous) => keepUnchanged(previous, next));
          setLoadError(undefined);
        },
        (e: ApiError) => setLoadError(e),
      );
    void reload();
    // A CRD that comes, changes or goes changes what the API serves: discovery is read again (once changes settle).
    let listed = false;
    void follow(
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
      {},
      (items) => {
        setCrds(items);
        setCrdError(undefined);
        if (listed) {
          clearTimeout(timer);
          timer = setTimeout(reload, 300);
        }
        listed = true;
      },
      setCrdError,
      abort.signal,
    );
    return () => {
      abort.abort();
      clearTimeout(timer);
    };
  }, [me]);
  // A place naming a resource discovery did not have when it was read (another client's new CRD, an
  // APIService): discovery is read again, once for that place.
  const missing = resources && route.page !== 'overview' && route.page !== 'rights' && !resources.some((r) => r.group === route.group && r.version === route.version && r.resource === route.resource) ? `${route.group}/${route.version}/${route.resource}` : undefined;
  useEffect(() => {
    if (!missing || rechecked.current.has(missing)) return;
    rechecked.current.add(missing);
    loadResources().then(
      (next) => setResources((previous) => keepUnchanged(previous, next)),
      (e: ApiError) => setLoadError(e),
    );
  }, [missing]);

  if (!checked) return <p class="loading">Loading…</p>;
  if (!me) return <SignIn onSignedIn={signedIn} note={note} />;
  const signOut = async () => {
    if (!mayLeave()) return;
    await session('DELETE', undefined, me.csrf);
    setMe(undefined);
    setResources(undefined);
    setNote('Signed out.');
  };
  const resource = resources && route.page !== 'overview' && route.page !== 'rights' ? resources.find((r) => r.group === route.group && r.version === route.version && r.resource === route.resource) : undefined;
  let page;
  if (loadError) page = <ErrorNote error={loadError} />;
  else if (!resources) page = <p class="loading">Loading the API's resources…</p>;
  else if (route.page === 'overview') page = <Overview resources={resources} crds={crds} error={crdError} />;
  else if (route.page === 'rights') page = <RightsPage key={route.query.get('ns') ?? 'default'} namespace={route.query.get('ns') ?? 'default'} />;
  else if (!resource) page = <p role="alert">The API serves no {route.resource} in {gv(route)}.</p>;
  else if (route.page === 'list') page = <ListPage key={`${gv(resource)}/${resource.resource}`} resource={resource} route={route} />;
  else if (route.page === 'object') page = <ObjectPage key={`${gv(resource)}/${resource.resource}/${route.namespace}/${route.name}`} resource={resource} resources={resources} namespace={route.namespace} name={route.name ?? ''} />;
  else if (route.page === 'schema') page = <SchemaPage key={`${gv(resource)}/${resource.resource}`} resource={resource} />;
  else page = <EditPage key={`${route.page}/${gv(resource)}/${resource.resource}/${route.namespace}/${route.name}`} resource={resource} namespace={route.namespace} name={route.page === 'edit' ? route.name : undefined} />;
  return (
    <>
      <button type="button" class="skip" onClick={() => document.getElementById('main')?.focus()}>
        Skip to the content
      </button>
      <header>
        <a class="brand" href="#/">
          kapi console
        </a>
        <span class="who" title={me.groups.join(', ')}>
          Signed in as <strong>{me.user}</strong>
        </span>
        <a href={href('rights', undefined, undefined, undefined, { ns: 'default' })}>Your rights</a>
        <button type="button" onClick={signOut}>
          Sign out
        </button>
      </header>
      <div class="body">
        {resources && <Nav resources={resources} current={resource} />}
        <main id="main" tabIndex={-1}>
          {page}
        </main>
      </div>
    </>
  );
}

render(<App />, document.getElementById('app')!);
