/**
 * Shared pieces of the built-in printers (kubernetes pkg/printers/internalversion):
 * the Name and Age column definitions, label and selector formatting, and
 * container name/image lists.
 */
import { selectorFromLabelSelector, type LabelSelectorSpec } from '../machinery/labels.js';
import { compareGoStrings } from '../machinery/go-text.js';
import type { KObject } from '../api/object.js';
import { goTypeDocs } from '../api/go-type-docs.js';
import { translateTimestampSince } from './duration.js';
import type { RowCells, TableColumnDefinition, TableConvertor } from './types.js';

export function column(name: string, type: string, description: string, priority = 0, format = ''): TableColumnDefinition {
  return { name, type, format, description, priority };
}

/**
 * A field's documentation (`core/v1.PodStatus`, `podIP`): the column descriptions upstream's printers
 * take from the types' SwaggerDoc.
 */
export const fieldDoc = (struct: string, field: string): string => goTypeDocs()[struct]?.[field] ?? '';

export const nameColumn = (): TableColumnDefinition => column('Name', 'string', fieldDoc('meta/v1.ObjectMeta', 'name'), 0, 'name');
export const ageColumn = (): TableColumnDefinition => column('Age', 'string', fieldDoc('meta/v1.ObjectMeta', 'creationTimestamp'));
/** A column described by a field's documentation (`fieldDoc`). */
export const docColumn = (name: string, type: string, struct: string, field: string, priority = 0): TableColumnDefinition =>
  column(name, type, fieldDoc(struct, field), priority);

export function printer(columns: TableColumnDefinition[], row: (obj: KObject, now: number) => unknown[] | RowCells): TableConvertor {
  return {
    columns,
    row(obj, now) {
      const r = row(obj, now);
      return Array.isArray(r) ? { cells: r } : r;
    },
  };
}

export function nameOf(obj: KObject): string {
  return str(obj.metadata?.name);
}

export function age(obj: KObject, now: number): string {
  return translateTimestampSince(obj.metadata?.creationTimestamp, now);
}

export function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** An int32/int64 field as a Go integer (0 when unset). */
export function int(v: unknown): number | bigint {
  if (typeof v === 'bigint') return v;
  return typeof v === 'number' && Number.isFinite(v) ? Math.trunc(v) : 0;
}

export function list(v: unknown): KObject[] {
  return Array.isArray(v) ? (v as KObject[]) : [];
}

export function record(v: unknown): Record<string, unknown> {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

/** labels.FormatLabels: `k=v,...` sorted by key, `<none>` when empty. */
export function formatLabels(labels: unknown): string {
  const keys = Object.keys(record(labels)).sort(compareGoStrings);
  if (keys.length === 0) return '<none>';
  const m = record(labels);
  return keys.map((k) => `${k}=${str(m[k])}`).join(',');
}

/** metav1.FormatLabelSelector: `<none>` for a selector selecting everything (or nothing), `<error>` when invalid. */
export function formatLabelSelector(sel: unknown): string {
  try {
    const s = selectorFromLabelSelector(sel as LabelSelectorSpec | null | undefined).toString();
    return s === '' ? '<none>' : s;
  } catch {
    return '<error>';
  }
}

/** LabelSelectorAsSelector(...).String(), `<invalid>` when the selector is invalid. */
export function selectorString(sel: unknown): string {
  try {
    return selectorFromLabelSelector(sel as LabelSelectorSpec | null | undefined).toString();
  } catch {
    return '<invalid>';
  }
}

/** layoutContainerCells: container names and images, comma-separated. */
export function containerCells(containers: unknown): [string, string] {
  const cs = list(containers);
  return [cs.map((c) => str(c.name)).join(','), cs.map((c) => str(c.image)).join(',')];
}
