/**
 * Integer query parameters as apiserver decodes them into its option structs
 * (runtime's Convert_Slice_string_To_int64 and friends: strconv.ParseInt in
 * base 10 over an int64); a value Go cannot parse is a 400 with strconv's text.
 */
import { goQuote } from '../../machinery/go-text.js';
import { errors } from '../../machinery/status.js';

const INT = /^[+-]?[0-9]+$/;
const INT64_MAX = 9223372036854775807n;
const INT64_MIN = -9223372036854775808n;

/** The parameter's int64 value as a number (undefined when absent or empty). */
export function int64Param(query: URLSearchParams, name: string): number | undefined {
  const text = query.get(name);
  if (text === null || text === '') return undefined;
  const quoted = goQuote(text.length > 256 ? text.slice(0, 256) : text);
  if (!INT.test(text)) throw errors.badRequest(`strconv.ParseInt: parsing ${quoted}: invalid syntax`);
  const n = BigInt(text);
  if (n > INT64_MAX || n < INT64_MIN) throw errors.badRequest(`strconv.ParseInt: parsing ${quoted}: value out of range`);
  return Number(n);
}
