import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  everything,
  LabelSelectorError,
  newRequirement,
  nothing,
  parseLabelSelector,
  selectorFromLabelSelector,
  selectorFromSet,
  validateLabels,
  validateLabelSelector,
} from '../../src/machinery/labels.js';
import { fieldErrorString } from '../../src/machinery/field-errors.js';

const parseError = (s: string, message: string) =>
  assert.throws(() => parseLabelSelector(s), (e: unknown) => e instanceof LabelSelectorError && e.message === message, `${JSON.stringify(s)} -> ${message}`);

const KEY_NAME_MSG =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

test('good selectors re-print without spaces (upstream TestSelectorParse)', () => {
  for (const s of ['x=a,y=b,z=c', '', 'x!=a,y=b', 'x=', 'x= ', 'x=,z= ', 'x= ,z= ', '!x', 'x>1', 'x>1,z<5']) {
    assert.equal(parseLabelSelector(s).toString(), s.replaceAll(' ', ''), s);
  }
});

test('requirements are sorted by key and values normalized', () => {
  assert.equal(parseLabelSelector('x=a,a=x').toString(), parseLabelSelector('a=x,x=a').toString());
  assert.equal(parseLabelSelector('x notin (abc,,def),bar,z in (),w').toString(), 'bar,w,x notin (,abc,def),z in ()');
  assert.equal(parseLabelSelector('a in (x,y,notin, z,in)').toString(), 'a in (in,notin,x,y,z)');
  assert.equal(parseLabelSelector('x in (a,,a,,a,,a,,)').toString(), 'x in (,a)');
  assert.equal(parseLabelSelector('foo  in\t (abc)').toString(), 'foo in (abc)');
  assert.equal(parseLabelSelector('x notin\n (abc)').toString(), 'x notin (abc)');
  assert.equal(parseLabelSelector('\rx').toString(), 'x');
  assert.equal(parseLabelSelector('a in (xyz), b == c').toString(), 'a in (xyz),b==c');
  const s = parseLabelSelector('a in (x,y),!b,c!=d');
  assert.equal(s.toString(), 'a in (x,y),!b,c!=d');
  assert.deepEqual(
    s.requirements.map((r) => [r.key, r.operator, r.values]),
    [
      ['a', 'in', ['x', 'y']],
      ['b', '!', []],
      ['c', '!=', ['d']],
    ],
  );
});

test('matching semantics', () => {
  const m = (sel: string, labels: Record<string, string> | undefined) => parseLabelSelector(sel).matches(labels);
  assert.ok(m('', { x: 'y' }));
  assert.ok(m('', undefined));
  assert.ok(m('x=y', { x: 'y' }));
  assert.ok(m('x==y', { x: 'y' }));
  assert.ok(!m('x=y', { x: 'z' }));
  assert.ok(!m('x=y', {}));
  assert.ok(m('x!=y,z!=w', { x: 'z', z: 'a' }));
  assert.ok(m('x!=y', {}));
  assert.ok(m('notin=in', { notin: 'in' }));
  assert.ok(m('x', { x: 'z' }));
  assert.ok(!m('x', { y: 'z' }));
  assert.ok(m('!x', { y: 'z' }));
  assert.ok(!m('!x', { x: '' }));
  assert.ok(m('x in (a,b)', { x: 'b' }));
  assert.ok(!m('x in (a,b)', {}));
  assert.ok(m('x notin (a,b)', {}));
  assert.ok(!m('x notin (a,b)', { x: 'a' }));
  assert.ok(m('x in ()', { x: '' }));
  assert.ok(m('z>1', { z: '2' }));
  assert.ok(!m('z>1', { z: 'v2' }));
  assert.ok(!m('z>1', {}));
  assert.ok(m('z<5', { z: '-9223372036854775808' }));
  assert.ok(!m('z<1', { z: '9223372036854775808' }));
  assert.ok(m('a in (x,y),!b,c!=d', { a: 'x', c: 'e' }));
  assert.ok(!m('a in (x,y),!b,c!=d', { a: 'x', b: '', c: 'e' }));
  assert.ok(!m('a in (x,y),!b,c!=d', { a: 'x', c: 'd' }));
  assert.ok(!m('x,y in (a)', { y: 'a' }));
  // Inherited properties are not labels.
  assert.ok(!m('constructor', {}));
});

test('empty, everything, nothing, sets', () => {
  assert.equal(parseLabelSelector('').empty, true);
  assert.equal(parseLabelSelector('  ').empty, true);
  assert.equal(parseLabelSelector('a').empty, false);
  assert.ok(everything().matches({ a: 'b' }) && everything().empty);
  assert.ok(!nothing().matches({}) && !nothing().empty);
  const s = selectorFromSet({ b: '2', a: '1' });
  assert.equal(s.toString(), 'a=1,b=2');
  assert.ok(s.matches({ a: '1', b: '2', c: '3' }));
  assert.ok(!s.matches({ a: '1' }));
});

test('malformed selectors fail with upstream messages', () => {
  parseError('a in x', "unable to parse requirement: found 'x' expected: '('");
  parseError('x=a||y=b', `unable to parse requirement: values[0][x]: Invalid value: "a||y": ${VALUE_MSG}`);
  parseError('x==a==b', "found '==', expected: ',' or 'end of string'");
  parseError('!x=a', "found '=', expected: ',' or 'end of string'");
  parseError('x,,y', "found ',', expected: identifier after ','");
  parseError(',x,y', "found ',', expected: !, identifier, or 'end of string'");
  parseError('a in (xyz),', "found '', expected: identifier after ','");
  parseError('a in (xyz)b notin ()', "found 'b', expected: ',' or 'end of string'");
  parseError('x nott in (y)', "unable to parse requirement: found 'nott', expected: in, notin, =, ==, !=, gt, lt");
  parseError('x in (a b)', "unable to parse requirement: found 'b', expected: ',' or ')'");
  parseError('x in (=)', "unable to parse requirement: found '=', expected: ',', ')' or identifier");
  parseError('x in (a,=)', "unable to parse requirement: found '=', expected: ',', or identifier");
  parseError('x in (a', "unable to parse requirement: found '', expected: ',' or ')'");
  parseError('x = (a)', "unable to parse requirement: found '(', expected: identifier");
  parseError('!', "unable to parse requirement: found '', expected: identifier");
  parseError('x<a', 'unable to parse requirement: values[0]: Invalid value: "a": for \'Gt\', \'Lt\' operators, the value must be an integer');
  parseError('x=a b', "found 'b', expected: ',' or 'end of string'");
  parseError('a b', "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt");
  parseError('x=a$b', `unable to parse requirement: values[0][x]: Invalid value: "a$b": ${VALUE_MSG}`);
  parseError('-x=a', `unable to parse requirement: <nil>: Invalid value: "-x": ${KEY_NAME_MSG}`);
  parseError('x>a$', `unable to parse requirement: [values[0]: Invalid value: "a$": for 'Gt', 'Lt' operators, the value must be an integer, values[0][x]: Invalid value: "a$": ${VALUE_MSG}]`);
});

test('a NUL character reads as end of input, as in the Go lexer', () => {
  assert.equal(parseLabelSelector('a=b \0,c=d').toString(), 'a=b');
  assert.equal(parseLabelSelector('a=b\0,c=d').toString(), 'a=b,c=d');
  parseError('a=b, \0c=d', "found '', expected: identifier after ','");
});

test('newRequirement validation', () => {
  assert.throws(() => newRequirement('x', 'in', []), { message: `values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty` });
  assert.throws(() => newRequirement('x', '=', ['a', 'b']), { message: 'values: Invalid value: ["a","b"]: exact-match compatibility requires one single value' });
  assert.throws(() => newRequirement('x', 'exists', ['a']), { message: 'values: Invalid value: ["a"]: values set must be empty for exists and does not exist' });
  assert.throws(() => newRequirement('', '=', ['a']), { message: `key: Invalid value: "": name part must be non-empty; ${KEY_NAME_MSG}` });
});

test('metav1.LabelSelector conversion', () => {
  assert.ok(!selectorFromLabelSelector(null).matches({}));
  assert.ok(!selectorFromLabelSelector(undefined).empty);
  assert.ok(selectorFromLabelSelector({}).empty);
  const s = selectorFromLabelSelector({
    matchLabels: { app: 'web' },
    matchExpressions: [
      { key: 'tier', operator: 'In', values: ['b', 'a'] },
      { key: 'env', operator: 'NotIn', values: ['prod'] },
      { key: 'team', operator: 'Exists' },
      { key: 'legacy', operator: 'DoesNotExist' },
    ],
  });
  assert.equal(s.toString(), 'app=web,env notin (prod),!legacy,team,tier in (a,b)');
  assert.ok(s.matches({ app: 'web', tier: 'a', team: 'x' }));
  assert.ok(!s.matches({ app: 'web', tier: 'a', team: 'x', legacy: '' }));
  assert.throws(() => selectorFromLabelSelector({ matchExpressions: [{ key: 'a', operator: 'Foo' }] }), {
    message: '"Foo" is not a valid label selector operator',
  });
  assert.throws(() => selectorFromLabelSelector({ matchExpressions: [{ key: 'a', operator: 'In', values: [] }] }), {
    message: "values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty",
  });
  assert.throws(() => selectorFromLabelSelector({ matchLabels: { a: 'b c' } }), { message: `values[0][a]: Invalid value: "b c": ${VALUE_MSG}` });
});

test('metav1 ValidateLabelSelector and ValidateLabels', () => {
  const errs = validateLabelSelector(
    {
      matchLabels: { 'a b': 'c' },
      matchExpressions: [
        { key: 'k', operator: 'In' },
        { key: 'k', operator: 'Exists', values: ['x'] },
        { key: 'k', operator: 'Bad' },
        { key: 'k', operator: 'NotIn', values: ['ok', 'b$d'] },
      ],
    },
    'spec.selector',
  ).map(fieldErrorString);
  assert.deepEqual(errs, [
    `spec.selector.matchLabels: Invalid value: "a b": ${KEY_NAME_MSG}`,
    "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
    "spec.selector.matchExpressions[1].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
    'spec.selector.matchExpressions[2].operator: Invalid value: "Bad": not a valid selector operator',
    `spec.selector.matchExpressions[3].values[1]: Invalid value: "b$d": ${VALUE_MSG}`,
  ]);
  assert.deepEqual(validateLabels({ ok: 'fine' }, 'metadata.labels'), []);
  assert.deepEqual(validateLabels({ ok: '-bad' }, 'metadata.labels').map(fieldErrorString), [`metadata.labels: Invalid value: "-bad": ${VALUE_MSG}`]);
});
