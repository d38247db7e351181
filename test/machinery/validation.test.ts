import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  isDNS1035Label,
  isDNS1123Label,
  isDNS1123Subdomain,
  isPathSegmentName,
  isPathSegmentPrefix,
  isQualifiedName,
  isValidLabelValue,
  maskTrailingDash,
  nameIsDNSLabel,
  nameIsDNSSubdomain,
  regexError,
  validatePathSegmentName,
} from '../../src/machinery/validation.js';

const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS1035_MSG =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const KEY_NAME_MSG =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

test('regexError formats examples like upstream (with its double space)', () => {
  assert.equal(regexError('msg', 'fmt'), "msg (regex used for validation is 'fmt')");
  assert.equal(regexError('msg', 'fmt', 'a', 'b'), "msg (e.g. 'a',  or 'b', regex used for validation is 'fmt')");
});

test('DNS-1123 subdomain', () => {
  for (const ok of ['a', 'ab', 'a.b', 'a-b.c-d', '0.a', 'a'.repeat(253), 'example.com']) assert.deepEqual(isDNS1123Subdomain(ok), [], ok);
  for (const bad of ['', 'A', 'a_b', '-a', 'a-', 'a..b', '.a', 'a.', 'a b', 'é']) assert.deepEqual(isDNS1123Subdomain(bad), [SUBDOMAIN_MSG], bad);
  assert.deepEqual(isDNS1123Subdomain('a'.repeat(254)), ['must be no more than 253 characters']);
  assert.deepEqual(isDNS1123Subdomain('A'.repeat(254)), ['must be no more than 253 characters', SUBDOMAIN_MSG]);
});

test('DNS-1123 label', () => {
  for (const ok of ['a', '0', 'a-b', 'a'.repeat(63)]) assert.deepEqual(isDNS1123Label(ok), [], ok);
  assert.deepEqual(isDNS1123Label('a.b'), ['must not contain dots']);
  assert.deepEqual(isDNS1123Label('A'), [LABEL_MSG]);
  assert.deepEqual(isDNS1123Label('a'.repeat(64)), ['must be no more than 63 characters']);
});

test('DNS-1035 label', () => {
  assert.deepEqual(isDNS1035Label('abc-123'), []);
  assert.deepEqual(isDNS1035Label('1abc'), [DNS1035_MSG]);
  assert.deepEqual(isDNS1035Label('a'.repeat(64)), ['must be no more than 63 characters']);
});

test('qualified names (label keys)', () => {
  for (const ok of ['a', 'A', 'a.b_c-d', 'example.com/MyName', 'a/b', '1/2']) assert.deepEqual(isQualifiedName(ok), [], ok);
  assert.deepEqual(isQualifiedName(''), ['name part must be non-empty', KEY_NAME_MSG]);
  assert.deepEqual(isQualifiedName('a b'), [KEY_NAME_MSG]);
  assert.deepEqual(isQualifiedName('/a'), ['prefix part must be non-empty']);
  assert.deepEqual(isQualifiedName('Example.com/a'), ['prefix part ' + SUBDOMAIN_MSG]);
  assert.deepEqual(isQualifiedName('a/'), ['name part must be non-empty', KEY_NAME_MSG]);
  assert.deepEqual(isQualifiedName('x'.repeat(64)), ['name part must be no more than 63 bytes']);
  assert.deepEqual(isQualifiedName('a'.repeat(254) + '/b'), ['prefix part must be no more than 253 bytes']);
  assert.deepEqual(isQualifiedName('a/b/c'), [
    "a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
  ]);
});

test('answers asked again are the same (valid ones are remembered; invalid ones are checked each time)', () => {
  for (let i = 0; i < 3; i++) {
    const ok = isQualifiedName('example.com/again');
    assert.equal(ok.length, 0);
    ok.push('callers may keep the array');
    assert.deepEqual(isQualifiedName('a b'), [KEY_NAME_MSG]);
    assert.deepEqual(isValidLabelValue('v1'), []);
    assert.deepEqual(isValidLabelValue('-v1'), [VALUE_MSG]);
  }
});

test('label values', () => {
  for (const ok of ['', 'a', 'A-b_c.d', 'x'.repeat(63)]) assert.deepEqual(isValidLabelValue(ok), [], ok);
  assert.deepEqual(isValidLabelValue('-a'), [VALUE_MSG]);
  assert.deepEqual(isValidLabelValue('a b'), [VALUE_MSG]);
  assert.deepEqual(isValidLabelValue('x'.repeat(64)), ['must be no more than 63 bytes']);
  // Lengths are bytes, as in Go.
  assert.deepEqual(isValidLabelValue('é'.repeat(32)), ['must be no more than 63 bytes', VALUE_MSG]);
});

test('path segment names', () => {
  assert.deepEqual(isPathSegmentName('.'), ["may not be '.'"]);
  assert.deepEqual(isPathSegmentName('..'), ["may not be '..'"]);
  assert.deepEqual(isPathSegmentName('a/b'), ["may not contain '/'"]);
  assert.deepEqual(isPathSegmentName('a%b/c'), ["may not contain '/'", "may not contain '%'"]);
  assert.deepEqual(isPathSegmentName('...'), []);
  assert.deepEqual(isPathSegmentName(''), []);
  assert.deepEqual(isPathSegmentPrefix('..'), []);
  assert.deepEqual(validatePathSegmentName('..', true), []);
  assert.deepEqual(validatePathSegmentName('..', false), ["may not be '..'"]);
});

test('name functions allow a trailing dash for generateName', () => {
  assert.equal(maskTrailingDash('foo-'), 'foa');
  assert.equal(maskTrailingDash('-'), '-');
  assert.deepEqual(nameIsDNSSubdomain('foo-', true), []);
  assert.deepEqual(nameIsDNSSubdomain('foo-', false), [SUBDOMAIN_MSG]);
  assert.deepEqual(nameIsDNSLabel('a.b-', true), ['must not contain dots']);
});
