import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cleanRootedPath, ContinueTokenError, decodeContinue, decodeRawUrlBase64, encodeContinue } from '../../src/machinery/continue-token.js';

const b64 = (s: string) => Buffer.from(s).toString('base64url');
const rejects = (token: string, message: string) =>
  assert.throws(() => decodeContinue(token), (e: unknown) => e instanceof ContinueTokenError && e.message === message, `${token} -> ${message}`);

test('encodes like apiserver (unpadded base64url of the JSON token)', () => {
  const t = encodeContinue(42, 'ns/name\u0000');
  assert.equal(Buffer.from(t, 'base64url').toString(), '{"v":"meta.k8s.io/v1","rv":42,"start":"ns/name\\u0000"}');
  assert.ok(!t.includes('=') && !t.includes('+') && !t.includes('/'));
  // Same bytes as Go's json.Marshal, HTML-safe escapes included.
  assert.equal(Buffer.from(encodeContinue(1, 'a<b>&c'), 'base64url').toString(), '{"v":"meta.k8s.io/v1","rv":1,"start":"a\\u003cb\\u003e\\u0026c"}');
  assert.equal(encodeContinue(5, 'x'), 'eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6NSwic3RhcnQiOiJ4In0');
});

test('round trip', () => {
  for (const [rv, start] of [
    [1, 'a'],
    [9007199254740991, 'ns-1/obj.name\u0000'],
    [7, 'ünïcode/ключ'],
  ] as const) {
    assert.deepEqual(decodeContinue(encodeContinue(rv, start)), { rv, start });
  }
  assert.deepEqual(decodeContinue(encodeContinue(3, '/abs')), { rv: 3, start: 'abs' });
  assert.deepEqual(decodeContinue(encodeContinue(9223372036854775807n, 'a')).start, 'a');
});

test('garbage tokens fail with upstream texts', () => {
  rejects('!!!', 'continue key is not valid: illegal base64 data at input byte 0');
  rejects('abc=', 'continue key is not valid: illegal base64 data at input byte 3');
  rejects('abcde', 'continue key is not valid: illegal base64 data at input byte 4');
  rejects(b64('{"v":"meta.k8s.io/v1","rv":1,"start":"a"}') + '+', 'continue key is not valid: illegal base64 data at input byte 55');
  rejects(b64('not json'), "continue key is not valid: invalid character 'o' in literal null (expecting 'u')");
  rejects(b64('{"v":"meta.k8s.io/v1"'), 'continue key is not valid: unexpected end of JSON input');
  rejects('', 'continue key is not valid: unexpected end of JSON input');
  rejects(b64('[]'), 'continue key is not valid: json: cannot unmarshal array into Go value of type storage.continueToken');
  rejects(b64('{"v":"meta.k8s.io/v1","rv":"1","start":"a"}'), 'continue key is not valid: json: cannot unmarshal string into Go struct field continueToken.rv of type int64');
  rejects(b64('{"v":"meta.k8s.io/v1","rv":1.5,"start":"a"}'), 'continue key is not valid: json: cannot unmarshal number 1.5 into Go struct field continueToken.rv of type int64');
  rejects(b64('{"v":"meta.k8s.io/v1","rv":1e3,"start":"a"}'), 'continue key is not valid: json: cannot unmarshal number 1e3 into Go struct field continueToken.rv of type int64');
  rejects(b64('{"v":1,"rv":1,"start":"a"}'), 'continue key is not valid: json: cannot unmarshal number into Go struct field continueToken.v of type string');
  rejects(b64('{"v":"meta.k8s.io/v2","rv":1,"start":"a"}'), 'continue key is not valid: server does not recognize this encoded version meta.k8s.io/v2');
  rejects(b64('null'), 'continue key is not valid: server does not recognize this encoded version ');
  rejects(b64('{"v":"meta.k8s.io/v1","start":"a"}'), 'continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
  rejects(b64('{"v":"meta.k8s.io/v1","rv":1}'), 'continue key is not valid: encoded start key empty (version meta.k8s.io/v1)');
});

test('path traversal in the start key is refused', () => {
  rejects(b64('{"v":"meta.k8s.io/v1","rv":1,"start":"../other/x"}'), 'continue key is not valid: ../other/x');
  rejects(b64('{"v":"meta.k8s.io/v1","rv":1,"start":"a/../../b"}'), 'continue key is not valid: a/../../b');
  rejects(b64('{"v":"meta.k8s.io/v1","rv":1,"start":"a//b"}'), 'continue key is not valid: a//b');
  rejects(b64('{"v":"meta.k8s.io/v1","rv":1,"start":"a/"}'), 'continue key is not valid: a/');
  rejects(b64('{"v":"meta.k8s.io/v1","rv":1,"start":"./a"}'), 'continue key is not valid: ./a');
});

test('decoding is as lenient as encoding/json', () => {
  // Case-insensitive field names, unknown fields ignored, negative resource versions kept.
  assert.deepEqual(decodeContinue(b64('{"V":"meta.k8s.io/v1","RV":-4,"Start":"k","x":[1]}')), { rv: -4, start: 'k' });
  // Go's decoder skips CR and LF in base64 input.
  const token = encodeContinue(2, 'k');
  assert.deepEqual(decodeContinue(token.slice(0, 4) + '\r\n' + token.slice(4)), { rv: 2, start: 'k' });
});

test('path.Clean for rooted paths', () => {
  assert.equal(cleanRootedPath('/a/b/../c/./d//'), '/a/c/d');
  assert.equal(cleanRootedPath('/../..'), '/');
  assert.equal(cleanRootedPath('/'), '/');
});

test('raw base64url decoding', () => {
  assert.deepEqual([...decodeRawUrlBase64('-_8')], [0xfb, 0xff]);
  assert.deepEqual([...decodeRawUrlBase64('')], []);
});
