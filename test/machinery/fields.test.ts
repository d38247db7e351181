import { test } from 'node:test';
import assert from 'node:assert/strict';
import { escapeFieldValue, fieldSelectorFromSet, FieldSelectorError, parseFieldSelector, unescapeFieldValue } from '../../src/machinery/fields.js';

const parseError = (s: string, message: string) =>
  assert.throws(() => parseFieldSelector(s), (e: unknown) => e instanceof FieldSelectorError && e.message === message, `${JSON.stringify(s)} -> ${message}`);

const getter = (fields: Record<string, string>) => (f: string) => fields[f];

test('parses =, == and != terms, sorted like upstream', () => {
  const s = parseFieldSelector('status.phase!=Running,metadata.name==foo,spec.node=n1');
  assert.deepEqual(s.requirements, [
    { field: 'metadata.name', operator: '=', value: 'foo' },
    { field: 'spec.node', operator: '=', value: 'n1' },
    { field: 'status.phase', operator: '!=', value: 'Running' },
  ]);
  assert.equal(s.toString(), 'metadata.name=foo,spec.node=n1,status.phase!=Running');
  assert.equal(s.empty, false);
  assert.equal(s.requiresExactMatch('metadata.name'), 'foo');
  assert.equal(s.requiresExactMatch('status.phase'), undefined);
});

test('matching', () => {
  const s = parseFieldSelector('metadata.name=foo,status.phase!=Failed');
  assert.ok(s.matches(getter({ 'metadata.name': 'foo', 'status.phase': 'Running' })));
  assert.ok(!s.matches(getter({ 'metadata.name': 'foo', 'status.phase': 'Failed' })));
  assert.ok(!s.matches(getter({ 'metadata.name': 'bar' })));
  // A missing field reads as "".
  assert.ok(parseFieldSelector('a=').matches(getter({})));
  assert.ok(parseFieldSelector('a!=x').matches(getter({})));
  assert.ok(parseFieldSelector('').matches(getter({})));
});

test('empty selectors', () => {
  for (const s of ['', ',', ',,', '=', '!=', '==']) assert.equal(parseFieldSelector(s).empty, true, s);
  assert.equal(parseFieldSelector('a=').empty, false);
  assert.equal(parseFieldSelector('=b').empty, false);
});

test('escaping', () => {
  assert.equal(escapeFieldValue('a,b=c\\d'), 'a\\,b\\=c\\\\d');
  assert.equal(unescapeFieldValue('a\\,b\\=c\\\\d'), 'a,b=c\\d');
  const s = parseFieldSelector('a=x\\,y\\=z\\\\,b=1');
  assert.deepEqual(s.requirements, [
    { field: 'a', operator: '=', value: 'x,y=z\\' },
    { field: 'b', operator: '=', value: '1' },
  ]);
  assert.equal(s.toString(), 'a=x\\,y\\=z\\\\,b=1');
  // The first operator splits the term; only the value is unescaped.
  assert.deepEqual(parseFieldSelector('a==b\\=c\\=d').requirements, [{ field: 'a', operator: '=', value: 'b=c=d' }]);
  assert.deepEqual(parseFieldSelector('a\\b=c').requirements, [{ field: 'a\\b', operator: '=', value: 'c' }]);
});

test('invalid input fails with upstream messages', () => {
  parseError('a', "invalid selector: 'a'; can't understand 'a'");
  parseError('x=y,b', "invalid selector: 'x=y,b'; can't understand 'b'");
  parseError('a=b=c', 'invalid field selector: unescaped character in value: 61');
  parseError('a=b\\x', 'invalid field selector: invalid escape sequence: \\x');
  parseError('a=b\\', 'invalid field selector: invalid escape sequence: \\');
  assert.throws(() => unescapeFieldValue('a,b'), { message: 'invalid field selector: unescaped character in value: 44' });
});

test('fieldSelectorFromSet', () => {
  const s = fieldSelectorFromSet({ 'metadata.name': 'a,b' });
  assert.equal(s.toString(), 'metadata.name=a\\,b');
  assert.ok(s.matches(getter({ 'metadata.name': 'a,b' })));
});
