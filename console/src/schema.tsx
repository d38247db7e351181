/**
 * A resource's schema from /openapi/v3, read as `kubectl explain` reads it: each field's type, description,
 * default, enum, required, list and map types, and validation rules with their messages. Fields open on demand
 * (schemas can refer to themselves).
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiError, get, type Obj } from './api.js';
import type { Resource } from './model.js';
import { ErrorNote } from './parts.js';

export interface OpenApiDoc {
  components?: { schemas?: Record<string, Obj> };
}

const docs = new Map<string, Promise<OpenApiDoc>>();

/** The group-version's OpenAPI v3 document (fetched once per page life). */
export function openApiDoc(r: { group: string; version: string }): Promise<OpenApiDoc> {
  const path = r.group ? `/openapi/v3/apis/${r.group}/${r.version}` : `/openapi/v3/api/${r.version}`;
  let doc = docs.get(path);
  if (!doc) {
    doc = get(path).then((a) => a.json as OpenApiDoc);
    docs.set(path, doc);
    doc.catch(() => docs.delete(path));
  }
  return doc;
}

/** The schema of the resource's kind in the document. */
export function kindSchema(doc: OpenApiDoc, r: Resource): Obj | undefined {
  for (const s of Object.values(doc.components?.schemas ?? {})) {
    const gvks = (s['x-kubernetes-group-version-kind'] ?? []) as Obj[];
    if (gvks.some((g) => g.group === r.group && g.version === r.version && g.kind === r.kind)) return s;
  }
  return undefined;
}

/** A schema with its reference followed (`$ref`, or `allOf: [{$ref}]` with the field's own description). */
export function resolve(doc: OpenApiDoc, s: Obj | undefined): Obj {
  if (!s) return {};
  let out = s;
  for (let i = 0; i < 20; i++) {
    const ref: string | undefined = out.$ref ?? (out.allOf?.length === 1 ? out.allOf[0].$ref : undefined);
    if (!ref) break;
    const target = doc.components?.schemas?.[ref.replace('#/components/schemas/', '')] ?? {};
    out = { ...target, ...Object.fromEntries(Object.entries(out).filter(([k]) => k !== '$ref' && k !== 'allOf')) };
  }
  return out;
}

function typeOf(doc: OpenApiDoc, s: Obj): string {
  const r = resolve(doc, s);
  if (r['x-kubernetes-int-or-string']) return 'int-or-string';
  if (r.type === 'array') return `[]${typeOf(doc, r.items ?? {})}`;
  if (r.type === 'object' && r.additionalProperties && typeof r.additionalProperties === 'object') return `map[string]${typeOf(doc, r.additionalProperties)}`;
  if (r.format) return `${r.type ?? 'object'} (${r.format})`;
  return r.type ?? (r.properties ? 'object' : 'any');
}

function Field({ doc, name, schema, required, depth }: { doc: OpenApiDoc; name: string; schema: Obj; required: boolean; depth: number }) {
  const [open, setOpen] = useState(depth === 0 && name === 'spec');
  const s = resolve(doc, schema);
  const children = s.properties ?? resolve(doc, s.items).properties ?? (typeof s.additionalProperties === 'object' ? resolve(doc, s.additionalProperties).properties : undefined);
  const childRequired: string[] = s.required ?? resolve(doc, s.items).required ?? [];
  const rules = (Array.isArray(s['x-kubernetes-validations']) ? s['x-kubernetes-validations'] : []) as Obj[];
  return (
    <li class="field">
      <div class="field-head">
        {children ? (
          <button type="button" class="toggle" aria-expanded={open} onClick={() => setOpen(!open)} aria-label={`${open ? 'Collapse' : 'Expand'} ${name}`}>
            {open ? '▾' : '▸'}
          </button>
        ) : (
          <span class="toggle" />
        )}
        <code class="fname">{name}</code> <span class="ftype">{typeOf(doc, schema)}</span>
        {required && <span class="tag req">required</span>}
        {s.default !== undefined && <span class="tag">default: {JSON.stringify(s.default)}</span>}
        {s['x-kubernetes-list-type'] && <span class="tag">list-type: {s['x-kubernetes-list-type']}</span>}
        {Array.isArray(s['x-kubernetes-list-map-keys']) && <span class="tag">keys: {(s['x-kubernetes-list-map-keys'] as unknown[]).map(String).join(', ')}</span>}
        {s['x-kubernetes-map-type'] && <span class="tag">map-type: {s['x-kubernetes-map-type']}</span>}
      </div>
      {s.description && <p class="desc">{s.description}</p>}
      {Array.isArray(s.enum) && <p class="desc">One of: {(s.enum as unknown[]).map((e) => JSON.stringify(e)).join(', ')}</p>}
      {(s.minimum !== undefined || s.maximum !== undefined || s.pattern || s.maxLength !== undefined || s.maxItems !== undefined) && (
        <p class="desc">
          {[
            s.minimum !== undefined && `minimum ${s.minimum}`,
            s.maximum !== undefined && `maximum ${s.maximum}`,
            s.pattern && `pattern ${s.pattern}`,
            s.maxLength !== undefined && `at most ${s.maxLength} characters`,
            s.maxItems !== undefined && `at most ${s.maxItems} items`,
          ]
            .filter(Boolean)
            .join('; ')}
        </p>
      )}
      {rules.map((r, i) => (
        <p key={i} class="desc rule">
          Rule <code>{r.rule}</code>
          {r.message ? `: ${r.message}` : ''}
        </p>
      ))}
      {open && children && <Fields doc={doc} props={children} required={childRequired} depth={depth + 1} />}
    </li>
  );
}

function Fields({ doc, props, required, depth }: { doc: OpenApiDoc; props: Record<string, Obj>; required: string[]; depth: number }) {
  return (
    <ul class="fields">
      {Object.entries(props).map(([k, v]) => (
        <Field key={k} doc={doc} name={k} schema={v} required={required.includes(k)} depth={depth} />
      ))}
    </ul>
  );
}

export function SchemaPage({ resource }: { resource: Resource }) {
  const [doc, setDoc] = useState<OpenApiDoc | undefined>();
  const [error, setError] = useState<ApiError | undefined>();
  useEffect(() => {
    openApiDoc(resource).then(setDoc, (e: ApiError) => setError(e));
  }, [resource]);
  if (error) return <ErrorNote error={error} />;
  if (!doc) return <p class="loading">Loading the schema…</p>;
  const s = kindSchema(doc, resource);
  if (!s) return <p role="alert">No schema for {resource.kind} in the OpenAPI document.</p>;
  return (
    <>
      <h1>
        {resource.kind} <span class="muted">schema, {resource.group ? `${resource.group}/${resource.version}` : resource.version}</span>
      </h1>
      {s.description && <p>{s.description}</p>}
      <Fields doc={doc} props={s.properties ?? {}} required={s.required ?? []} depth={0} />
    </>
  );
}
