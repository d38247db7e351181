// kubectl-style JSONPath: parsing (with client-go's error texts), evaluation and printing.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { JsonPath, JsonPathError, JsonPathSyntaxError, parseJsonPath } from '../../src/machinery/jsonpath.js';
import { parseJson } from '../../src/machinery/json.js';

function run(template: string, data: unknown, allowMissingKeys = false): string {
  return new JsonPath('test').allowMissingKeys(allowMissingKeys).parse(template).execute(data);
}

function runError(template: string, data: unknown, allowMissingKeys = false): string {
  try {
    run(template, data, allowMissingKeys);
  } catch (e) {
    assert.ok(e instanceof JsonPathError, String(e));
    return e.message;
  }
  return 'nil';
}

function parseError(template: string): string {
  try {
    parseJsonPath(template);
  } catch (e) {
    assert.ok(e instanceof JsonPathSyntaxError);
    return e.message;
  }
  return 'nil';
}

describe('jsonpath parser', () => {
  it('builds the node tree of client-go', () => {
    assert.deepEqual(parseJsonPath('hello {.jsonpath}').nodes, [
      { type: 'text', text: 'hello ' },
      { type: 'list', nodes: [{ type: 'field', name: 'jsonpath' }] },
    ]);
    assert.deepEqual(parseJsonPath(`{['book.price']}`).nodes, [
      { type: 'list', nodes: [{ type: 'field', name: 'book' }, { type: 'field', name: 'price' }] },
    ]);
    assert.deepEqual(parseJsonPath('{[-1]}').nodes[0], {
      type: 'list',
      nodes: [
        {
          type: 'array',
          params: [
            { value: -1, known: true, derived: false },
            { value: 0, known: true, derived: true },
            { value: 0, known: false, derived: false },
          ],
        },
      ],
    });
    assert.deepEqual(parseJsonPath('{range .items}{.name},{end}').nodes, [
      { type: 'list', nodes: [{ type: 'identifier', name: 'range' }, { type: 'field', name: 'items' }] },
      { type: 'list', nodes: [{ type: 'field', name: 'name' }] },
      { type: 'text', text: ',' },
      { type: 'list', nodes: [{ type: 'identifier', name: 'end' }] },
    ]);
    const filter = parseJsonPath(`{[?(@.status.nodeInfo.osImage == "(\\"\\")")]}`).nodes[0];
    assert.deepEqual(filter, {
      type: 'list',
      nodes: [
        {
          type: 'filter',
          operator: '==',
          left: { type: 'list', nodes: [{ type: 'field', name: 'status' }, { type: 'field', name: 'nodeInfo' }, { type: 'field', name: 'osImage' }] },
          right: { type: 'list', nodes: [{ type: 'text', text: '("")' }] },
        },
      ],
    });
    assert.deepEqual(parseJsonPath(`{[?(@.test == "())(")]}`).nodes[0], {
      type: 'list',
      nodes: [
        {
          type: 'filter',
          operator: '==',
          left: { type: 'list', nodes: [{ type: 'field', name: 'test' }] },
          right: { type: 'list', nodes: [{ type: 'text', text: '())(' }] },
        },
      ],
    });
    assert.deepEqual(parseJsonPath('{.a\\.b/c}').nodes[0], { type: 'list', nodes: [{ type: 'field', name: 'a.b/c' }] });
    assert.deepEqual(parseJsonPath('{true}').nodes[0], { type: 'list', nodes: [{ type: 'bool', value: true }] });
    assert.deepEqual(parseJsonPath('{1.5}').nodes[0], { type: 'list', nodes: [{ type: 'float', value: 1.5 }] });
  });

  it('fails with client-go messages', () => {
    assert.equal(parseError('{.hello'), 'unclosed action');
    assert.equal(parseError('{*}'), "unrecognized character in action: U+002A '*'");
    assert.equal(parseError('{.a{'), "unrecognized character in action: U+007B '{'");
    assert.equal(parseError('{\t}'), 'unrecognized character in action: U+0009');
    assert.equal(parseError('{+12.3.0}'), 'cannot parse number +12.3.0');
    assert.equal(parseError('{[1}'), 'unterminated array');
    assert.equal(parseError('{.spec['), 'unterminated array');
    assert.equal(parseError('{[?(.price]}'), 'unterminated filter');
    assert.equal(parseError('{[?(@.a==1)}'), 'unclosed array expect ]');
    assert.equal(parseError('{........}'), 'invalid multiple recursive descent');
    assert.equal(parseError('{["a"]}'), 'invalid array index "a"');
    assert.equal(parseError('{[1:-]}'), 'array index - is not a number');
    assert.equal(parseError('{"abc}'), 'unterminated quoted string');
    assert.equal(parseError(`{"a\\'b"}`), `unquote string "a\\'b" error invalid syntax`);
    assert.equal(parseError('{\\\\\\}'), "unrecognized character in action: U+005C '\\'");
  });
});

describe('jsonpath evaluation', () => {
  const types = {
    bools: [true, false, true, false],
    integers: [1, 2, 3, 4],
    floats: [1.0, 2.2, 3.3, 4.0],
    strings: ['one', 'two', 'three', 'four'],
    interfaces: [true, 'one', 1, 1.1],
    maps: [
      { name: 'one', value: 1 },
      { name: 'two', value: 2.02 },
      { name: 'three', value: 3.03 },
      { name: 'four', value: 4.04 },
    ],
  };

  it('indexes, slices and prints values as client-go', () => {
    const cases: [string, string][] = [
      ['{ .bools }', '[true,false,true,false]'],
      ['{ .bools[-1] }', 'false'],
      ['{ .bools[0:2] }', 'true false'],
      ['{ .bools[:4:2] }', 'true true'],
      ['{ .integers[-2] }', '3'],
      ['{ .floats }', '[1,2.2,3.3,4]'],
      ['{ .floats[:4:2] }', '1 3.3'],
      ['{ .strings }', '["one","two","three","four"]'],
      ['{ .strings[0] }', 'one'],
      ['{ .interfaces }', '[true,"one",1,1.1]'],
      ['{ .interfaces[:4:2] }', 'true 1'],
      ['{ .maps[0] }', '{"name":"one","value":1}'],
      ['{ .maps[1::2] }', '{"name":"two","value":2.02} {"name":"four","value":4.04}'],
      ['{.maps[*].name}', 'one two three four'],
      ['{.maps[1,3].name}', 'two four'],
      ['{.integers[5:5]}', ''],
      ['hello jsonpath', 'hello jsonpath'],
      ['{"{"}', '{'],
      ['{..}', '{"bools":[true,false,true,false],"floats":[1,2.2,3.3,4],"integers":[1,2,3,4],"interfaces":[true,"one",1,1.1],"maps":[{"name":"one","value":1},{"name":"two","value":2.02},{"name":"three","value":3.03},{"name":"four","value":4.04}],"strings":["one","two","three","four"]} [true,false,true,false] [1,2,3,4] [1,2.2,3.3,4] ["one","two","three","four"] one two three four [true,"one",1,1.1] one [{"name":"one","value":1},{"name":"two","value":2.02},{"name":"three","value":3.03},{"name":"four","value":4.04}] {"name":"one","value":1} one {"name":"two","value":2.02} two {"name":"three","value":3.03} three {"name":"four","value":4.04} four'],
    ];
    for (const [template, expect] of cases) assert.equal(run(template, types), expect, template);
    assert.equal(run('{[?(@<5)]}', [2, 6, 3, 7]), '2 3');
    assert.equal(run('{[1,3,4]}', [0, 1, 2, 3, 4]), '1 3 4');
    assert.equal(run('{.big}', parseJson('{"big": 9223372036854775807, "f": 1e21, "g": 1234567.5}')), '9223372036854775807');
    assert.equal(run('{.f} {.g}', parseJson('{"big": 9223372036854775807, "f": 1e21, "g": 1234567.5}')), '1e+21 1.2345675e+06');
    assert.equal(run('{.html}', { html: { a: '<b>&' } }), '{"a":"\\u003cb\\u003e\\u0026"}');
  });

  const nodes = {
    kind: 'List',
    items: [
      {
        kind: 'None',
        metadata: { name: '127.0.0.1', labels: { 'kubernetes.io/hostname': '127.0.0.1' } },
        status: { capacity: { cpu: '4' }, ready: true, addresses: [{ type: 'LegacyHostIP', address: '127.0.0.1' }] },
      },
      {
        kind: 'None',
        metadata: { name: '127.0.0.2', labels: { 'kubernetes.io/hostname': '127.0.0.2' } },
        status: {
          capacity: { cpu: '8' },
          ready: false,
          addresses: [
            { type: 'LegacyHostIP', address: '127.0.0.2' },
            { type: 'another', address: '127.0.0.3' },
          ],
        },
      },
    ],
    users: [
      { name: 'myself', user: {} },
      { name: 'e2e', user: { username: 'admin', password: 'secret' } },
    ],
  };

  it('handles ranges, unions, filters and recursive descent over Kubernetes objects', () => {
    const cases: [string, string][] = [
      ['{range .items[*]}{.metadata.name}, {end}{.kind}', '127.0.0.1, 127.0.0.2, List'],
      ['{range .items[*]}{.metadata.name}{"\\t"}{end}', '127.0.0.1\t127.0.0.2\t'],
      ['{.items[*].status.addresses[*].address}', '127.0.0.1 127.0.0.2 127.0.0.3'],
      ['{range .items[*]}{range .status.addresses[*]}{.address}, {end}{end}', '127.0.0.1, 127.0.0.2, 127.0.0.3, '],
      [`{.items[*]['metadata.name', 'status.capacity']}`, '127.0.0.1 127.0.0.2 {"cpu":"4"} {"cpu":"8"}'],
      ['{range .items[*]}[{.metadata.name}, {.status.capacity}] {end}', '[127.0.0.1, {"cpu":"4"}] [127.0.0.2, {"cpu":"8"}] '],
      ['{.users[?(@.name=="e2e")].user.password}', 'secret'],
      ['{.items[0].metadata.labels.kubernetes\\.io/hostname}', '127.0.0.1'],
      ['{.items[?(@.metadata.labels.kubernetes\\.io/hostname=="127.0.0.1")].kind}', 'None'],
      ['{.items[?(@..ready==true)].metadata.name}', '127.0.0.1'],
      ['{..name}', '127.0.0.1 127.0.0.2 myself e2e'],
      ['{...name}', '127.0.0.1 127.0.0.2 myself e2e'],
    ];
    for (const [template, expect] of cases) assert.equal(run(template, nodes), expect, template);
    const points = [
      { id: 'i1', x: 4, y: -5 },
      { id: 'i2', x: -2, y: -5, z: 1 },
      { id: 'i7', x: null, y: 4 },
    ];
    assert.equal(run('{[?(@.z)].id}', points), 'i2');
    assert.equal(run(`{[0]['id']}`, points), 'i1');
    assert.equal(run(`{[-1]['x']}`, points), 'null');
    assert.equal(run('{range .items[*]}{.metadata.name}{end}', { items: [] }, true), '');
    assert.equal(
      run('{range .items[*]}{.metadata.name}{":"}{range @.spec.containers[*]}{.name}{","}{end}{"+"}{end}', { items: [] }, true),
      '',
    );
  });

  it('reports run-time errors with client-go messages', () => {
    const store = { Labels: { 'web/html': 15 }, Book: [{ Price: 8.95 }] };
    assert.equal(runError('{hello}', store), 'unrecognized identifier hello');
    assert.equal(runError('{.hello}', store), 'hello is not found');
    assert.equal(runError('{.Labels[0]}', store), 'map[string]interface {} is not array or slice');
    assert.equal(runError('{.Book[?(@.Price<>10)]}', store), 'unrecognized filter operator <>');
    assert.equal(runError('{range .Labels.*}{@}{end}{end}', store), 'not in range, nothing to end');
    assert.equal(runError('{.Book[3]}', store), 'array index out of bounds: index 3, length 1');
    assert.equal(runError('{.Book[0:5]}', store), 'array index out of bounds: index 4, length 1');
    assert.equal(runError('{.Book[::0]}', store), 'step must be > 0');
    assert.equal(runError('{.Book[?(@.Price<"x")]}', store), 'incompatible types for comparison');
    assert.equal(runError('{.Labels[?(@.a)]}', store), 'map[web/html:15] is not array or slice and cannot be filtered');
    assert.equal(run('{.hello}', store, true), '');
    assert.equal(run('before-{.hello}after', store, true), 'before-after');
    assert.equal(runError('x', store), 'nil');
    assert.throws(() => new JsonPath('cols').findResults({}), /cols is an incomplete jsonpath template/);
  });
});
