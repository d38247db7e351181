/**
 * The static cost estimate of x-kubernetes-validations rules (issue #39): the estimate of single
 * rules against the figures kube-apiserver computes for the same schemas (apiextensions-apiserver's
 * TestCostEstimation cases: the schema without limits, then with them), and CRD validation refusing
 * rules and schemas over upstream's limits with upstream's messages.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { prepareCRDForCreate, prepareCRDForUpdate, defaultV1 } from '../../src/apis/apiextensions/defaults.js';
import type { CustomResourceDefinitionV1 } from '../../src/api/apiextensions.js';
import { validateCRD, validateCRDUpdate } from '../../src/apis/apiextensions/validation.js';
import { fieldErrorString } from '../../src/machinery/field-errors.js';
import { costErrorMessage, estimateCost } from '../../src/schema/cel/cost.js';
import { baseEnvironment, rewriteSource } from '../../src/schema/cel/env.js';
import { compileRules } from '../../src/schema/cel/rules.js';
import { validateStructuralSchema } from '../../src/schema/crd-hook.js';
import { toStructural } from '../../src/schema/structural.js';
import type { JSONSchemaProps } from '../../src/schema/types.js';

type Schema = Record<string, unknown>;
type Gen = (max: number | undefined) => Schema;

const opt = (key: string, v: number | undefined): Schema => (v === undefined ? {} : { [key]: v });
const withRule = (s: Schema, rule: string): Schema => ({ ...s, 'x-kubernetes-validations': [{ rule }] });

/** An element type as the upstream table names it. */
function itemSchema(t: string): Schema {
  if (t === 'duration' || t === 'date' || t === 'date-time') return { type: 'string', format: t };
  if (t === 'int-or-string') return { 'x-kubernetes-int-or-string': true };
  return { type: t };
}

const array = (t: string, rule: string): Gen => (max) => withRule({ type: 'array', ...opt('maxItems', max), items: itemSchema(t) }, rule);
const arrayOfArrays = (t: string, rule: string): Gen => (max) => withRule({ type: 'array', ...opt('maxItems', max), items: { type: 'array', items: { type: t } } }, rule);
const requiredAndOptional = (): Schema => ({ type: 'object', required: ['required'], properties: { required: { type: 'string' }, optional: { type: 'string' } } });
const objectArray = (rule: string): Gen => (max) => withRule({ type: 'array', ...opt('maxItems', max), items: requiredAndOptional() }, rule);
const mapArray = (t: string, rule: string): Gen => (max) => withRule({ type: 'array', ...opt('maxItems', max), items: { type: 'object', additionalProperties: { type: t } } }, rule);
const map = (t: string, rule: string): Gen => (max) => withRule({ type: 'object', ...opt('maxProperties', max), additionalProperties: itemSchema(t) }, rule);
const mapOf = (item: Schema, rule: string): Gen => (max) => withRule({ type: 'object', ...opt('maxProperties', max), additionalProperties: item }, rule);
const string = (rule: string): Gen => (max) => withRule({ type: 'string', ...opt('maxLength', max) }, rule);
const bytes = (rule: string): Gen => (max) => withRule({ type: 'string', format: 'byte', ...opt('maxLength', max) }, rule);
const enumString = (rule: string, ...values: string[]): Gen => (max) => withRule({ type: 'string', ...opt('maxLength', max), enum: values }, rule);
const nestedSpec = (rule: string): Gen => (max) => withRule({ type: 'object', ...opt('maxProperties', max), additionalProperties: { type: 'string', ...opt('maxLength', max) } }, rule);
const nestedRoot = (rule: string, allBounded: boolean): Gen => (max) =>
  withRule(
    {
      type: 'array',
      ...opt('maxItems', allBounded ? max : undefined),
      items: { type: 'object', ...opt('maxProperties', max), additionalProperties: { ...requiredAndOptional(), ...opt('maxProperties', allBounded ? max : undefined) } },
    },
    rule,
  );

/** [name, schema, cost without limits, limit, cost with the limit]; 0 is not checked (as upstream), -1 is over the limit */
const CASES: [string, Gen, number, number, number][] = [
  ['number array with all', array('number', 'self.all(x, true)'), 4718591, 10, 32],
  ['string array with all', array('string', 'self.all(x, true)'), 3145727, 20, 62],
  ['boolean array with all', array('boolean', 'self.all(x, true)'), 1887437, 5, 17],
  ['array of number arrays with all', arrayOfArrays('number', 'self.all(x, true)'), 3145727, 100, 302],
  ['array of objects with all', objectArray('self.all(x, true)'), 555128, 50, 152],
  ['map of numbers with all', map('number', 'self.all(x, true)'), 1348169, 10, 32],
  ['map of numbers with has', map('number', 'has(self.x)'), 0, 100, 0],
  ['map of strings with all', map('string', 'self.all(x, true)'), 1179647, 3, 11],
  ['map of booleans with all', map('boolean', 'self.all(x, true)'), 943718, 100, 302],
  ['string with contains', string("self.contains('test')"), 314574, 10, 5],
  ['string with startsWith', string("self.startsWith('test')"), 2, 15, 2],
  ['string with endsWith', string("self.endsWith('test')"), 2, 30, 2],
  ['concat string', string('size(self + "hello") > size("hello")'), 314578, 4, 7],
  ['index of array with numbers', array('number', 'self[1] == 0.0'), 2, 5000, 2],
  ['index of array with strings', array('string', 'self[1] == self[1]'), 314577, 8, 314577],
  ['O(n^2) loop with numbers', array('number', 'self.all(x, self.all(y, true))'), -1, 10, 352],
  ['O(n^3) loop with numbers', array('number', 'self.all(x, self.all(y, self.all(z, true)))'), -1, 10, 3552],
  ['regex matches simple', string('self.matches("x")'), 314574, 50, 22],
  ['regex matches empty string', string('"".matches("(((((((((())))))))))[0-9]")'), 7, 10, 7],
  ['regex matches empty regex', string('self.matches("")'), 1, 100, 1],
  ['map of strings with value length', nestedSpec('self.all(x, x.contains(self[x]))'), 2752507, 10, 72],
  ['set array maxLength to zero', array('number', 'self[3] == 0.0'), 2, 0, 2],
  ['set map maxLength to zero', map('number', 'self["x"] == 0.0'), 2, 0, 2],
  ['set string maxLength to zero', string('self == "x"'), 2, 0, 1],
  ['set bytes maxLength to zero', bytes('self == b"x"'), 2, 0, 1],
  ['set maxLength greater than estimated maxLength', array('number', 'self.all(x, x == 0.0)'), 6291454, 3 * 1024 * 2048, 25165826],
  ['nested types with root rule with all supporting maxLength', nestedRoot('self.all(x, x["y"].required == "z")', true), 7340027, 10, 72],
  ['nested types with root rule with one supporting maxLength', nestedRoot('self.all(x, x["y"].required == "z")', false), 7340027, 10, 7340027],
  ['int-or-string array with all', array('int-or-string', 'self.all(x, true)'), 4718591, 10, 32],
  ['index of array with int-or-strings', array('int-or-string', 'self[0] == 5'), 3, 10, 3],
  ['index of array with booleans', array('boolean', 'self[0] == false'), 2, 25, 2],
  ['index of array of array of numbers', arrayOfArrays('number', 'self[0][0] == -1.0'), 3, 51, 3],
  ['array of number maps with all', mapArray('number', 'self.all(x, x.y == 25.2)'), 6291452, 12, 74],
  ['index of array of number maps', mapArray('number', 'self[0].x > 2.0'), 4, 3000, 4],
  ['duration array with all', array('duration', 'self.all(x, true)'), 2359295, 5, 17],
  ['index of duration array', array('duration', 'self[0].getHours() == 2'), 4, 525, 4],
  ['date array with all', array('date', 'self.all(x, true)'), 725936, 15, 47],
  ['index of date array', array('date', 'self[2].getDayOfMonth() == 13'), 4, 42, 4],
  ['date-time array with all', array('date-time', 'self.all(x, true)'), 428963, 25, 77],
  ['index of date-time array', array('date-time', 'self[2].getMinutes() == 45'), 4, 99, 4],
  ['map of int-or-strings with all', map('int-or-string', 'self.all(x, true)'), 1348169, 15, 47],
  ['map of objects with all', mapOf(requiredAndOptional(), 'self.all(x, true)'), 428963, 20, 62],
  ['map of objects with has', mapOf(requiredAndOptional(), 'has(self.x)'), 0, 9001, 0],
  ['map of number maps with all', mapOf({ type: 'object', additionalProperties: { type: 'number' } }, 'self.all(x, true)'), 1179647, 10, 32],
  ['map of number arrays with all', mapOf({ type: 'array', items: { type: 'number' } }, 'self.all(x, true)'), 1179647, 25, 77],
  ['map of durations with all', map('duration', 'self.all(x, true)'), 1048577, 5, 17],
  ['map of dates with all', map('date', 'self.all(x, true)'), 524288, 10, 32],
  ['map of date-times with all', map('date-time', 'self.all(x, true)'), 349526, 25, 77],
  ['extended library regex find', string("self.find('[0-9]+') == ''"), 629147, 10, 11],
  [
    'extended library join',
    (max) => withRule({ type: 'array', ...opt('maxItems', max), items: { type: 'string', ...opt('maxLength', max) } }, "self.join(' ') == 'aa bb'"),
    329853068905,
    10,
    43,
  ],
  [
    'extended library isSorted',
    (max) => withRule({ type: 'array', ...opt('maxItems', max), items: { type: 'string', ...opt('maxLength', max) } }, 'self.isSorted() == true'),
    329854432052,
    10,
    52,
  ],
  [
    'extended library replace',
    (max) =>
      withRule(
        { type: 'object', properties: { str: { type: 'string', ...opt('maxLength', max) }, before: { type: 'string', maxLength: 2 }, after: { type: 'string', maxLength: 4 } } },
        "self.str.replace(self.before, self.after) == 'does not matter'",
      ),
    629154,
    4,
    12,
  ],
  [
    'extended library split',
    (max) => withRule({ type: 'object', properties: { str: { type: 'string', ...opt('maxLength', max) }, separator: { type: 'string', ...opt('maxLength', max) } } }, 'self.str.split(self.separator) == []'),
    629160,
    10,
    22,
  ],
  ['extended library lowerAscii', string("self.lowerAscii() == 'lower!'"), 314575, 10, 6],
  ['check cost of size call', map('integer', 'oldSelf.size() == self.size()'), 5, 10, 5],
  ['check cost of timestamp comparison', map('date-time', 'self["a"] == self["b"]'), 8, 7, 8],
  ['check cost of duration comparison', map('duration', 'self["c"] == self["d"]'), 8, 42, 8],
  ['enums with maxLength equals to the longest possible value', enumString("self.contains('A')", 'A', 'B', 'C', 'LongValue'), 2, 1000, 401],
  ['IntOrString type with quantity rule', (max) => withRule({ 'x-kubernetes-int-or-string': true, ...opt('maxLength', max) }, 'isQuantity(self)'), 314574, 20, 9],
];

/** The estimated cost of the one rule of a schema that is not a resource root. */
function ruleCost(schema: Schema): number {
  const comp = compileRules(toStructural(schema as JSONSchemaProps), false, { estimateCost: true });
  assert.deepEqual(
    comp.errors.map((e) => fieldErrorString(e.error('x'))).filter((e) => !e.includes('Forbidden')),
    [],
  );
  const rule = comp.root?.rules[0];
  assert.ok(rule?.maxCost !== undefined, 'the rule compiled');
  return rule.maxCost;
}

test("estimated rule costs are kube-apiserver's, with and without maxItems/maxProperties/maxLength", () => {
  const wrong: string[] = [];
  for (const [name, gen, unbounded, limit, bounded] of CASES) {
    const calc = ruleCost(gen(undefined));
    if (unbounded < 0 ? calc <= 10_000_000 : unbounded > 0 && calc !== unbounded) wrong.push(`${name}: ${calc} instead of ${unbounded}`);
    const set = ruleCost(gen(limit));
    if (bounded > 0 && set !== bounded) wrong.push(`${name} with ${limit}: ${set} instead of ${bounded}`);
  }
  assert.deepEqual(wrong, []);
});

/** [expression, min, max]: apiserver's library cost tests, on literals (pkg/cel/library/cost_test.go) */
const LIBRARY: [string, number, number][] = [
  ["'ABCDEFGHIJ abcdefghij'.lowerAscii() == 'abcdefghij ABCDEFGHIJ'.lowerAscii()", 7, 9],
  ["strings.quote('ABCDEFGHIJ abcdefghij') == strings.quote('ABCDEFGHIJ abcdefghij')", 7, 11],
  ["'abc 123 def 123'.replace('123', '456', 1)", 3, 3],
  ["'abc 123 def 123'.split(' ', 1)", 3, 3],
  ["'abc 123 def 123'.substring(5, 8)", 2, 2],
  ["'  abc 123 def 123  '.trim()", 2, 2],
  ["'abc 123 def 123'.findAll('123', 1)", 2, 2],
  ['quantity("50k").add(20).sub(quantity("100k")).sub(-50000).asInteger() > 0', 7, 7],
  ['quantity("50.703k").asApproximateFloat() > 0.0', 3, 3],
  ['sets.contains([1, 2, 3, 4], [2, 3])', 29, 29],
  ['sets.contains([[1], [2, 3]], [[2, 3.0]])', 53, 53],
  ['sets.equivalent([[1.0], [2, 3]], [[1], [2, 3.0]])', 69, 69],
  ['!sets.intersects([1], [1.1, 2u])', 24, 24],
];

test("library functions cost what apiserver's estimator says", () => {
  const env = baseEnvironment().clone();
  const self = compileRules(toStructural({ type: 'object', 'x-kubernetes-validations': [{ rule: 'true' }] } as JSONSchemaProps), false).root!.decl!;
  for (const [expr, min, max] of LIBRARY) {
    const prog = env.parse(rewriteSource(expr).src) as unknown as { ast: unknown; check(): { valid: boolean } };
    assert.ok(prog.check().valid, expr);
    assert.deepEqual(estimateCost(prog.ast, self), { min, max }, expr);
  }
});

test('the estimate walks deep expressions without recursion', () => {
  const int = { kind: 'primitive', name: 'int' };
  const cost = (n: number): number => {
    // 1 + 1 + ... + 1 > 0 as a left-deep tree, n levels deep
    let node: unknown = { op: 'value', args: 1n, checkedType: int };
    for (let i = 0; i < n; i++) node = { op: '+', args: [node, { op: 'value', args: 1n, checkedType: int }], checkedType: int };
    const root = { op: '>', args: [node, { op: 'value', args: 0n, checkedType: int }], checkedType: { kind: 'primitive', name: 'bool' } };
    const comp = compileRules(toStructural({ type: 'object', 'x-kubernetes-validations': [{ rule: 'true' }] } as JSONSchemaProps), false);
    return estimateCost(root, comp.root!.decl!).max;
  };
  // each addition and the comparison cost 1, the literals nothing
  assert.equal(cost(10), 11);
  assert.equal(cost(200_000), 200_001);
  // and what the parser accepts, the estimate handles
  const rule = Array.from({ length: 1000 }, () => 'self.a').join(' + ') + ' > 0';
  const comp = compileRules(toStructural({ type: 'object', properties: { a: { type: 'integer' } }, 'x-kubernetes-validations': [{ rule }] } as JSONSchemaProps), false, { estimateCost: true });
  // self.a costs 2, each addition and the comparison 1
  assert.equal(comp.root?.rules[0].maxCost, 1000 * 2 + 999 + 1);
});

test('cost messages format the factor as upstream does', () => {
  const tail = ' (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)';
  assert.equal(costErrorMessage('estimated rule cost', 2 ** 64, 10_000_000), 'estimated rule cost exceeds budget by factor of more than 100x' + tail);
  assert.equal(costErrorMessage('estimated rule cost', 10_000_001, 10_000_000), 'estimated rule cost exceeds budget by factor of 1.000000x' + tail);
  assert.equal(costErrorMessage('estimated rule cost', 12_345_678, 10_000_000), 'estimated rule cost exceeds budget by factor of 1.234568x' + tail);
  assert.equal(costErrorMessage('estimated rule cost', 54_000_000, 10_000_000), 'estimated rule cost exceeds budget by factor of 5.4x' + tail);
  // %.1f rounds an exact tie to even
  assert.equal(costErrorMessage('estimated rule cost', 22_500_000, 10_000_000), 'estimated rule cost exceeds budget by factor of 2.2x' + tail);
  assert.equal(costErrorMessage('estimated rule cost', 27_500_000, 10_000_000), 'estimated rule cost exceeds budget by factor of 2.8x' + tail);
});

const P = 'spec.validation.openAPIV3Schema';
const TAIL = ' (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)';
const check = (schema: unknown, suppressPerExpressionCost = false): string[] =>
  validateStructuralSchema(schema as JSONSchemaProps, P, { hasOtherErrors: false, requirePrunedDefaults: true, suppressPerExpressionCost }).map(fieldErrorString);

const REPRO = "self.items.all(x, self.items.all(y, self.items.all(z, x+y+z != 'zzz')))";
const itemsSchema = (items: Schema, extra: Schema = {}): Schema => ({
  type: 'object',
  properties: { spec: { type: 'object', properties: { items: { type: 'array', items, ...extra } }, 'x-kubernetes-validations': [{ rule: REPRO }] } },
});

test('a cubic rule over unbounded lists of unbounded strings is refused (#39)', () => {
  assert.deepEqual(check(itemsSchema({ type: 'string' })), [
    `${P}.properties[spec].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x${TAIL}`,
    `${P}.properties[spec].x-kubernetes-validations[0].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema`,
    `${P}: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x${TAIL}`,
  ]);
  // bounded, it is cheap
  assert.deepEqual(check(itemsSchema({ type: 'string', maxLength: 10 }, { maxItems: 10 })), []);
  // bounding only the list is not enough: three strings of 3 MiB are concatenated per iteration
  assert.equal(check(itemsSchema({ type: 'string' }, { maxItems: 10 })).length, 3);
});

test('cardinality: rules below lists and maps cost once per element', () => {
  const rule = (maxItems?: number): Schema => ({
    type: 'object',
    properties: { l: { type: 'array', ...opt('maxItems', maxItems), items: { type: 'string', maxLength: 1000, 'x-kubernetes-validations': [{ rule: "self.contains('x')" }] } } },
  });
  // contains: 4000 bytes traversed, times 1 for 'x', and 1 for self: 401 per string
  assert.deepEqual(check(rule(24_937)), []);
  // 24938 strings cost 10000138
  assert.deepEqual(check(rule(24_938)), [`${P}.properties[l].items.x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of 1.000014x${TAIL}`]);
  // unbounded, as many strings of 2 bytes as fit in 3 MiB with their commas: 1048576, 420478976 in all
  assert.deepEqual(check(rule()), [
    `${P}.properties[l].items.x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of 42.0x${TAIL}`,
    `${P}.properties[l].items.x-kubernetes-validations[0].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema`,
    `${P}: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of 4.2x${TAIL}`,
  ]);
});

test('the total of a schema is limited even when each rule is within its limit', () => {
  // 15 rules of 9022901 each: 135343515 in total
  const props: Record<string, Schema> = {};
  for (let i = 0; i < 15; i++) {
    props[`l${i}`] = { type: 'array', maxItems: 22_501, items: { type: 'string', maxLength: 1000, 'x-kubernetes-validations': [{ rule: "self.contains('x')" }] } };
  }
  const errs = check({ type: 'object', properties: props });
  assert.equal(errs.length, 5);
  for (const e of errs.slice(0, 4)) assert.match(e, /^spec\.validation\.openAPIV3Schema\.properties\[l\d+\]\.items\.x-kubernetes-validations\[0\]\.rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema$/);
  assert.equal(errs[4], `${P}: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of 1.353435x${TAIL}`);
});

test('messageExpression costs are limited too, and an unchanged schema is only held to the total', () => {
  const schema = {
    type: 'object',
    properties: {
      s: {
        type: 'object',
        properties: { l: { type: 'array', items: { type: 'string' } } },
        'x-kubernetes-validations': [{ rule: 'true', messageExpression: "self.l.map(x, x + x).join(',')" }],
      },
    },
  };
  const errs = check(schema);
  assert.equal(errs[0], `${P}.properties[s].x-kubernetes-validations[0].messageExpression: Forbidden: estimated messageExpression cost exceeds budget by factor of more than 100x${TAIL}`);
  assert.deepEqual(check(schema, true), errs.slice(1));
  assert.equal(check(itemsSchema({ type: 'string' }), true).length, 2);
});

test('ordinary rules stay well within the limits', () => {
  const schema = {
    type: 'object',
    'x-kubernetes-validations': [{ rule: 'self.metadata.name.startsWith("a") && self.kind != ""' }, { rule: 'self.spec.x + self.spec.y >= 0' }],
    properties: {
      spec: {
        type: 'object',
        'x-kubernetes-validations': [
          { rule: 'self.x < 100', message: 'x too big' },
          { rule: 'self.y < 100', messageExpression: '"y is too big for " + self.name' },
          { rule: "!has(self.name) || self.name.matches('^[a-z]+$')", fieldPath: '.name', reason: 'FieldValueForbidden' },
          { rule: 'self.someImmutableThing == oldSelf.someImmutableThing' },
          { rule: '!has(self.minReplicas) || self.minReplicas <= self.replicas' },
          { rule: "self.containers.all(c, c.name.size() > 0 && c.name != 'x')" },
          { rule: 'self.names.all(n, n.size() > 0)' },
          { rule: 'self.tags.exists_one(t, t == "primary") || self.tags.size() == 0' },
          { rule: 'cel.bind(n, self.containers.map(c, c.name), n.size() <= 10)' },
        ],
        properties: {
          x: { type: 'integer' },
          y: { type: 'integer' },
          replicas: { type: 'integer' },
          minReplicas: { type: 'integer' },
          name: { type: 'string' },
          someImmutableThing: { type: 'string' },
          tags: { type: 'array', items: { type: 'string' }, 'x-kubernetes-validations': [{ rule: 'self.all(t, t.size() <= 3)' }] },
          q: { type: 'string', 'x-kubernetes-validations': [{ rule: "quantity(self).isLessThan(quantity('1Gi'))" }] },
          containers: { type: 'array', maxItems: 100, items: { type: 'object', properties: { name: { type: 'string', maxLength: 63 } } } },
          names: { type: 'array', items: { type: 'string' } },
        },
      },
    },
  };
  assert.deepEqual(check(schema), []);
});

test('updates: versions whose schema is unchanged are held to the total only (findVersionsWithUnchangedSchemas)', () => {
  // eight unbounded strings concatenated cost 11010060: over the per-expression limit, within the total
  const schema = {
    type: 'object',
    properties: {
      f: {
        type: 'array',
        items: { type: 'string' },
        'x-kubernetes-validations': [{ rule: 'true', messageExpression: 'self[0] + self[1] + self[2] + self[3] + self[4] + self[5] + self[6] + self[7]' }],
      },
    },
  };
  const crd = (versions: string[], labels: Record<string, string> = {}): CustomResourceDefinitionV1 =>
    prepareCRDForCreate(
      defaultV1({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: 'widgets.cost.example.com', labels, resourceVersion: '1' },
        spec: {
          group: 'cost.example.com',
          scope: 'Namespaced',
          names: { plural: 'widgets', kind: 'Widget' },
          versions: versions.map((name, i) => ({ name, served: true, storage: i === 0, schema: { openAPIV3Schema: structuredClone(i === 0 ? schema : { ...schema, description: name }) } })),
        },
      } as CustomResourceDefinitionV1),
    );
  const hooks = { validateStructuralSchema };
  const messageCost = /x-kubernetes-validations\[0\]\.messageExpression: Forbidden: estimated messageExpression cost exceeds budget by factor of 1\.101006x/;
  const created = validateCRD(crd(['v1']), 'v1', hooks).map(fieldErrorString);
  assert.equal(created.length, 1);
  assert.match(created[0], messageCost);
  assert.match(created[0], /^spec\.validation\.openAPIV3Schema\.properties\[f\]/);
  // as if it had been stored before the limit: a change elsewhere passes
  const old = crd(['v1']);
  assert.deepEqual(validateCRDUpdate(prepareCRDForUpdate(crd(['v1'], { team: 'a' }), old), old, 'v1', hooks).map(fieldErrorString), []);
  // a new version with the expression is held to the limit, the unchanged one is not
  const added = validateCRDUpdate(prepareCRDForUpdate(crd(['v1', 'v2']), old), old, 'v1', hooks).map(fieldErrorString);
  assert.equal(added.length, 1);
  assert.match(added[0], /^spec\.versions\[1\]\.schema\.openAPIV3Schema\.properties\[f\]/);
  assert.match(added[0], messageCost);
});
