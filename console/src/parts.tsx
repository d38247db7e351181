/** Small pieces several pages show: errors as the server said them, conditions, a note after a change. */
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { ApiError, Obj } from './api.js';

/** A plain table: its columns' heads and its rows' cells (text or elements); `wrap` lets long cells wrap. */
export function Grid({ head, rows, wrap }: { head: string[]; rows: ComponentChildren[][]; wrap?: boolean }) {
  return (
    <table class={wrap ? 'grid wrap' : 'grid'}>
      <thead>
        <tr>
          {head.map((h) => (
            <th scope="col" key={h}>
              {h}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((cells, i) => (
          <tr key={i}>
            {cells.map((c, j) => (
              <td key={j}>{c}</td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

let flashed: string | undefined;

/** A note for the next page to show once (what a save did, on the page it leads to). */
export function flash(text: string): void {
  flashed = text;
}

/** The note `flash` left, shown for a while as a status. */
export function Flash() {
  const [text] = useState(() => {
    const t = flashed;
    flashed = undefined;
    return t;
  });
  const [shown, setShown] = useState(true);
  useEffect(() => {
    const timer = setTimeout(() => setShown(false), 8000);
    return () => clearTimeout(timer);
  }, []);
  if (!text || !shown) return null;
  return (
    <p role="status" class="flash">
      {text}
    </p>
  );
}

export function ErrorNote({ error }: { error: ApiError | Error }) {
  const status = 'status' in error ? (error as ApiError).status : undefined;
  const forbidden = status === 403;
  return (
    <div role="alert" class="error">
      <p>
        {forbidden ? 'Not allowed: ' : ''}
        {error.message}
      </p>
      {forbidden && <p class="hint">The console acts with your own rights only; ask for a role that allows this.</p>}
      {'body' in error &&
        ((error as ApiError).body?.details?.causes ?? []).map((c, i) => (
          <p key={i} class="cause">
            {c.field && <code>{c.field}</code>} {c.message}
          </p>
        ))}
    </div>
  );
}

export function Conditions({ conditions, compact }: { conditions: Obj[]; compact?: boolean }) {
  if (!conditions.length) return compact ? <span class="muted">none</span> : <p class="muted">No conditions.</p>;
  if (compact) {
    return (
      <>
        {conditions.map((c) => (
          <span key={c.type} class={`cond cond-${String(c.status).toLowerCase()}`} title={c.message ?? ''}>
            {c.type}={c.status}
          </span>
        ))}
      </>
    );
  }
  return (
    <table class="grid">
      <thead>
        <tr>
          <th>Type</th>
          <th>Status</th>
          <th>Reason</th>
          <th>Message</th>
          <th>Last transition</th>
        </tr>
      </thead>
      <tbody>
        {conditions.map((c) => (
          <tr key={c.type}>
            <td>{c.type}</td>
            <td class={`cond-${String(c.status).toLowerCase()}`}>{c.status}</td>
            <td>{c.reason}</td>
            <td>{c.message}</td>
            <td>{c.lastTransitionTime}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** A cell of a server-side Table: its value as text. */
export function cellText(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}
