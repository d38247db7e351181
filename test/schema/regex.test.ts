import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Budget, BudgetExceeded, compileRegex, regexError } from '../../src/schema/regex/index.js';

const matches = (p: string, s: string): boolean => compileRegex(p).test(s);

test('invalid patterns fail with Go regexp texts', () => {
  const cases: [string, string][] = [
    ['+', 'missing argument to repetition operator: `+`'],
    ['a**', 'invalid nested repetition operator: `**`'],
    ['a{2}{3}', 'invalid nested repetition operator: `{2}{3}`'],
    ['(a', 'missing closing ): `(a`'],
    ['a)', 'unexpected ): `a)`'],
    ['[a', 'missing closing ]: `[a`'],
    ['[z-a]', 'invalid character class range: `z-a`'],
    ['\\1', 'invalid escape sequence: `\\1`'],
    ['\\C', 'invalid escape sequence: `\\C`'],
    ['x{1001}', 'invalid repeat count: `{1001}`'],
    ['(a{500}){3}', 'invalid repeat count: `{3}`'],
    ['(?<n', 'invalid named capture: `(?<n`'],
    ['(?z)', 'invalid or unsupported Perl syntax: `(?z`'],
    ['\\p{Foo}', 'invalid character class range: `\\p{Foo}`'],
    ['[[:foo:]]', 'invalid character class range: `[:foo:]`'],
    ['\\', 'trailing backslash at end of expression: ``'],
    ['(?=a)', 'invalid or unsupported Perl syntax: `(?=`'],
  ];
  for (const [p, want] of cases) assert.equal(regexError(p), `error parsing regexp: ${want}`, p);
  for (const p of ['^[a-z0-9]([-a-z0-9]*[a-z0-9])?$', '(?i)abc', 'a{,3}', '\\Qa.b\\E', '(?P<name>x)', '\\pL\\p{Greek}\\PN', '[[:alpha:][:^digit:]]', '\\x{1F600}\\x41\\101']) {
    assert.equal(regexError(p), undefined, p);
  }
});

test('RE2 semantics: anchors, classes, case folding, unanchored search', () => {
  assert.equal(matches('^a$', 'a\n'), false, '$ is the end of text without (?m)');
  assert.equal(matches('(?m)^a$', 'b\na'), true);
  assert.equal(matches('\\bfoo\\b', 'a foo b'), true);
  assert.equal(matches('\\bfoo\\b', 'afoo'), false);
  assert.equal(matches('\\d', '٣'), false, '\\d is ASCII only');
  assert.equal(matches('(?i)k', '\u212a'), true, 'Kelvin sign folds to k');
  assert.equal(matches('(?i)straße', 'STRASSE'), false, 'only simple folding');
  assert.equal(matches('\\p{Greek}', 'αβ'), true);
  assert.equal(matches('.', '\n'), false);
  assert.equal(matches('(?s).', '\n'), true);
  assert.equal(matches('^[^a]$', '\n'), true);
  assert.equal(matches('^.$', '😀'), true, 'a rune, not a UTF-16 unit');
  assert.equal(matches('^a{2,3}$', 'aaaa'), false);
  assert.equal(matches('b', 'abc'), true, 'unanchored');
  assert.equal(matches('^$', ''), true);
  assert.equal(matches('^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$', '* * * * */5'), true);
  assert.equal(matches('^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$', '* * * *'), false);
});

test('no catastrophic backtracking, and a budget bounds the work', () => {
  const start = Date.now();
  assert.equal(matches('(a+)+$', 'a'.repeat(100_000) + 'b'), false);
  assert.ok(Date.now() - start < 2000);
  assert.throws(() => compileRegex('(a|b)*c').test('ab'.repeat(100_000), new Budget(1000)), BudgetExceeded);
});

test('find and findAll are leftmost-first like Go', () => {
  assert.equal(compileRegex('[a-z]+').find('12abc34'), 'abc');
  assert.equal(compileRegex('a+?').find('aaa'), 'a');
  assert.deepEqual(compileRegex('[a-z]+').findAll('ab cd ef', -1), ['ab', 'cd', 'ef']);
  assert.deepEqual(compileRegex('[a-z]+').findAll('ab cd ef', 2), ['ab', 'cd']);
  assert.deepEqual(compileRegex('a*').findAll('baaab', -1), ['', 'aaa', '']);
});
