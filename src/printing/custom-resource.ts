/**
 * Tables for custom resources (apiextensions-apiserver's tableconvertor): a
 * Name column, then the version's additionalPrinterColumns (or the default Age
 * column when it has none), each cell the first value of the column's JSONPath
 * typed as the column says. A value of the wrong type, or a path that fails,
 * leaves the cell empty (null).
 */
import { columnText, compileColumnPath, findColumnValue } from '../machinery/jsonpath-columns.js';
import type { JsonPath } from '../machinery/jsonpath.js';
import { goKind } from '../machinery/jsonpath-values.js';
import type { KObject } from '../api/object.js';
import { fieldDoc } from './printer-helpers.js';
import { dateCell } from './duration.js';
import { tableForList, tableForObject } from './table.js';
import type { RowCells, Table, TableColumnDefinition, TableConvertor, TableListMeta, TableOptions } from './types.js';

/** A printer column in either CRD API version (v1 spells the path `jsonPath`, v1beta1 `JSONPath`). */
export interface PrinterColumn {
  name?: string;
  type?: string;
  format?: string;
  description?: string;
  priority?: number;
  jsonPath?: string;
  JSONPath?: string;
}

let nameColumn: TableColumnDefinition | undefined;
/** The Name column every custom resource table starts with (made at first use: the type docs load then). */
const NAME_COLUMN = () => (nameColumn ??= { name: 'Name', type: 'string', format: 'name', description: fieldDoc('meta/v1.ObjectMeta', 'name'), priority: 0 });

/** serveDefaultColumnsIfEmpty: the column a version without printer columns gets. */
let ageColumn: PrinterColumn | undefined;
const DEFAULT_AGE_COLUMN = (): PrinterColumn =>
  (ageColumn ??= { name: 'Age', type: 'date', description: fieldDoc('meta/v1.ObjectMeta', 'creationTimestamp'), jsonPath: '.metadata.creationTimestamp' });

export interface CustomResourceTableConvertor extends TableConvertor {
  /** Set when a column's path did not parse; that column and the ones after it are left out, as upstream does. */
  readonly error?: string;
}

/** The table convertor for a CRD version's additionalPrinterColumns (undefined or empty: Name and Age). */
export function customResourceTableConvertor(columns: readonly PrinterColumn[] | undefined | null): CustomResourceTableConvertor {
  const defs: TableColumnDefinition[] = [NAME_COLUMN()];
  const paths: JsonPath[] = [];
  let error: string | undefined;
  for (const col of columns?.length ? columns : [DEFAULT_AGE_COLUMN()]) {
    const path = col.jsonPath ?? col.JSONPath ?? '';
    try {
      paths.push(compileColumnPath(path, col.name ?? ''));
    } catch {
      error = `unrecognized column definition ${JSON.stringify(path)}`;
      break;
    }
    defs.push({
      name: col.name ?? '',
      type: col.type ?? '',
      format: col.format ?? '',
      description: col.description || `Custom resource definition column (in JSONPath format): ${path}`,
      priority: col.priority ?? 0,
    });
  }
  return {
    columns: defs,
    error,
    row(obj: KObject, now: number): RowCells {
      const cells: unknown[] = [obj.metadata?.name ?? ''];
      paths.forEach((path, i) => {
        const found = findColumnValue(path, obj);
        if (!found.found) cells.push(null);
        else if (defs[i + 1].type === 'string') cells.push(columnText(path, found.value));
        else cells.push(cellForJSONValue(defs[i + 1].type, found.value, now));
      });
      return { cells };
    },
  };
}

/** cellForJSONValue: the value as the column's type, or null when it is not of that type. */
export function cellForJSONValue(type: string, value: unknown, now: number): unknown {
  if (value === null || value === undefined) return null;
  const kind = goKind(value);
  switch (type) {
    case 'integer':
      if (kind === 'int') return value;
      if (kind === 'float' && typeof value === 'number') return Math.trunc(value);
      return null;
    case 'number':
      if ((kind === 'int' || kind === 'float') && (typeof value === 'number' || typeof value === 'bigint')) return Number(value);
      return null;
    case 'boolean':
      return typeof value === 'boolean' ? value : null;
    case 'string':
      return typeof value === 'string' ? value : null;
    case 'date':
      return typeof value === 'string' ? dateCell(value, now) : null;
  }
  return null;
}

export interface BuildTableOptions extends TableOptions {
  /** The list's metadata (resourceVersion, continue, remainingItemCount) for a list. */
  list?: TableListMeta;
  /** Render objects[0] as the Table of a single object (GET of one) rather than a list. */
  single?: boolean;
}

/** Custom resources as a Table, with a version's printer columns. */
export function buildTable(objects: readonly KObject[], columns: readonly PrinterColumn[] | undefined | null, opts: BuildTableOptions = {}): Table {
  const convertor = customResourceTableConvertor(columns);
  if (opts.single) return tableForObject(convertor, objects[0] ?? {}, opts);
  return tableForList(convertor, objects, opts.list, opts);
}
