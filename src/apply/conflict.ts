/**
 * The 409 an apply answers with when it would take fields from other
 * managers (apimachinery's NewConflictError): reason Conflict, one cause
 * `FieldManagerConflict` per field, and upstream's message —
 * `Apply failed with 1 conflict: conflict with "m" using v1: .spec.x`, or for
 * several, the fields grouped under each manager (sorted):
 * `Apply failed with 2 conflicts: conflicts with "m":\n- .a\n- .b`.
 */
import { compareGoStrings, goQuote } from '../machinery/go-text.js';
import { StatusError, type StatusCause } from '../machinery/status.js';
import { pathString } from './path-element.js';
import { parseManagerIdentifier } from './managed-fields.js';
import type { Conflict } from './updater.js';

export const FIELD_MANAGER_CONFLICT = 'FieldManagerConflict';

/** printManager: `"name"`, plus ` with subresource "s"` and, for updaters, ` using <apiVersion>`. */
export function printManager(identifier: string): string {
  const info = parseManagerIdentifier(identifier);
  if (!info) return goQuote(identifier);
  let s = goQuote(info.manager);
  if (info.subresource) s += ` with subresource ${goQuote(info.subresource)}`;
  if (info.operation === 'Update') s += ` using ${info.apiVersion ?? ''}`;
  return s;
}

export function conflictMessage(conflicts: Conflict[]): string {
  if (conflicts.length === 1) {
    return `Apply failed with 1 conflict: conflict with ${printManager(conflicts[0].manager)}: ${pathString(conflicts[0].path)}`;
  }
  const byManager = new Map<string, string[]>();
  for (const c of conflicts) {
    const paths = byManager.get(c.manager) ?? [];
    paths.push(pathString(c.path));
    byManager.set(c.manager, paths);
  }
  const lines: string[] = [];
  for (const m of [...byManager.keys()].sort(compareGoStrings)) {
    lines.push(`conflicts with ${printManager(m)}:`);
    for (const p of byManager.get(m)!) lines.push(`- ${p}`);
  }
  return `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
}

export function conflictError(conflicts: Conflict[]): StatusError {
  const causes: StatusCause[] = conflicts.map((c) => ({
    reason: FIELD_MANAGER_CONFLICT,
    message: `conflict with ${printManager(c.manager)}`,
    field: pathString(c.path),
  }));
  return new StatusError(409, 'Conflict', conflictMessage(conflicts), { causes });
}
