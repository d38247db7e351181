/**
 * Editing and creating as YAML. Every save is a server-side apply: first with dryRun=All and
 * fieldValidation=Strict, whose errors and warnings are shown on the lines they concern and whose result is
 * shown as a diff, then for real. The editor completes field names and enum values from the OpenAPI schema and
 * checks the text against the server as it is typed (the same dry run). A 409 offers to reload or to force.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { EditorView, basicSetup } from 'codemirror';
import { EditorState } from '@codemirror/state';
import { yaml as yamlLanguage } from '@codemirror/lang-yaml';
import { linter, lintGutter, setDiagnostics, type Diagnostic } from '@codemirror/lint';
import { HighlightStyle, syntaxHighlighting } from '@codemirror/language';
import { tags } from '@lezer/highlight';
import { autocompletion, type CompletionContext, type CompletionResult } from '@codemirror/autocomplete';
import { parse, stringify } from 'yaml';
import { ApiError, get, request, resourcePath, type Obj } from './api.js';
import { can, type Resource } from './model.js';
import { href, leaveGuard } from './route.js';
import { ErrorNote, flash } from './parts.js';
import { kindSchema, openApiDoc, resolve, type OpenApiDoc } from './schema.js';
import { fieldsInMessage, offsetOf, parseFieldPath, pathAt } from './yaml-paths.js';
import { lineDiff } from './diff.js';

const MANAGER = 'kapi-console';

/** YAML's colours from the page's (app.css): readable on the light and the dark background alike (CodeMirror's own are for light). */
const HIGHLIGHT = HighlightStyle.define([
  { tag: [tags.propertyName, tags.definition(tags.propertyName)], color: 'var(--syn-key)' },
  { tag: [tags.string, tags.special(tags.string), tags.content], color: 'var(--syn-string)' },
  { tag: [tags.number, tags.bool, tags.null, tags.atom], color: 'var(--syn-atom)' },
  { tag: [tags.keyword, tags.operatorKeyword, tags.typeName, tags.labelName], color: 'var(--syn-keyword)' },
  { tag: [tags.comment, tags.meta], color: 'var(--muted)', fontStyle: 'italic' },
  { tag: tags.invalid, color: 'var(--danger)' },
]);

/** The object as the editor starts it: no managed fields and no status (the status is the controllers'). */
function editable(o: Obj): Obj {
  const { managedFields: _m, ...metadata } = o.metadata ?? {};
  const { status: _s, ...rest } = o;
  return { ...rest, metadata };
}

function shown(o: Obj): string {
  const { managedFields: _m, ...metadata } = o.metadata ?? {};
  return stringify({ ...o, metadata });
}

interface Outcome {
  diagnostics: Diagnostic[];
  error?: ApiError;
  result?: Obj;
  warnings: string[];
  /** A review of taking the conflicting fields over: its apply forces too. */
  force?: boolean;
}

/** A server-side apply of the text (dry run or not), its errors placed on their lines. */
async function apply(resource: Resource, routeNamespace: string | undefined, text: string, opts: { dryRun: boolean; force?: boolean }): Promise<Outcome> {
  let body: Obj;
  try {
    body = parse(text) as Obj;
  } catch (e) {
    const pos = (e as { linePos?: Array<{ line: number }> }).linePos?.[0];
    return { diagnostics: [{ from: pos ? lineStart(text, pos.line) : 0, to: pos ? lineStart(text, pos.line) : 0, severity: 'error', message: (e as Error).message }], warnings: [] };
  }
  const name = body?.metadata?.name;
  if (typeof name !== 'string' || !name) {
    return { diagnostics: [{ ...lineAround(text, offsetOf(text, ['metadata', 'name'])), severity: 'error', message: 'metadata.name: Required value: server-side apply needs a name' }], warnings: [] };
  }
  const namespace = resource.namespaced ? (body.metadata.namespace ?? routeNamespace ?? 'default') : undefined;
  const q = new URLSearchParams({ fieldManager: MANAGER, fieldValidation: 'Strict' });
  if (opts.dryRun) q.set('dryRun', 'All');
  if (opts.force) q.set('force', 'true');
  try {
    const a = await request('PATCH', `${resourcePath(resource, namespace, name)}?${q}`, { body: text, contentType: 'application/apply-patch+yaml' });
    return { diagnostics: a.warnings.map((w) => ({ from: 0, to: 0, severity: 'warning', message: w })), result: a.json, warnings: a.warnings, force: opts.force };
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    return { diagnostics: diagnosticsOf(text, e), error: e, warnings: [] };
  }
}

function lineStart(text: string, line: number): number {
  let at = 0;
  for (let i = 1; i < line; i++) {
    const nl = text.indexOf('\n', at);
    if (nl < 0) return text.length;
    at = nl + 1;
  }
  return at;
}

function lineAround(text: string, offset: number): { from: number; to: number } {
  const from = text.lastIndexOf('\n', Math.max(0, offset - 1)) + 1;
  const nl = text.indexOf('\n', offset);
  return { from: Math.max(from, offset), to: nl < 0 ? text.length : nl };
}

/** The error's causes on the lines of their fields (422), or the fields a strict decoding names (400), or the first line. */
function diagnosticsOf(text: string, e: ApiError): Diagnostic[] {
  const causes = e.body?.details?.causes ?? [];
  const named = causes.filter((c) => c.field);
  if (named.length) {
    return named.map((c) => ({ ...lineAround(text, offsetOf(text, parseFieldPath(c.field!))), severity: 'error' as const, message: `${c.field}: ${c.message ?? ''}` }));
  }
  const fields = fieldsInMessage(e.message);
  if (fields.length) return fields.map((f) => ({ ...lineAround(text, offsetOf(text, parseFieldPath(f.path))), severity: 'error' as const, message: f.message }));
  return [{ from: 0, to: Math.min(text.length, Math.max(0, text.indexOf('\n'))), severity: 'error', message: e.message }];
}

/** Field names (and enum values after a key) from the schema, at the cursor's place in the YAML. */
function completer(doc: OpenApiDoc, root: Obj) {
  return (ctx: CompletionContext): CompletionResult | null => {
    const word = ctx.matchBefore(/[\w.\-/]*/);
    if (!word) return null;
    const text = ctx.state.doc.toString();
    const { path, inValueOf } = pathAt(text, ctx.pos);
    let s: Obj = root;
    for (const part of path) {
      s = resolve(doc, s);
      s = typeof part === 'number' ? resolve(doc, s.items) : resolve(doc, s.properties?.[part] ?? (typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined));
    }
    s = resolve(doc, s);
    if (inValueOf) {
      const field = resolve(doc, s.properties?.[inValueOf]);
      const values = field.enum ?? (field.type === 'boolean' ? [true, false] : undefined);
      if (!values) return null;
      return { from: word.from, options: (values as unknown[]).map((v) => ({ label: String(v), type: 'enum' })) };
    }
    if (!s.properties) return null;
    return {
      from: word.from,
      options: Object.entries(s.properties as Record<string, Obj>).map(([k, v]) => {
        const f = resolve(doc, v);
        const scalar = f.type && f.type !== 'object' && f.type !== 'array';
        return { label: k, type: 'property', detail: f.type ?? 'object', info: f.description, apply: scalar ? `${k}: ` : `${k}:\n` };
      }),
      validFor: /^[\w.\-/]*$/,
    };
  };
}

export function EditPage({ resource, namespace, name }: { resource: Resource; namespace?: string; name?: string }) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const [original, setOriginal] = useState<Obj | undefined>();
  const [error, setError] = useState<ApiError | undefined>();
  const [review, setReview] = useState<Outcome | undefined>();
  const [busy, setBusy] = useState(false);
  const [allowed, setAllowed] = useState<boolean | undefined>();
  const [saved, setSaved] = useState(false);
  const dirty = useRef(false);
  const loaded = useRef('');
  const creating = name === undefined;

  const load = async () => {
    setReview(undefined);
    dirty.current = false;
    let doc: OpenApiDoc = {};
    let root: Obj = {};
    try {
      doc = await openApiDoc(resource);
      root = kindSchema(doc, resource) ?? {};
    } catch {
      // Without a schema the editor still edits and checks with the server.
    }
    let text: string;
    if (creating) {
      const apiVersion = resource.group ? `${resource.group}/${resource.version}` : resource.version;
      // A spec to fill in, for the kinds that have one.
      const spec = resolve(doc, root).properties?.spec ? { spec: {} } : {};
      text = stringify({ apiVersion, kind: resource.kind, metadata: { name: '', ...(resource.namespaced ? { namespace: namespace ?? 'default' } : {}) }, ...spec });
      setOriginal({});
    } else {
      try {
        const a = await get(resourcePath(resource, namespace, name));
        setOriginal(a.json);
        text = stringify(editable(a.json));
      } catch (e) {
        setError(e as ApiError);
        return;
      }
    }
    view.current?.destroy();
    loaded.current = text;
    const nonce = document.querySelector('meta[name="csp-nonce"]')?.getAttribute('content') ?? '';
    view.current = new EditorView({
      parent: host.current!,
      state: EditorState.create({
        doc: text,
        extensions: [
          basicSetup,
          yamlLanguage(),
          syntaxHighlighting(HIGHLIGHT),
          // Long values (a last-applied-configuration) wrap rather than scroll the whole text sideways.
          EditorView.lineWrapping,
          // The selection in the page's colours (CodeMirror's is for a light page).
          EditorView.theme({
            '&.cm-focused > .cm-scroller > .cm-selectionLayer .cm-selectionBackground, .cm-selectionBackground, .cm-content ::selection': { background: 'var(--selection)' },
          }),
          EditorView.cspNonce.of(nonce),
          EditorView.contentAttributes.of({ 'aria-label': `${resource.kind} as YAML` }),
          autocompletion({ override: [completer(doc, root)] }),
          lintGutter(),
          linter(async (v) => (await apply(resource, namespace, v.state.doc.toString(), { dryRun: true })).diagnostics, { delay: 1000 }),
          // What was reviewed is what may be applied: an edit after the review asks for another.
          EditorView.updateListener.of((u) => {
            if (!u.docChanged) return;
            setReview(undefined);
            // Undone back to what was loaded, nothing is left to lose.
            dirty.current = u.state.doc.toString() !== loaded.current;
          }),
        ],
      }),
    });
  };

  useEffect(() => {
    // A server-side apply that creates needs both create and patch. The editor (and its dry runs) opens only for
    // a user who may write.
    const checks = creating ? [can('create', resource, namespace), can('patch', resource, namespace)] : [can('patch', resource, namespace, name)];
    void Promise.all(checks).then((all) => {
      const may = all.every(Boolean);
      setAllowed(may);
      if (may) void load();
    });
    return () => view.current?.destroy();
  }, [resource, namespace, name]);

  // Edits not applied are not lost without a question: leaving the page (another place, a reload) asks first.
  useEffect(() => leaveGuard(() => dirty.current, 'Leave the editor? Your edits are not applied.'), []);

  const text = () => view.current?.state.doc.toString() ?? '';
  const doReview = async (force = false) => {
    setBusy(true);
    setSaved(false);
    const outcome = await apply(resource, namespace, text(), { dryRun: true, force });
    // The editor's marks say what this review found (the as-you-type check may not have run since the last edit).
    if (view.current) view.current.dispatch(setDiagnostics(view.current.state, outcome.diagnostics));
    setReview(outcome);
    setBusy(false);
  };
  const doApply = async () => {
    setBusy(true);
    const out = await apply(resource, namespace, text(), { dryRun: false, force: review?.force });
    setBusy(false);
    setReview(out);
    if (out.result) {
      setSaved(true);
      dirty.current = false;
      const m = out.result.metadata;
      flash(`${creating ? 'Created' : 'Applied'}${out.warnings.length ? `, with ${out.warnings.length === 1 ? 'a warning' : `${out.warnings.length} warnings`}: ${out.warnings.join('; ')}` : '.'}`);
      location.hash = href('object', resource, m.namespace, m.name);
    }
  };

  if (error) return <ErrorNote error={error} />;
  if (allowed === undefined) return <p class="loading">Loading…</p>;
  if (allowed === false) {
    return (
      <p role="alert" class="error">
        You may not {creating ? 'create' : 'change'} {resource.resource} {namespace ? `in ${namespace}` : ''}: the console acts with your own rights only.
      </p>
    );
  }
  const before = original && !creating ? shown(editable(original)) : '';
  const after = review?.result ? shown(editable(review.result)) : undefined;
  const unchanged = !creating && after !== undefined && after === before;
  return (
    <>
      <h1>
        {creating ? `New ${resource.kind}` : `Edit ${resource.kind} `}
        {!creating && <span class="objname">{name}</span>}
      </h1>
      <div class="toolbar">
        {creating ? <a href={href('list', resource, undefined, undefined, { ns: namespace ?? '' })}>Cancel</a> : <a href={href('object', resource, namespace, name)}>Back to the object</a>}
        <button type="button" onClick={() => doReview(false)} disabled={busy}>
          Review changes
        </button>
        {review?.result && !review.error && !unchanged && (
          <button type="button" class={review.force ? 'danger' : 'primary'} onClick={doApply} disabled={busy}>
            {creating ? 'Create' : review.force ? 'Apply, taking the fields over (force)' : 'Apply'}
          </button>
        )}
      </div>
      <div class="editor" ref={host} />
      {review && !review.error && !review.result && review.diagnostics.length > 0 && (
        <div role="alert" class="error">
          {review.diagnostics.map((d, i) => (
            <p key={i}>{d.message}</p>
          ))}
        </div>
      )}
      {review?.error && (
        <section aria-label="The server's answer">
          <ErrorNote error={review.error} />
          {review.error.status === 409 && (
            <div class="toolbar">
              <button type="button" onClick={() => void load()}>
                Reload the object (drops your edits)
              </button>
              {review.error.body?.reason === 'Conflict' && !/the object has been modified/.test(review.error.message) && (
                <button type="button" class="danger" onClick={() => doReview(true)}>
                  Review taking the fields over (force)
                </button>
              )}
            </div>
          )}
        </section>
      )}
      {review && review.warnings.length > 0 && (
        <section aria-label="Warnings" class="warnings">
          {review.warnings.map((w, i) => (
            <p key={i}>⚠ {w}</p>
          ))}
        </section>
      )}
      {unchanged && !saved && (
        <p role="status" class="hint">
          No changes: the server would store the object as it is.
        </p>
      )}
      {after !== undefined && !saved && !unchanged && (
        <section aria-label="Changes">
          <h2>What the server would store</h2>
          <pre class="diff">
            {lineDiff(before, after).map((l, i) => (
              <div key={i} class={`d-${l.op}`}>
                {l.op === 'add' ? '+ ' : l.op === 'del' ? '- ' : '  '}
                {l.text}
              </div>
            ))}
          </pre>
        </section>
      )}
    </>
  );
}
