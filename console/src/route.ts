/** The console's places, in the URL's fragment: `#/r/<group>/<version>/<resource>?ns=…`, `#/o/…/<namespace>/<name>`, … */
import { useEffect, useState } from 'preact/hooks';

export interface Route {
  page: 'overview' | 'list' | 'object' | 'edit' | 'new' | 'schema' | 'rights';
  group: string;
  version: string;
  resource: string;
  namespace?: string;
  name?: string;
  query: URLSearchParams;
}

const seg = (s: string) => encodeURIComponent(s);
/** The core group is `_` in a link (a group name is never that). */
const groupSeg = (g: string) => (g === '' ? '_' : seg(g));

export function href(page: Route['page'], r?: { group: string; version: string; resource: string }, namespace?: string, name?: string, query?: Record<string, string>): string {
  if (page === 'rights') {
    const q = new URLSearchParams(Object.entries(query ?? {}).filter(([, v]) => v !== '')).toString();
    return q ? `#/rights?${q}` : '#/rights';
  }
  if (page === 'overview' || !r) return '#/';
  const prefix = { list: 'r', object: 'o', edit: 'edit', new: 'new', schema: 'schema' }[page];
  let path = `#/${prefix}/${groupSeg(r.group)}/${seg(r.version)}/${seg(r.resource)}`;
  if (page === 'object' || page === 'edit') path += `/${namespace ? seg(namespace) : '_'}/${seg(name ?? '')}`;
  if (page === 'new') path += `/${namespace ? seg(namespace) : '_'}`;
  const q = new URLSearchParams(Object.entries(query ?? {}).filter(([, v]) => v !== '')).toString();
  return q ? `${path}?${q}` : path;
}

export function parseRoute(hash: string): Route {
  const text = hash.replace(/^#/, '');
  const [path, q = ''] = text.split('?', 2);
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  const query = new URLSearchParams(q);
  const pages: Record<string, Route['page']> = { r: 'list', o: 'object', edit: 'edit', new: 'new', schema: 'schema' };
  if (parts[0] === 'rights') return { page: 'rights', group: '', version: '', resource: '', query };
  const page = pages[parts[0] ?? ''];
  if (!page || parts.length < 4) return { page: 'overview', group: '', version: '', resource: '', query };
  const group = parts[1] === '_' ? '' : parts[1];
  const route: Route = { page, group, version: parts[2], resource: parts[3], query };
  if (page === 'object' || page === 'edit' || page === 'new') route.namespace = parts[4] && parts[4] !== '_' ? parts[4] : undefined;
  if (page === 'object' || page === 'edit') route.name = parts[5] ?? '';
  return route;
}

let leaving: { dirty: () => boolean; question: string } | undefined;

/**
 * While `dirty()` holds, leaving the page asks `question` first: another place in the console (the address is
 * put back if the user stays), and a reload or close (the browser's own question). Returns its removal.
 */
export function leaveGuard(dirty: () => boolean, question: string): () => void {
  const guard = { dirty, question };
  leaving = guard;
  const unload = (e: BeforeUnloadEvent) => {
    if (dirty()) e.preventDefault();
  };
  addEventListener('beforeunload', unload);
  return () => {
    if (leaving === guard) leaving = undefined;
    removeEventListener('beforeunload', unload);
  };
}

/** Whether the page may be left (no unapplied edits, or the user says so). */
export function mayLeave(): boolean {
  return !leaving?.dirty() || confirm(leaving.question);
}

export function useRoute(): Route {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    let shown = location.hash;
    const changed = () => {
      if (location.hash === shown) return;
      if (!mayLeave()) return history.replaceState(null, '', shown);
      shown = location.hash;
      setHash(shown);
    };
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  return parseRoute(hash);
}
