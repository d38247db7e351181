// Printer-column JSONPath: `{...}` wrapping, first value only, failures as "no value", validation texts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { columnText, compileColumnPath, findColumnValue, validatePrinterColumnJSONPath } from '../../src/machinery/jsonpath-columns.js';

describe('printer column paths', () => {
  const obj = { spec: { replicas: 3, cronSpec: '* * * * */5', list: [1, 2, 3], items: [{ n: 'a' }, { n: 'b' }], nothing: null } };

  it('finds the first value of a column path', () => {
    assert.deepEqual(findColumnValue(compileColumnPath('.spec.replicas'), obj), { found: true, value: 3 });
    assert.deepEqual(findColumnValue(compileColumnPath('.spec.items[*].n'), obj), { found: true, value: 'a' });
    assert.deepEqual(findColumnValue(compileColumnPath('.spec.missing'), obj), { found: false });
    assert.deepEqual(findColumnValue(compileColumnPath('.spec.list[7]'), obj), { found: false });
    assert.deepEqual(findColumnValue(compileColumnPath('.spec.replicas[0]'), obj), { found: false });
    assert.deepEqual(findColumnValue(compileColumnPath('.'), obj), { found: false });
    assert.deepEqual(findColumnValue(compileColumnPath('.spec.nothing'), obj), { found: true, value: null });
  });

  it('prints string cells as the tableconvertor does', () => {
    const p = compileColumnPath('.spec.list');
    assert.equal(columnText(p, [1, 2, 3]), '[1,2,3]');
    assert.equal(columnText(p, { b: 1, a: 'x' }), '{"a":"x","b":1}');
    assert.equal(columnText(p, 10), '10');
    assert.equal(columnText(p, 2.5), '2.5');
    assert.equal(columnText(p, true), 'true');
    assert.equal(columnText(p, null), '<no value>');
  });

  it('validates column paths with client-go parse errors', () => {
    assert.equal(validatePrinterColumnJSONPath('.spec.replicas'), undefined);
    assert.equal(validatePrinterColumnJSONPath('.metadata.labels.app\\.kubernetes\\.io/name'), undefined);
    assert.equal(validatePrinterColumnJSONPath('.spec.containers[?(@.name=="a")].image'), undefined);
    assert.equal(validatePrinterColumnJSONPath('.spec['), 'unterminated array');
    assert.equal(validatePrinterColumnJSONPath('.spec.a{'), "unrecognized character in action: U+007B '{'");
    assert.equal(validatePrinterColumnJSONPath('.spec[?(@.a'), 'unterminated filter');
    assert.equal(validatePrinterColumnJSONPath('.spec "a'), 'unterminated quoted string');
    assert.equal(validatePrinterColumnJSONPath('.spec[x]'), 'invalid array index x');
  });
});
