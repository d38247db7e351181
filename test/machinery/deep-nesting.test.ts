/**
 * Values nested as deep as kube-apiserver decodes (encoding/json's 10,000 levels), and
 * kapi's own stored objects a few levels deeper: decoding, copying, comparing, patching,
 * printing and encoding them never overflows the stack, and YAML output costs a small
 * constant per byte.
 */
import assert from 'node:assert/strict';
import { bestTimes, fastest } from '../util/timing.js';
import { describe, it } from 'node:test';
import { applyJsonPatch } from '../../src/machinery/json-patch.js';
import { deepCloneMutable, goMarshalJson, MAX_JSON_DEPTH, nestsDeeperThan, parseJson, parseStoredJson, stringifyJson } from '../../src/machinery/json.js';
import { goJsonMarshal, goFormatValue } from '../../src/machinery/jsonpath-values.js';
import { applyMergePatch, createMergePatch, jsonEqual } from '../../src/machinery/merge-patch.js';
import { encodeYaml, stringifyYaml, YamlTooLargeError } from '../../src/machinery/yaml-emit.js';
import { decodeFromStorage } from '../../src/registry/object-codec.js';
import { goJson } from '../../src/apply/value.js';
import { deepEqual } from '../../src/util/deep-equal.js';

type Obj = Record<string, any>;

function nest(depth: number, leaf: unknown = 1, key = 'a'): Obj {
  let v: unknown = leaf;
  for (let i = 0; i < depth; i++) v = { [key]: v };
  return v as Obj;
}

const nestText = (depth: number, leaf = '1', key = 'a') => `{"${key}":`.repeat(depth) + leaf + '}'.repeat(depth);

describe('JSON nested 10,000 levels deep', () => {
  it('decodes as deep as encoding/json does, with its error beyond', () => {
    assert.equal(nestsDeeperThan(parseJson(nestText(MAX_JSON_DEPTH)), MAX_JSON_DEPTH), false);
    assert.throws(() => parseJson(nestText(MAX_JSON_DEPTH + 1)), { message: "invalid character '{' exceeded max depth" });
    assert.throws(() => parseJson(`[${nestText(MAX_JSON_DEPTH)}]`), { message: "invalid character '{' exceeded max depth" });
    // What kapi stored itself reads back whatever its depth (managedFields nest below the fields they own).
    assert.equal(nestsDeeperThan(parseStoredJson(nestText(2 * MAX_JSON_DEPTH)), 2 * MAX_JSON_DEPTH - 1), true);
  });

  it('reads back a stored object nested deeper than a request may', () => {
    const stored = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","managedFields":[{"fieldsV1":${nestText(MAX_JSON_DEPTH, '{}', 'f:a')}}]}}`;
    const obj = decodeFromStorage({ key: '/registry/configmaps/default/c', value: stored, modRevision: 7 } as never);
    assert.equal(obj.kind, 'ConfigMap');
    assert.equal(obj.metadata.resourceVersion, '7');
    assert.equal(nestsDeeperThan(obj, MAX_JSON_DEPTH + 4), true);
  });

  it('copies, compares, patches and prints deep values', () => {
    const a = nest(MAX_JSON_DEPTH, [1, 'x']);
    const copy = deepCloneMutable(a);
    assert.equal(deepEqual(a, copy), true);
    assert.equal(deepEqual(a, nest(MAX_JSON_DEPTH, [1, 'y'])), false);
    assert.equal(jsonEqual(a, copy), true);
    assert.equal(stringifyJson(a), nestText(MAX_JSON_DEPTH, '[1,"x"]'));
    assert.equal(goJsonMarshal(a), nestText(MAX_JSON_DEPTH, '[1,"x"]'));
    assert.equal(goFormatValue(a), 'map[a:'.repeat(MAX_JSON_DEPTH) + '[1 x]' + ']'.repeat(MAX_JSON_DEPTH));
    // Keys sorted even where JSON.stringify gives up.
    assert.equal(goMarshalJson({ z: 1, y: nest(MAX_JSON_DEPTH, 1) }), `{"y":${nestText(MAX_JSON_DEPTH)},"z":1}`);

    // An object and a merge patch each 10,000 levels deep (the list in the object is one level).
    const target = { spec: nest(MAX_JSON_DEPTH - 2, [1, 'x']) };
    const merged = applyMergePatch(target, { spec: nest(MAX_JSON_DEPTH - 2, { b: 2 }) }) as Obj;
    assert.equal(nestsDeeperThan(merged, MAX_JSON_DEPTH - 1), true);
    assert.equal(nestsDeeperThan(merged, MAX_JSON_DEPTH), false);
    assert.equal(stringifyJson(merged).endsWith('{"b":2}' + '}'.repeat(MAX_JSON_DEPTH - 1)), true);
    assert.deepEqual(createMergePatch(target, deepCloneMutable(target)), {});

    // A JSON patch may copy a value nested deeper than a request may (managedFields' fieldsV1).
    const doc: Obj = { metadata: { fieldsV1: nest(MAX_JSON_DEPTH + 3, {}, 'f:a') }, spec: {} };
    applyJsonPatch(doc, [{ op: 'copy', from: '/metadata/fieldsV1', path: '/spec/copy' }]);
    assert.equal(jsonEqual(doc.spec.copy, doc.metadata.fieldsV1), true);
  });
});

describe('YAML output', () => {
  it('prints deep nesting in block style, as go-yaml does', () => {
    assert.equal(stringifyYaml(nest(3)), 'a:\n  a:\n    a: 1\n');
    assert.equal(stringifyYaml({ l: [[[1]]], 'f:x': nest(2, {}, 'f:y') }), 'f:x:\n  f:y:\n    f:y: {}\nl:\n- - - 1\n');
    const deep = encodeYaml(nest(MAX_JSON_DEPTH)).toString('latin1');
    // Each level two columns further in: about depth² bytes.
    assert.equal(deep.length, MAX_JSON_DEPTH * (MAX_JSON_DEPTH - 1) + 3 * MAX_JSON_DEPTH + 2);
    assert.ok(deep.endsWith(`\n${' '.repeat(2 * (MAX_JSON_DEPTH - 1))}a: 1\n`));
  });

  it('refuses a document larger than its limit', () => {
    assert.throws(() => encodeYaml(nest(1_000), 100_000), YamlTooLargeError);
    assert.equal(encodeYaml(nest(100), 100_000).length, 100 * 99 + 302);
  });

  // The reproduction: managedFields entries whose fieldsV1 nest thousands of levels.
  const managed = (entries: number, depth: number) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: 'x',
      managedFields: Array.from({ length: entries }, (_, i) => ({ manager: `m${i}`, operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: nest(depth, {}, `f:k${i}`) })),
    },
    data: Object.fromEntries(Array.from({ length: entries * 10 }, (_, i) => [`key-${i}`, `value ${i}`])),
  });
  it('costs no more per byte written than a JSON encoder, however deep', () => {
    // The reference: apply's goJson, an iterative JSON encoder linear in what it writes. (JSON.stringify
    // itself slows down on deep nesting.) JSON writes ~depth bytes where YAML writes ~depth²: per byte.
    const obj = managed(8, 1_500);
    const yamlBytes = encodeYaml(obj).length;
    const jsonBytes = goJson(obj).length;
    fastest(() => goJson(obj), 2); // warm up
    const [yamlMs, jsonMs] = bestTimes(() => [fastest(() => encodeYaml(obj), 5), fastest(() => goJson(obj), 10)], ([y, j]) => y / yamlBytes < j / jsonBytes);
    const yaml = yamlMs / yamlBytes;
    const json = jsonMs / jsonBytes;
    assert.ok(yaml / json < 1, `YAML costs ${(yaml / json).toFixed(2)}x what JSON costs per byte`);
  });

  it('costs time in proportion to what it writes', () => {
    // Wide: 8x the entries, 8x the bytes.
    const small = managed(40, 3);
    const large = managed(320, 3);
    fastest(() => encodeYaml(large), 2); // warm up
    const [largeMs, smallMs] = bestTimes(() => [fastest(() => encodeYaml(large), 5), fastest(() => encodeYaml(small), 5)], ([l, sm]) => l / sm < 20);
    const wide = largeMs / smallMs;
    assert.ok(wide < 20, `8x the entries took ${wide.toFixed(1)}x the time`);
    // Deep: 8x the depth, 64x the bytes; the cost per byte stays put.
    const shallow = managed(2, 250);
    const deep = managed(2, 2_000);
    const deepBytes = encodeYaml(deep).length;
    const shallowBytes = encodeYaml(shallow).length;
    const [deepMs, shallowMs] = bestTimes(() => [fastest(() => encodeYaml(deep), 5), fastest(() => encodeYaml(shallow), 5)], ([d, sh]) => d / deepBytes / (sh / shallowBytes) < 4);
    const ratio = deepMs / deepBytes / (shallowMs / shallowBytes);
    assert.ok(ratio < 4, `the cost per byte grew ${ratio.toFixed(1)}x with 8x the depth`);
  });
});
