/** A JSON object's fields, as the built-in strategies and defaulters read objects they cannot trust to be well formed. */
export type JsonRecord = Record<string, unknown>;

/** A JSON object (not null, not an array). */
export const isRecord = (v: unknown): v is JsonRecord => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The objects of a list (what is not an object is left out); none when it is not a list. */
export const records = (v: unknown): JsonRecord[] => (Array.isArray(v) ? v.filter(isRecord) : []);

/** The object under `key`, made (`{}`) when it is absent or not an object. */
export function childRecord(o: JsonRecord, key: string): JsonRecord {
  if (!isRecord(o[key])) o[key] = {};
  return o[key] as JsonRecord;
}
