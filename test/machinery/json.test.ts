import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deepClone, JsonSyntaxError, jsonNumber, MAX_JSON_DEPTH, NumberLiteral, parseJson, parseJsonLiterals, stringifyJson } from '../../src/machinery/json.js';

const syntaxError = (text: string, message: string) =>
  assert.throws(() => parseJson(text), (e: unknown) => e instanceof JsonSyntaxError && e.message === message, `${JSON.stringify(text)} -> ${message}`);

test('parses plain JSON like JSON.parse', () => {
  assert.deepEqual(parseJson('{"a":[1,2.5,"x",true,false,null],"b":{}}'), { a: [1, 2.5, 'x', true, false, null], b: {} });
  assert.equal(parseJson(' 42 '), 42);
  assert.equal(parseJson('"\\u00e9\\n"'), 'é\n');
});

test('integers beyond 2^53 become BigInt and round-trip exactly', () => {
  assert.equal(parseJson('9223372036854775807'), 9223372036854775807n);
  assert.equal(parseJson('-9223372036854775808'), -9223372036854775808n);
  assert.deepEqual(parseJson('{"rv":12345678901234567}'), { rv: 12345678901234567n });
  assert.equal(stringifyJson(parseJson('{"a":9223372036854775807,"b":[1,-9007199254740993]}')), '{"a":9223372036854775807,"b":[1,-9007199254740993]}');
  // Safe integers stay numbers on the slow path too; long fractions parse like JSON.parse.
  assert.equal(parseJson('9007199254740991'), 9007199254740991);
  assert.equal(parseJson('0.12345678901234567'), 0.12345678901234567);
  // Beyond int64 the apiserver keeps a float64, so do we.
  assert.equal(parseJson('9223372036854775808'), 9223372036854775808);
  assert.equal(parseJson('1.5'), 1.5);
  assert.equal(parseJson('1e3'), 1000);
});

test('jsonNumber follows the int64-preserving decoder', () => {
  assert.equal(jsonNumber('-0'), 0);
  assert.ok(!Object.is(jsonNumber('-0'), -0));
  assert.equal(jsonNumber('1.0'), 1);
  assert.equal(jsonNumber('18446744073709551615'), 18446744073709551615);
  assert.equal(jsonNumber('-9007199254740993'), -9007199254740993n);
});

test('syntax errors carry encoding/json texts', () => {
  syntaxError('', 'unexpected end of JSON input');
  syntaxError('   ', 'unexpected end of JSON input');
  syntaxError('{"a":', 'unexpected end of JSON input');
  syntaxError('"abc', 'unexpected end of JSON input');
  syntaxError('x', "invalid character 'x' looking for beginning of value");
  syntaxError('[1,]', "invalid character ']' looking for beginning of value");
  syntaxError('{"a":1,}', "invalid character '}' looking for beginning of object key string");
  syntaxError('{1:2}', "invalid character '1' looking for beginning of object key string");
  syntaxError('{"a" 1}', "invalid character '1' after object key");
  syntaxError('{"a":1 "b":2}', `invalid character '"' after object key:value pair`);
  syntaxError('[1 2]', "invalid character '2' after array element");
  syntaxError('[1]x', "invalid character 'x' after top-level value");
  syntaxError('01', "invalid character '1' after top-level value");
  syntaxError('-a', "invalid character 'a' in numeric literal");
  syntaxError('1.a', "invalid character 'a' after decimal point in numeric literal");
  syntaxError('1ea', "invalid character 'a' in exponent of numeric literal");
  syntaxError('trux', "invalid character 'x' in literal true (expecting 'e')");
  syntaxError('nUll', "invalid character 'U' in literal null (expecting 'u')");
  syntaxError('"a\nb"', "invalid character '\\n' in string literal");
  syntaxError('"\u0001"', "invalid character '\\x01' in string literal");
  syntaxError('"\\x"', "invalid character 'x' in string escape code");
  syntaxError('"\\u12g4"', "invalid character 'g' in \\u hexadecimal character escape");
  syntaxError("'a'", "invalid character '\\'' looking for beginning of value");
  // Go reports the first byte of a multi-byte character.
  syntaxError('é', "invalid character 'Ã' looking for beginning of value");
});

test('numbers out of float64 range fail like the apiserver decoder', () => {
  syntaxError('{"a":1e400}', 'json: cannot unmarshal number 1e400 into Go value of type float64');
  // A syntax error anywhere wins over the range error.
  syntaxError('[1e400,]', "invalid character ']' looking for beginning of value");
});

test('nesting: 10000 levels are accepted, 10001 rejected with Go\'s error', () => {
  const ok = parseJson('['.repeat(MAX_JSON_DEPTH) + ']'.repeat(MAX_JSON_DEPTH));
  assert.ok(Array.isArray(ok));
  syntaxError('['.repeat(MAX_JSON_DEPTH + 1) + ']'.repeat(MAX_JSON_DEPTH + 1), "invalid character '[' exceeded max depth");
  syntaxError('{"a":'.repeat(MAX_JSON_DEPTH + 1) + '1' + '}'.repeat(MAX_JSON_DEPTH + 1), "invalid character '{' exceeded max depth");
  // A 3 MiB body of '[' neither overflows the stack nor takes long.
  const start = Date.now();
  syntaxError('['.repeat(3 * 1024 * 1024), "invalid character '[' exceeded max depth");
  assert.ok(Date.now() - start < 5000);
  // Brackets inside strings do not count.
  assert.equal((parseJson(JSON.stringify({ s: '['.repeat(20000) })) as { s: string }).s.length, 20000);
});

test('surrogate escapes decode like Go: pairs combine, lone ones become U+FFFD', () => {
  assert.equal(parseJson('"\\ud83d\\ude00"'), '😀');
  assert.equal(parseJson('"\\ud800x"'), '\ufffdx');
  assert.equal(parseJson('"\\udc00"'), '\ufffd');
});

test('__proto__ keys become own properties', () => {
  const v = parseJson('{"__proto__":{"polluted":1},"a":12345678901234567}') as Record<string, unknown>;
  assert.deepEqual(Object.keys(v), ['__proto__', 'a']);
  assert.equal(Object.getPrototypeOf(v), Object.prototype);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});

test('parseJsonLiterals keeps number texts', () => {
  assert.deepEqual(parseJsonLiterals('{"rv":1.50,"n":[1e3]}'), { rv: new NumberLiteral('1.50'), n: [new NumberLiteral('1e3')] });
});

test('stringifyJson prints BigInt bare, honours indent, and handles deep nesting', () => {
  assert.equal(stringifyJson({ a: 1n, b: [2n, { c: -3n }], d: 'x' }), '{"a":1,"b":[2,{"c":-3}],"d":"x"}');
  assert.equal(stringifyJson({ a: 1n, b: [] , c: {} }, 2), '{\n  "a": 1,\n  "b": [],\n  "c": {}\n}');
  assert.equal(stringifyJson({ a: [1n, undefined, () => 1], u: undefined, t: new Date(0) }), '{"a":[1,null,null],"t":"1970-01-01T00:00:00.000Z"}');
  assert.equal(stringifyJson({ a: 1 }, 2), JSON.stringify({ a: 1 }, undefined, 2));
  const deep = parseJson('{"a":'.repeat(MAX_JSON_DEPTH) + '9223372036854775807' + '}'.repeat(MAX_JSON_DEPTH));
  assert.equal(stringifyJson(deep), '{"a":'.repeat(MAX_JSON_DEPTH) + '9223372036854775807' + '}'.repeat(MAX_JSON_DEPTH));
  const cyclic: Record<string, unknown> = { n: 1n };
  cyclic.self = cyclic;
  assert.throws(() => stringifyJson(cyclic), TypeError);
});

test('deepClone copies JSON values with BigInt, without sharing or recursion limits', () => {
  const v = { a: [1, { b: 9223372036854775807n }], c: null, d: 'x' };
  const c = deepClone(v);
  assert.deepEqual(c, v);
  assert.notEqual(c.a, v.a);
  assert.notEqual(c.a[1], v.a[1]);
  const deep = parseJson('['.repeat(MAX_JSON_DEPTH) + ']'.repeat(MAX_JSON_DEPTH));
  assert.equal(stringifyJson(deepClone(deep)), '['.repeat(MAX_JSON_DEPTH) + ']'.repeat(MAX_JSON_DEPTH));
  const proto = deepClone(parseJson('{"__proto__":1}') as object);
  assert.deepEqual(Object.keys(proto), ['__proto__']);
});

test('parses a large text in steps: each scan and the parse take one (a turn of the loop between them for a request)', async () => {
  const { parsingJson } = await import('../../src/machinery/json.js');
  const text = JSON.stringify({ data: Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`k${i}`, 'v'])) });
  const steps = parsingJson(text);
  let pauses = 0;
  let r = steps.next();
  for (; !r.done; r = steps.next()) pauses++;
  assert.equal(pauses, 2, 'the nesting scan and the parse come after pauses');
  assert.deepEqual(r.value, JSON.parse(text));
  const small = parsingJson('{"a":1}');
  assert.deepEqual(small.next(), { done: true, value: { a: 1 } }, 'a small text in one step');
});
