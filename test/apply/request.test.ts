import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  managerOrUserAgent,
  parseApplyBody,
  parseForceParam,
  patchOptionsErrors,
  prefixFromUserAgent,
  validatePatchOptions,
  validateWriteOptions,
} from '../../src/apply/request.js';
import { StatusError } from '../../src/machinery/status.js';

function statusOf(fn: () => unknown): StatusError {
  try {
    fn();
  } catch (e) {
    if (e instanceof StatusError) return e;
    throw e;
  }
  throw new Error('no error');
}

test('fieldManager is required for apply', () => {
  const err = statusOf(() => validatePatchOptions({}, 'apply'));
  assert.equal(err.code, 422);
  assert.equal(err.reason, 'Invalid');
  assert.equal(err.message, 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch');
  assert.deepEqual(err.details, {
    name: '',
    group: 'meta.k8s.io',
    kind: 'PatchOptions',
    causes: [{ reason: 'FieldValueRequired', message: 'Required value: is required for apply patch', field: 'fieldManager' }],
  });
  assert.doesNotThrow(() => validatePatchOptions({ fieldManager: 'm', force: true }, 'apply'));
  assert.doesNotThrow(() => validatePatchOptions({}, 'merge'));
});

test('force is forbidden on other patches, whatever its value', () => {
  for (const force of [true, false]) {
    const err = statusOf(() => validatePatchOptions({ force }, 'merge'));
    assert.equal(err.message, 'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch');
  }
  assert.equal(parseForceParam(null), undefined);
  assert.equal(parseForceParam('true'), true);
  assert.equal(parseForceParam(''), true);
  assert.equal(parseForceParam('FALSE'), false);
  assert.equal(parseForceParam('0'), false);
});

test('fieldManager longer than 128 bytes or with non-printable characters', () => {
  const long = 'm'.repeat(129);
  assert.equal(
    statusOf(() => validatePatchOptions({ fieldManager: long }, 'apply')).message,
    'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Too long: may not be more than 128 bytes',
  );
  assert.deepEqual(patchOptionsErrors({ fieldManager: 'm'.repeat(128) }, 'apply'), []);
  const ctl = statusOf(() => validateWriteOptions('UpdateOptions', 'a\u0007b'));
  assert.match(ctl.message, /^UpdateOptions\.meta\.k8s\.io "" is invalid: fieldManager: Invalid value: .*: invalid character U\+0007 \(at position 1\)$/);
  // Several errors aggregate, with the caller's (e.g. dryRun) after.
  assert.equal(
    statusOf(() => validatePatchOptions({ force: true, fieldManager: long }, 'json', [{ type: 'FieldValueNotSupported', field: 'dryRun', badValue: ['x'], detail: 'supported values: "All"' }])).message,
    'PatchOptions.meta.k8s.io "" is invalid: [force: Forbidden: may not be specified for non-apply patch, fieldManager: Too long: may not be more than 128 bytes, dryRun: Unsupported value: ["x"]: supported values: "All"]',
  );
});

test('the manager of a write without fieldManager comes from the User-Agent', () => {
  assert.equal(prefixFromUserAgent('kubectl/v1.30.0 (linux/amd64) kubernetes/abc'), 'kubectl');
  assert.equal(prefixFromUserAgent('kube-controller-manager/v1.30.0'), 'kube-controller-manager');
  assert.equal(prefixFromUserAgent('no slash at all'), 'no slash at all');
  assert.equal(prefixFromUserAgent('tab\there\u0000/x'), 'tabhere');
  assert.equal(prefixFromUserAgent('é'.repeat(100)), 'é'.repeat(64));
  assert.equal(prefixFromUserAgent(''), '');
  assert.equal(managerOrUserAgent('explicit', 'kubectl/1'), 'explicit');
  assert.equal(managerOrUserAgent(undefined, 'kubectl/1'), 'kubectl');
  assert.equal(managerOrUserAgent('', undefined), '');
});

test('apply bodies: YAML or JSON objects', () => {
  assert.deepEqual(parseApplyBody('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: "1"\n'), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, data: { a: '1' } });
  assert.deepEqual(parseApplyBody('{"apiVersion":"v1","kind":"ConfigMap","big":9223372036854775807}'), { apiVersion: 'v1', kind: 'ConfigMap', big: 9223372036854775807n });
  assert.deepEqual(parseApplyBody(''), {});
  assert.deepEqual(parseApplyBody('null'), {});
  const list = statusOf(() => parseApplyBody('- a\n- b\n'));
  assert.equal(list.code, 400);
  assert.equal(list.message, 'error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}');
  const bad = statusOf(() => parseApplyBody('a: [1'));
  assert.equal(bad.code, 400);
  assert.match(bad.message, /^error encoding patch: yaml: /);
});
