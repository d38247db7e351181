import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseYaml, parseYamlDocuments, stringifyYaml, YamlSyntaxError } from '../../src/machinery/yaml.js';
import { compareYamlKeys } from '../../src/machinery/yaml-emit.js';

const fails = (text: string, message: string) =>
  assert.throws(() => parseYaml(text), (e: unknown) => e instanceof YamlSyntaxError && e.message === message, `${JSON.stringify(text)} -> ${message}`);

test('YAML 1.1 scalars read the way kubectl reads them', () => {
  assert.deepEqual(
    parseYaml(
      [
        'a: yes',
        'b: on',
        'c: Off',
        'd: n',
        'octal: 0777',
        'hex: 0x1F',
        'bin: 0b101',
        'under: 1_000',
        'float: 1.5',
        'exp: 1e3',
        'dot: .5',
        'eight: 08',
        'sexagesimal: 190:20:30',
        'date: 2001-12-14',
        'stamp: 2001-12-14T21:59:43.10-05:00',
        'tilde: ~',
        'empty:',
        'quoted: "yes"',
        'single: \'0777\'',
        'block: |',
        '  text',
      ].join('\n'),
    ),
    {
      a: true,
      b: true,
      c: false,
      d: false,
      octal: 511,
      hex: 31,
      bin: 5,
      under: 1000,
      float: 1.5,
      exp: 1000,
      dot: 0.5,
      eight: 8,
      sexagesimal: '190:20:30',
      date: '2001-12-14',
      stamp: '2001-12-14T21:59:43.10-05:00',
      tilde: null,
      empty: null,
      quoted: 'yes',
      single: '0777',
      block: 'text\n',
    },
  );
});

test('non-string keys become strings, YAML 1.1 booleans included', () => {
  assert.deepEqual(parseYaml('y: 1\noff: 2\n3: 3\n'), { true: 1, false: 2, '3': 3 });
});

test('big integers stay exact; other keys become strings', () => {
  const v = parseYaml('a: 9223372036854775807\nb: -9007199254740993\nc: 18446744073709551615\nd: 2e16\n1: one\n1.5: x\ntrue: t\n') as Record<string, unknown>;
  assert.equal(v.a, 9223372036854775807n);
  assert.equal(v.b, -9007199254740993n);
  assert.equal(v.c, 18446744073709551615); // uint64 turns into a float64 on the apiserver's JSON decoding
  assert.equal(v.d, 20000000000000000n); // a float64 that prints as an int64
  assert.equal(v['1'], 'one');
  assert.equal(v['1.5'], 'x');
  assert.equal(v.true, 't');
});

test('tags, anchors and merge keys', () => {
  assert.deepEqual(parseYaml('a: !!str 123\nb: !!int "12"\nc: !!float 1\nd: !custom x\ne: !!binary aGVsbG8=\n'), { a: '123', b: 12, c: 1, d: 'x', e: 'hello' });
  assert.deepEqual(parseYaml('base: &b {x: 1, z: 2}\nd:\n  <<: *b\n  z: 3\n'), { base: { x: 1, z: 2 }, d: { x: 1, z: 3 } });
  assert.deepEqual(parseYaml('a: &a {p: 1}\nb: &b {p: 2, q: 2}\nc:\n  <<: [*a, *b]\n'), { a: { p: 1 }, b: { p: 2, q: 2 }, c: { p: 1, q: 2 } });
  assert.deepEqual(parseYaml('l: &l [1, 2]\nm: *l\n'), { l: [1, 2], m: [1, 2] });
  fails('a: !!int abc', 'yaml: cannot decode !!str `abc` as a !!int');
  fails('a: !!binary "***"', 'yaml: !!binary value contains invalid base64 data');
  fails('l: &l [1]\nm:\n  <<: *l\n', 'yaml: map merge requires map or sequence of maps as the value');
  fails('a: .nan', 'json: unsupported value: NaN');
  fails('a: -.inf', 'json: unsupported value: -Inf');
});

test('alias bombs are refused', () => {
  const lines = ['a: &a ["x","x","x","x","x","x","x","x","x","x"]'];
  for (let i = 1; i < 9; i++) lines.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(10).fill('*' + String.fromCharCode(96 + i)).join(',')}]`);
  fails(lines.join('\n'), 'yaml: document contains excessive aliasing');
});

test('documents', () => {
  assert.deepEqual(parseYamlDocuments('---\na: 1\n---\n# only a comment\n---\n~\n---\nb: 2\n...\n'), [{ a: 1 }, { b: 2 }]);
  assert.deepEqual(parseYamlDocuments(''), []);
  assert.equal(parseYaml(''), null);
  // Like sigs.k8s.io/yaml, parseYaml reads the first document only.
  assert.deepEqual(parseYaml('a: 1\n---\nb: 2\n'), { a: 1 });
  assert.deepEqual(parseYaml('{"json": [1, 2.5, true, null, "s"]}'), { json: [1, 2.5, true, null, 's'] });
});

test('syntax errors name the line', () => {
  assert.throws(() => parseYaml('a: 1\nb: c: d\n'), (e: unknown) => e instanceof YamlSyntaxError && e.line === 2 && /^yaml: line 2: /.test(e.message));
  assert.throws(() => parseYaml('a: "unterminated\n'), (e: unknown) => e instanceof YamlSyntaxError && /^yaml: line \d+: /.test(e.message));
});

test("syntax errors carry go-yaml's texts and line numbers", () => {
  // go-yaml v2 (decode.go parser.fail): marks count lines from 0 and only scanner errors add one,
  // so a parser error on the second line says "line 1", and an error on the first names no line.
  fails('[1, 2\n', "yaml: line 1: did not find expected ',' or ']'");
  fails('{a: [1, 2}', "yaml: did not find expected ',' or ']'");
  fails('{"spec": {"a": 1\n', "yaml: line 1: did not find expected ',' or '}'");
  fails('a: b: c\n', 'yaml: mapping values are not allowed in this context');
  fails('a: 1\nb: c: d\n', 'yaml: line 2: mapping values are not allowed in this context');
  fails('a: 1\n  b: 2\n', 'yaml: line 2: mapping values are not allowed in this context');
  fails('a:\n  b: 1\n c: 2\n', 'yaml: line 2: did not find expected key');
  fails('k: v\n- item\n', 'yaml: line 1: did not find expected key');
  fails('- a\nb: 1\n', "yaml: line 1: did not find expected '-' indicator");
  fails('a: "x\n', 'yaml: line 2: found unexpected end of stream');
  fails('a: @x\n', 'yaml: found character that cannot start any token');
  fails('a: 1\n\tb: 2\n', 'yaml: line 2: found a tab character that violates indentation');
  fails('a: 1\na 2\n', "yaml: line 3: could not find expected ':'");
});

test('nesting beyond go-yaml\'s limit fails fast', () => {
  const start = Date.now();
  fails('['.repeat(1000 * 1024), 'yaml: exceeded max depth of 10000');
  fails('x: ' + '{'.repeat(1000 * 1024), 'yaml: exceeded max depth of 10000');
  fails('- '.repeat(500 * 1024), 'yaml: exceeded max depth of 10000');
  assert.ok(Date.now() - start < 5000);
  assert.throws(() => parseYaml('['.repeat(5000) + ']'.repeat(5000)), YamlSyntaxError);
});

test('stringifyYaml writes like kubectl -o yaml', () => {
  const obj = {
    kind: 'ConfigMap',
    apiVersion: 'v1',
    metadata: { name: 'cm', creationTimestamp: '2021-01-01T00:00:00Z', labels: { b: 'true', a: '123', c: '' }, finalizers: ['x', 'z'] },
    data: { script: 'line1\nline2\n', text: 'a: b', list: [], map: {}, n: null, quote: "it's", hash: 'a #b', star: '*x' },
    spec: { replicas: 3, ratio: 0.5, big: 9223372036854775807n, small: 1e-7, nested: [[1, 2], { k: 'v', l: [true] }] },
  };
  assert.equal(
    stringifyYaml(obj),
    [
      'apiVersion: v1',
      'data:',
      "  hash: 'a #b'",
      '  list: []',
      '  map: {}',
      '  "n": null',
      "  quote: it's",
      '  script: |',
      '    line1',
      '    line2',
      "  star: '*x'",
      "  text: 'a: b'",
      'kind: ConfigMap',
      'metadata:',
      '  creationTimestamp: "2021-01-01T00:00:00Z"',
      '  finalizers:',
      '  - x',
      '  - z',
      '  labels:',
      '    a: "123"',
      '    b: "true"',
      '    c: ""',
      '  name: cm',
      'spec:',
      '  big: 9223372036854775807',
      '  nested:',
      '  - - 1',
      '    - 2',
      '  - k: v',
      '    l:',
      '    - true',
      '  ratio: 0.5',
      '  replicas: 3',
      '  small: 1e-07',
      '',
    ].join('\n'),
  );
});

test('stringifyYaml scalar styles', () => {
  assert.equal(stringifyYaml('plain'), 'plain\n');
  assert.equal(stringifyYaml({}), '{}\n');
  assert.equal(stringifyYaml([]), '[]\n');
  assert.equal(stringifyYaml(null), 'null\n');
  assert.equal(stringifyYaml({ a: 'no trailing\nnewline' }), 'a: |-\n  no trailing\n  newline\n');
  assert.equal(stringifyYaml({ a: 'keep\n\n' }), 'a: |+\n  keep\n\n');
  assert.equal(stringifyYaml({ a: ' lead\n' }), 'a: |2\n   lead\n');
  assert.equal(stringifyYaml({ a: 'trailing \nspace' }), 'a: "trailing \\nspace"\n');
  assert.equal(stringifyYaml({ a: 'tab\there', b: 'x😀', c: 'nul\u0000' }), 'a: "tab\\there"\nb: "x\\U0001F600"\nc: "nul\\0"\n');
  assert.equal(stringifyYaml({ a: ' lead', b: 'trail ', c: '- dash', d: '-dash' }), "a: ' lead'\nb: 'trail '\nc: '- dash'\nd: -dash\n");
  assert.equal(stringifyYaml({ a: '1.5', b: '0777', c: 'yes', d: 'null', e: '12:30', f: '1e3', g: 'y' }), 'a: "1.5"\nb: "0777"\nc: "yes"\nd: "null"\ne: "12:30"\nf: "1e3"\ng: "y"\n');
  assert.equal(stringifyYaml({ big: 1e21, f: 1234567.5, neg: -0.000015, int: 100000000 }), 'big: 1e+21\nf: 1.2345675e+06\nint: 100000000\nneg: -1.5e-05\n');
  assert.equal(stringifyYaml({ ['k'.repeat(129)]: 1 }), `? ${'k'.repeat(129)}\n: 1\n`);
  assert.equal(stringifyYaml({ 'multi\nline': 1 }), '? |-\n  multi\n  line\n: 1\n');
  assert.equal(stringifyYaml({ d: new Date(0), u: undefined, f: () => 1 }), 'd: "1970-01-01T00:00:00.000Z"\n');
});

test('long lines fold at 80 columns like libyaml', () => {
  const words = Array.from({ length: 30 }, (_, i) => `w${i}`).join(' ');
  const out = stringifyYaml({ message: words });
  const lines = out.trimEnd().split('\n');
  assert.ok(lines.length > 1);
  assert.ok(lines.slice(1).every((l) => l.startsWith('  ')));
  assert.deepEqual(parseYaml(out), { message: words });
  const quoted = stringifyYaml({ m: 'x: ' + words });
  assert.match(quoted, /^m: 'x: w0/);
  assert.deepEqual(parseYaml(quoted), { m: 'x: ' + words });
});

test('round trip of parse(stringify(x))', () => {
  const v = { a: [1, 'two', { three: 3n * 10n ** 17n }], b: { 'weird key: yes': 'on', '': 'empty key' }, c: 'multi\nline text\n' };
  assert.deepEqual(parseYaml(stringifyYaml(v)), { ...v, a: [1, 'two', { three: 300000000000000000n }] });
});

test('deep values do not overflow the emitter', () => {
  const depth = 10000;
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = [v];
  assert.ok(stringifyYaml(v).startsWith('- - - '));
});

test('go-yaml key order', () => {
  const keys = ['b', 'a10', 'a2', 'A', 'a', '1', '_x', 'a01', 'a1'];
  assert.deepEqual([...keys].sort(compareYamlKeys), ['_x', '1', 'A', 'a', 'a1', 'a01', 'a2', 'a10', 'b']);
});
