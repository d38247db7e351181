import { test } from 'node:test';
import assert from 'node:assert/strict';
import { byteLength, compareGoStrings, formatGoFloat, goQuote } from '../../src/machinery/go-text.js';
import { isBase60Float, resolveScalar } from '../../src/machinery/yaml-resolve.js';

test('byteLength counts UTF-8 bytes', () => {
  assert.equal(byteLength('abc'), 3);
  assert.equal(byteLength('é'), 2);
  assert.equal(byteLength('€'), 3);
  assert.equal(byteLength('😀'), 4);
});

test('compareGoStrings orders by code point', () => {
  assert.ok(compareGoStrings('a', 'b') < 0);
  assert.ok(compareGoStrings('ab', 'a') > 0);
  assert.equal(compareGoStrings('x', 'x'), 0);
  // UTF-16 would put the emoji (surrogates) before U+FF5E; UTF-8 byte order puts it after.
  assert.ok(compareGoStrings('\uff5e', '😀') < 0);
});

test('goQuote is strconv.Quote', () => {
  assert.equal(goQuote('a"b\\c'), '"a\\"b\\\\c"');
  assert.equal(goQuote('\n\t\u0001\u007f'), '"\\n\\t\\x01\\x7f"');
  assert.equal(goQuote('é😀'), '"é😀"');
  assert.equal(goQuote('\u00ad\u200b'), '"\\u00ad\\u200b"');
});

test('formatGoFloat is FormatFloat(f, \'g\', -1, bits)', () => {
  const cases: [number, string][] = [
    [0, '0'],
    [1, '1'],
    [1.5, '1.5'],
    [100000, '100000'],
    [1e6, '1e+06'],
    [1234567.5, '1.2345675e+06'],
    [0.0001, '0.0001'],
    [0.00001, '1e-05'],
    [-1.5e-7, '-1.5e-07'],
    [1e21, '1e+21'],
    [1.7976931348623157e308, '1.7976931348623157e+308'],
    [NaN, 'NaN'],
    [Infinity, '+Inf'],
    [-Infinity, '-Inf'],
  ];
  for (const [f, s] of cases) assert.equal(formatGoFloat(f), s, String(f));
  assert.equal(formatGoFloat(0.1, 32), '0.1');
  assert.equal(formatGoFloat(1.1, 32), '1.1');
  assert.equal(formatGoFloat(16777217, 32), '1.6777216e+07');
});

test('go-yaml v2 scalar resolution', () => {
  assert.deepEqual(resolveScalar('', '0o17'), { tag: 'tag:yaml.org,2002:int', value: 15n });
  assert.deepEqual(resolveScalar('', '-0x10'), { tag: 'tag:yaml.org,2002:int', value: -16n });
  assert.deepEqual(resolveScalar('', '+12'), { tag: 'tag:yaml.org,2002:int', value: 12n });
  assert.deepEqual(resolveScalar('', '18446744073709551615'), { tag: 'tag:yaml.org,2002:int', value: 18446744073709551615n });
  assert.deepEqual(resolveScalar('', '18446744073709551616'), { tag: 'tag:yaml.org,2002:float', value: 18446744073709551616 });
  assert.deepEqual(resolveScalar('', '<<'), { tag: 'tag:yaml.org,2002:str', value: '<<' });
  assert.deepEqual(resolveScalar('', '2001-02-03 04:05:06'), { tag: 'tag:yaml.org,2002:timestamp', value: '2001-02-03 04:05:06' });
  assert.deepEqual(resolveScalar('', '2001-02-30'), { tag: 'tag:yaml.org,2002:str', value: '2001-02-30' });
  assert.deepEqual(resolveScalar('tag:yaml.org,2002:str', 'yes'), { tag: 'tag:yaml.org,2002:str', value: 'yes' });
  assert.throws(() => resolveScalar('tag:yaml.org,2002:bool', '1'), { message: 'yaml: cannot decode !!int `1` as a !!bool' });
  assert.ok(isBase60Float('1:20'));
  assert.ok(isBase60Float('-190:20:30.15'));
  assert.ok(!isBase60Float('1:70'));
  assert.ok(!isBase60Float('a:1'));
});
