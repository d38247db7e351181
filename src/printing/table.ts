/**
 * Server-side printing: a list, a single object or a watch event's object as a
 * meta.k8s.io Table (handlers/response.go asTable): the convertor's columns and
 * cells, the list's metadata, and each row's object as `includeObject` asks
 * (the object, its PartialObjectMetadata, or null).
 */
import { errors } from '../machinery/status.js';
import type { KObject } from '../api/object.js';
import { OBJECT_META_FIELDS } from '../machinery/object-meta.js';
import type {
  IncludeObject,
  PartialObjectMetadata,
  Table,
  TableConvertor,
  TableListMeta,
  TableOptions,
  TableRow,
  TableVersion,
} from './types.js';

/** `?includeObject=`: empty means Metadata; anything unknown is upstream's 400. */
export function parseIncludeObject(value: string | undefined | null): IncludeObject {
  if (value === undefined || value === null || value === '' || value === 'Metadata') return 'Metadata';
  if (value === 'None' || value === 'Object') return value;
  throw errors.badRequest(`unrecognized includeObject value: ${JSON.stringify(value)}`);
}

/** A list (its items and list metadata) as a Table. */
export function tableForList(convertor: TableConvertor, items: readonly KObject[], listMeta: TableListMeta | undefined, opts: TableOptions = {}): Table {
  const rows = items.map((item) => row(convertor, item, opts));
  const meta: TableListMeta = {};
  if (listMeta?.resourceVersion) meta.resourceVersion = listMeta.resourceVersion;
  if (listMeta?.continue) meta.continue = listMeta.continue;
  if (listMeta?.remainingItemCount !== undefined && listMeta.remainingItemCount !== null) meta.remainingItemCount = listMeta.remainingItemCount;
  return table(convertor, meta, rows.length === 0 && convertor.nilRowsWhenEmpty ? null : rows, opts);
}

/** One object (GET of a single object) as a Table with one row; metadata carries the object's resourceVersion. */
export function tableForObject(convertor: TableConvertor, obj: KObject, opts: TableOptions = {}): Table {
  const rv = obj.metadata?.resourceVersion;
  return table(convertor, typeof rv === 'string' && rv ? { resourceVersion: rv } : {}, [row(convertor, obj, opts)], opts);
}

/**
 * A watch event's object as a Table with a single row. Upstream sends the column
 * definitions with the first event only: pass `noHeaders: true` for the others.
 * Status objects (ERROR events) are not converted; send them as they are.
 */
export function tableForWatchEvent(convertor: TableConvertor, obj: KObject, opts: TableOptions = {}): Table {
  return tableForObject(convertor, obj, opts);
}

function table(convertor: TableConvertor, metadata: TableListMeta, rows: TableRow[] | null, opts: TableOptions): Table {
  return {
    kind: 'Table',
    apiVersion: `meta.k8s.io/${opts.version ?? 'v1'}`,
    metadata,
    columnDefinitions: opts.noHeaders ? null : convertor.columns.map((c) => ({ ...c })),
    rows,
  };
}

function row(convertor: TableConvertor, obj: KObject, opts: TableOptions): TableRow {
  const now = opts.now === undefined ? Date.now() : typeof opts.now === 'number' ? opts.now : opts.now.getTime();
  const { cells, conditions } = convertor.row(obj, now);
  const object = rowObject(obj, opts.includeObject ?? 'Metadata', opts.version ?? 'v1');
  return conditions?.length ? { cells, conditions, object } : { cells, object };
}

function rowObject(obj: KObject, include: IncludeObject, version: TableVersion): unknown {
  switch (include) {
    case 'Object':
      return obj;
    case 'None':
      return null;
    default:
      return partialObjectMetadata(obj, version);
  }
}


/** meta.AsPartialObjectMetadata: the object's metadata (ObjectMeta fields only) under kind PartialObjectMetadata. */
export function partialObjectMetadata(obj: KObject, version: TableVersion = 'v1'): PartialObjectMetadata {
  const source = (obj.metadata ?? {}) as Record<string, unknown>;
  const metadata: Record<string, unknown> = {};
  for (const k of OBJECT_META_FIELDS) {
    const v = source[k];
    if (v === undefined || v === null || v === '' || (k === 'generation' && v === 0)) continue;
    if (Array.isArray(v) && v.length === 0) continue;
    if (typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0) continue;
    metadata[k] = v;
  }
  // metav1.Time has no empty form: a zero creationTimestamp is written as null.
  if (metadata.creationTimestamp === undefined) metadata.creationTimestamp = null;
  return { kind: 'PartialObjectMetadata', apiVersion: `meta.k8s.io/${version}`, metadata };
}
