import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseRfc3339, rfc3339Now, toMicroTime, toRfc3339 } from '../../src/machinery/time.js';

const LAYOUT = '"2006-01-02T15:04:05Z07:00"';

test('metav1.Time and MicroTime formats', () => {
  const d = new Date(Date.UTC(2026, 10, 21, 2, 16, 42, 123));
  assert.equal(toRfc3339(d), '2026-11-21T02:16:42Z');
  assert.equal(toMicroTime(d), '2026-11-21T02:16:42.123000Z');
  assert.match(rfc3339Now(), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
});

test('parses RFC 3339 like time.Parse', () => {
  assert.equal(parseRfc3339('2026-11-21T02:16:42Z').toISOString(), '2026-11-21T02:16:42.000Z');
  assert.equal(parseRfc3339('2026-11-21T02:16:42.5+01:30').toISOString(), '2026-11-21T00:46:42.500Z');
  assert.equal(parseRfc3339('2024-02-29T00:00:00-00:00').toISOString(), '2024-02-29T00:00:00.000Z');
  // Go's "15" takes one or two hour digits.
  assert.equal(parseRfc3339('2026-01-02T3:04:05Z').toISOString(), '2026-01-02T03:04:05.000Z');
  assert.equal(parseRfc3339('0001-01-01T00:00:00Z').getUTCFullYear(), 1);
});

test('parse errors carry Go texts', () => {
  const fails = (s: string, message: string) => assert.throws(() => parseRfc3339(s), { message }, s);
  fails('abc', `parsing time "abc" as ${LAYOUT}: cannot parse "abc" as "2006"`);
  fails('', `parsing time "" as ${LAYOUT}: cannot parse "" as "2006"`);
  fails('2021/01/01', `parsing time "2021/01/01" as ${LAYOUT}: cannot parse "/01/01" as "-"`);
  fails('2021-1-01T00:00:00Z', `parsing time "2021-1-01T00:00:00Z" as ${LAYOUT}: cannot parse "1-01T00:00:00Z" as "01"`);
  fails('2021-01-01', `parsing time "2021-01-01" as ${LAYOUT}: cannot parse "" as "T"`);
  fails('2021-01-01T00:00:00', `parsing time "2021-01-01T00:00:00" as ${LAYOUT}: cannot parse "" as "Z07:00"`);
  fails('2021-13-01T00:00:00Z', 'parsing time "2021-13-01T00:00:00Z": month out of range');
  fails('2021-02-30T00:00:00Z', 'parsing time "2021-02-30T00:00:00Z": day out of range');
  fails('2021-01-01T24:00:00Z', 'parsing time "2021-01-01T24:00:00Z": hour out of range');
  fails('2021-01-01T00:00:00Zjunk', 'parsing time "2021-01-01T00:00:00Zjunk": extra text: "junk"');
  fails('2021-01-01T00:00:00+0100', `parsing time "2021-01-01T00:00:00+0100" as ${LAYOUT}: cannot parse "+0100" as "Z07:00"`);
  fails('null', `parsing time "null" as ${LAYOUT}: cannot parse "null" as "2006"`);
});
