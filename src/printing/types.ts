/**
 * meta.k8s.io Table types (v1 and v1beta1 share the shape) and the contract of
 * a table convertor: the column definitions of a resource and the cells of one
 * object's row.
 */
import type { KObject } from '../api/object.js';

export type TableVersion = 'v1' | 'v1beta1';

/** `?includeObject=`: what each row's `object` holds. */
export type IncludeObject = 'None' | 'Object' | 'Metadata';

export interface TableColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

export interface TableRowCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

export interface TableRow {
  cells: unknown[];
  conditions?: TableRowCondition[];
  /** The object as `includeObject` asks: full object, PartialObjectMetadata, or null. */
  object: unknown;
}

export interface TableListMeta {
  resourceVersion?: string;
  continue?: string;
  remainingItemCount?: number;
}

export interface Table {
  kind: 'Table';
  apiVersion: `meta.k8s.io/${TableVersion}`;
  metadata: TableListMeta;
  /** null when headers are left out (watch events after the first). */
  columnDefinitions: TableColumnDefinition[] | null;
  /** null only where upstream leaves it nil (the default convertor on an empty list). */
  rows: TableRow[] | null;
}

export interface PartialObjectMetadata {
  kind: 'PartialObjectMetadata';
  apiVersion: `meta.k8s.io/${TableVersion}`;
  metadata: Record<string, unknown>;
}

export interface RowCells {
  cells: unknown[];
  conditions?: TableRowCondition[];
}

/** Renders objects of one resource (and version) as table rows. */
export interface TableConvertor {
  /** The column definitions, in cell order. */
  readonly columns: readonly TableColumnDefinition[];
  /** One object's cells; `now` (ms since the epoch) anchors ages. */
  row(obj: KObject, now: number): RowCells;
  /** Like rest.NewDefaultTableConvertor, `rows` is null rather than [] for an empty list. */
  readonly nilRowsWhenEmpty?: boolean;
}

export interface TableOptions {
  /** The Table version asked for in the Accept header (default v1). */
  version?: TableVersion;
  /** Default Metadata. */
  includeObject?: IncludeObject;
  /** Leave out columnDefinitions (every watch event after the first). */
  noHeaders?: boolean;
  /** The time ages are computed against (default: now). */
  now?: Date | number;
}
