/**
 * metadata.managedFields on the wire and in memory (apimachinery's
 * managedfields internals): entries decode into sets keyed by a manager
 * identifier (the entry as JSON without fieldsType, fieldsV1, time, and
 * without apiVersion for appliers), with upstream's decoding errors; sets
 * encode back into entries sorted as upstream sorts them (Apply before
 * Update, then by time, manager, apiVersion, subresource), empty ones dropped.
 */
import { runSteps, type Steps } from '../util/turns.js';
import { compareGoStrings, goQuote } from '../machinery/go-text.js';
import { isManagerMadeEntry } from '../machinery/metadata-types.js';
import { parseRfc3339, toRfc3339 } from '../machinery/time.js';
import { FieldSet, FieldsV1Error } from './field-set.js';
import { goJsonString, isMap, type JsonMap } from './value.js';

export type Operation = 'Apply' | 'Update';

export interface VersionedSet {
  readonly set: FieldSet;
  readonly apiVersion: string;
  readonly applied: boolean;
}

/** Field ownership by manager identifier, and the time of each manager's last change. */
export interface Managed {
  fields: Map<string, VersionedSet>;
  times: Map<string, string | undefined>;
}

export interface ManagerInfo {
  manager: string;
  operation: Operation | string;
  apiVersion?: string;
  subresource?: string;
}

export class ManagedFieldsError extends Error {}

export function emptyManaged(): Managed {
  return { fields: new Map(), times: new Map() };
}

export function copyManaged(m: Managed): Managed {
  return { fields: new Map(m.fields), times: new Map(m.times) };
}

/** BuildManagerIdentifier: the entry's JSON with only manager, operation, apiVersion (not for Apply) and subresource. */
export function managerIdentifier(info: ManagerInfo): string {
  const parts: string[] = [];
  if (info.manager) parts.push('"manager":' + goJsonString(info.manager));
  if (info.operation) parts.push('"operation":' + goJsonString(info.operation));
  if (info.apiVersion && info.operation !== 'Apply') parts.push('"apiVersion":' + goJsonString(info.apiVersion));
  if (info.subresource) parts.push('"subresource":' + goJsonString(info.subresource));
  return '{' + parts.join(',') + '}';
}

/** Identifiers already parsed: every update parses the identifiers of the entries it finds, and they repeat. */
const parsedIdentifiers = new Map<string, ManagerInfo | undefined>();

/** The entry fields an identifier holds; undefined when it is not one. */
export function parseManagerIdentifier(id: string): ManagerInfo | undefined {
  if (!parsedIdentifiers.has(id)) {
    if (parsedIdentifiers.size >= 4096) parsedIdentifiers.clear();
    parsedIdentifiers.set(id, parseIdentifier(id));
  }
  const info = parsedIdentifiers.get(id);
  return info && { ...info };
}

function parseIdentifier(id: string): ManagerInfo | undefined {
  let v: unknown;
  try {
    v = JSON.parse(id);
  } catch {
    return undefined;
  }
  if (!isMap(v)) return undefined;
  const str = (k: string) => (typeof v[k] === 'string' ? (v[k] as string) : '');
  return { manager: str('manager'), operation: str('operation'), apiVersion: str('apiVersion'), subresource: str('subresource') };
}

/** isResetManagedFields: `[]`, or a single entry with nothing set, asks to stop tracking. */
export function isResetManagedFields(entries: unknown): boolean {
  if (!Array.isArray(entries)) return false;
  if (entries.length === 0) return true;
  if (entries.length !== 1) return false;
  const e = entries[0];
  if (e === null) return true;
  if (!isMap(e)) return false;
  for (const k of ['manager', 'operation', 'apiVersion', 'fieldsType', 'subresource']) {
    const v = e[k];
    if (v !== undefined && v !== null && v !== '') return false;
  }
  return (e.time === undefined || e.time === null) && (e.fieldsV1 === undefined || e.fieldsV1 === null);
}

/**
 * Entries encodeManagedFields makes are frozen (isManagerMadeEntry) and carry, under this
 * symbol (JSON and Object.keys never see it), what they decode to: copies of an object
 * share its frozen entries, so the next write of the object decodes them for free. Only a
 * frozen entry is taken at its word: a spread copy carries the symbol too, but may differ.
 */
const DECODED = Symbol('decoded managedFields entry');

interface DecodedEntry {
  id: string;
  vs: VersionedSet;
  time: string | undefined;
}

/** DecodeManagedFields: throws ManagedFieldsError with upstream's text for entries it cannot use. */
export function decodeManagedFields(entries: unknown): Managed {
  const managed = emptyManaged();
  if (entries === undefined || entries === null) return managed;
  if (!Array.isArray(entries)) throw new ManagedFieldsError('managedFields must be a list');
  entries.forEach((raw, i) => {
    const known = isManagerMadeEntry(raw) ? (raw as { [DECODED]?: DecodedEntry })[DECODED] : undefined;
    if (known) {
      managed.fields.set(known.id, known.vs);
      managed.times.set(known.id, known.time);
      return;
    }
    const e: JsonMap = isMap(raw) ? raw : {};
    const str = (k: string) => (typeof e[k] === 'string' ? (e[k] as string) : '');
    const operation = str('operation');
    if (operation !== 'Apply' && operation !== 'Update') throw new ManagedFieldsError('operation must be `Apply` or `Update`');
    const apiVersion = str('apiVersion');
    if (!apiVersion) throw new ManagedFieldsError('apiVersion must not be empty');
    const fieldsType = str('fieldsType');
    if (fieldsType === '') throw new ManagedFieldsError(`missing fieldsType in managed fields entry ${i}`);
    if (fieldsType !== 'FieldsV1') throw new ManagedFieldsError(`invalid fieldsType ${goQuote(fieldsType)} in managed fields entry ${i}`);
    const id = managerIdentifier({ manager: str('manager'), operation, apiVersion, subresource: str('subresource') });
    let set: FieldSet;
    try {
      set = e.fieldsV1 === undefined || e.fieldsV1 === null ? new FieldSet() : FieldSet.fromFieldsV1(e.fieldsV1);
    } catch (err) {
      if (err instanceof FieldsV1Error) throw new ManagedFieldsError(`error decoding versioned set: error decoding set: ${err.message}`);
      throw err;
    }
    managed.fields.set(id, { set, apiVersion, applied: operation === 'Apply' });
    managed.times.set(id, normalizeTime(e.time));
  });
  return managed;
}

/** Times already normalized: every update decodes the managedFields it finds, and their times repeat. */
const normalizedTimes = new Map<string, string>();

function normalizeTime(t: unknown): string | undefined {
  if (typeof t !== 'string' || t === '') return undefined;
  const known = normalizedTimes.get(t);
  if (known !== undefined) return known;
  let normalized: string;
  try {
    normalized = toRfc3339(parseRfc3339(t));
  } catch (err) {
    throw new ManagedFieldsError((err as Error).message);
  }
  if (normalizedTimes.size >= 4096) normalizedTimes.clear();
  normalizedTimes.set(t, normalized);
  return normalized;
}

/**
 * The managedFields entries of `managed`; undefined when there are none (the field is then
 * left out). Entries are frozen; where `previous` (the live object's entries) has one for
 * the same manager, versioned set and time, that entry is kept.
 */
export function encodeManagedFields(managed: Managed, previous?: unknown): JsonMap[] | undefined {
  return runSteps(encodingManagedFields(managed, previous));
}

/** encodeManagedFields, pausing before each set it encodes and inside it (util/turns.ts). */
export function* encodingManagedFields(managed: Managed, previous?: unknown): Steps<JsonMap[] | undefined> {
  if (managed.fields.size === 0) return undefined;
  const out: SortedEntry[] = [];
  for (const [id, vs] of managed.fields) {
    const time = managed.times.get(id);
    const entry = madeBefore(previous, id, vs, time) ?? (yield* makingEntry(id, vs, time));
    const operation = entry.operation;
    out.push({ entry, operation: typeof operation === 'string' ? operation : '', seconds: seconds(time) });
  }
  if (out.length > 1) out.sort(compareEntries);
  return out.map((e) => e.entry);
}

function madeBefore(previous: unknown, id: string, vs: VersionedSet, time: string | undefined): JsonMap | undefined {
  if (!Array.isArray(previous)) return undefined;
  for (const e of previous) {
    const d = isManagerMadeEntry(e) ? (e as { [DECODED]?: DecodedEntry })[DECODED] : undefined;
    if (d && d.id === id && d.vs === vs && d.time === time) return e as JsonMap;
  }
  return undefined;
}

function* makingEntry(id: string, vs: VersionedSet, time: string | undefined): Steps<JsonMap> {
  yield;
  const info = parseManagerIdentifier(id) ?? { manager: '', operation: '' };
  const entry: JsonMap = {};
  if (info.manager) entry.manager = info.manager;
  const operation = vs.applied ? 'Apply' : info.operation;
  if (operation) entry.operation = operation;
  if (vs.apiVersion) entry.apiVersion = vs.apiVersion;
  if (time) entry.time = time;
  entry.fieldsType = 'FieldsV1';
  entry.fieldsV1 = yield* vs.set.encoding();
  if (info.subresource) entry.subresource = info.subresource;
  (entry as { [DECODED]?: DecodedEntry })[DECODED] = { id, vs, time };
  return Object.freeze(entry);
}

/** Whole seconds of the entry times seen last (entries written in one second share them). */
const secondsOf = new Map<string, number>();

function seconds(t: unknown): number {
  if (typeof t !== 'string') return 0;
  let s = secondsOf.get(t);
  if (s === undefined) {
    const ms = Date.parse(t);
    s = Number.isNaN(ms) ? 0 : Math.floor(ms / 1000);
    if (secondsOf.size >= 64) secondsOf.clear();
    secondsOf.set(t, s);
  }
  return s;
}

interface SortedEntry {
  entry: JsonMap;
  operation: string;
  seconds: number;
}

function compareEntries(p: SortedEntry, q: SortedEntry): number {
  if (p.operation !== q.operation) return compareGoStrings(p.operation, q.operation);
  if (p.seconds !== q.seconds) return p.seconds - q.seconds;
  const s = (e: JsonMap, k: string) => (typeof e[k] === 'string' ? (e[k] as string) : '');
  for (const k of ['manager', 'apiVersion', 'subresource']) {
    const c = compareGoStrings(s(p.entry, k), s(q.entry, k));
    if (c !== 0) return c;
  }
  return 0;
}
