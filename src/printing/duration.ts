/**
 * Ages as printers show them: apimachinery's duration.HumanDuration ("5s",
 * "3m2s", "5h10m", "2d3h", "3y10d") and the `<unknown>`/`<invalid>` markers of
 * translateTimestampSince and the CRD tableconvertor.
 */
import { parseRfc3339 } from '../machinery/time.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
/** 0001-01-01T00:00:00Z, Go's zero time.Time. */
const GO_ZERO_TIME = -62135596800000;

/** duration.HumanDuration for a duration in milliseconds. */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / SECOND);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 60 * 2) return `${seconds}s`;
  const minutes = Math.trunc(ms / MINUTE);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 60 * 3) return `${minutes}m`;
  const hours = Math.trunc(ms / HOUR);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.trunc(hours / 24)}d` : `${Math.trunc(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.trunc(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const dy = Math.trunc(hours / 24) % 365;
    const y = Math.trunc(hours / 24 / 365);
    return dy === 0 ? `${y}y` : `${y}y${dy}d`;
  }
  return `${Math.trunc(hours / 24 / 365)}y`;
}

/** The instant of an RFC 3339 timestamp, or undefined when absent, zero or unparseable. */
export function timestampMillis(value: unknown): number | undefined {
  if (typeof value !== 'string' || value === '') return undefined;
  let t: number;
  try {
    t = parseRfc3339(value).getTime();
  } catch {
    return undefined;
  }
  return t === GO_ZERO_TIME ? undefined : t;
}

/** translateTimestampSince: the age of a timestamp, `<unknown>` when it is unset. */
export function translateTimestampSince(value: unknown, now: number): string {
  const t = timestampMillis(value);
  return t === undefined ? '<unknown>' : humanDuration(now - t);
}

/**
 * A `date` printer column's cell (tableconvertor cellForJSONValue): `<unknown>` for an
 * empty or zero time, `<invalid>` when it does not parse as RFC 3339, else the age.
 */
export function dateCell(value: string, now: number): string {
  if (value === '' || value === 'null') return '<unknown>';
  let t: number;
  try {
    t = parseRfc3339(value).getTime();
  } catch {
    return '<invalid>';
  }
  if (t === GO_ZERO_TIME) return '<unknown>';
  return humanDuration(now - t);
}

/** The zero-time-aware RFC 3339 rendering of the default convertor's "Created At" cell. */
export function createdAtCell(value: unknown): string {
  const t = timestampMillis(value);
  return new Date(t ?? GO_ZERO_TIME).toISOString().slice(0, 19) + 'Z';
}
