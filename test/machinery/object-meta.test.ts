import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrorString, type FieldError } from '../../src/machinery/field-errors.js';
import {
  checkMetadataTypes,
  finalizerWarnings,
  validateAnnotations,
  validateFieldManager,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from '../../src/machinery/object-meta.js';
import { nameIsDNSLabel } from '../../src/machinery/validation.js';

const strings = (errs: FieldError[]) => errs.map(fieldErrorString);

const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const KEY_NAME_MSG =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

test('valid metadata passes', () => {
  assert.deepEqual(validateObjectMeta({ name: 'a.b', namespace: 'ns' }, { namespaced: true }), []);
  assert.deepEqual(validateObjectMeta({ name: 'cluster-thing' }, { namespaced: false }), []);
  assert.deepEqual(
    validateObjectMeta(
      {
        name: 'x',
        generateName: 'x-',
        namespace: 'ns',
        generation: 3,
        labels: { 'app.kubernetes.io/name': 'web', empty: '' },
        annotations: { 'Example.COM/Key': 'anything at all' },
        finalizers: ['example.com/cleanup', 'orphan'],
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'd', uid: 'u1', controller: true }],
        managedFields: [{ manager: 'kubectl', operation: 'Apply', fieldsType: 'FieldsV1' }],
      },
      { namespaced: true },
    ),
    [],
  );
});

test('name, generateName and namespace', () => {
  assert.deepEqual(strings(validateObjectMeta({ namespace: 'ns' }, { namespaced: true })), ['metadata.name: Required value: name or generateName is required']);
  assert.deepEqual(strings(validateObjectMeta({ name: 'Bad_Name' }, { namespaced: false })), [`metadata.name: Invalid value: "Bad_Name": ${SUBDOMAIN_MSG}`]);
  assert.deepEqual(strings(validateObjectMeta({ name: 'a'.repeat(254) }, { namespaced: false })), [
    `metadata.name: Invalid value: "${'a'.repeat(254)}": must be no more than 253 characters`,
  ]);
  assert.deepEqual(strings(validateObjectMeta({ generateName: 'Pre-', name: 'Pre-abcde' }, { namespaced: false })), [
    `metadata.generateName: Invalid value: "Pre-": ${SUBDOMAIN_MSG}`,
    `metadata.name: Invalid value: "Pre-abcde": ${SUBDOMAIN_MSG}`,
  ]);
  assert.deepEqual(strings(validateObjectMeta({ name: 'x' }, { namespaced: true })), ['metadata.namespace: Required value']);
  assert.deepEqual(strings(validateObjectMeta({ name: 'x', namespace: 'a.b' }, { namespaced: true })), ['metadata.namespace: Invalid value: "a.b": must not contain dots']);
  assert.deepEqual(strings(validateObjectMeta({ name: 'x', namespace: 'ns' }, { namespaced: false })), ['metadata.namespace: Forbidden: not allowed on this type']);
  assert.deepEqual(strings(validateObjectMeta({ name: 'a.b' }, { namespaced: false, nameFn: nameIsDNSLabel })), ['metadata.name: Invalid value: "a.b": must not contain dots']);
  assert.deepEqual(strings(validateObjectMeta({ name: 'X' }, { namespaced: false, nameFn: nameIsDNSLabel, path: 'spec.template.metadata' })), [
    `spec.template.metadata.name: Invalid value: "X": ${LABEL_MSG}`,
  ]);
  assert.deepEqual(strings(validateObjectMeta({ name: 'x', generation: -1 }, { namespaced: false })), ['metadata.generation: Invalid value: -1: must be greater than or equal to 0']);
});

test('labels and annotations', () => {
  assert.deepEqual(strings(validateObjectMeta({ name: 'x', labels: { 'bad key': 'v', ok: 'bad value' } }, { namespaced: false })), [
    `metadata.labels: Invalid value: "bad key": ${KEY_NAME_MSG}`,
    `metadata.labels: Invalid value: "bad value": ${VALUE_MSG}`,
  ]);
  assert.deepEqual(strings(validateAnnotations({ 'a/b/c': '' }, 'metadata.annotations')), [
    `metadata.annotations: Invalid value: "a/b/c": a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
  ]);
  // Keys and values together may use 256 KiB.
  assert.deepEqual(validateAnnotations({ a: 'x'.repeat(262143) }, 'metadata.annotations'), []);
  assert.deepEqual(strings(validateAnnotations({ a: 'x'.repeat(262144) }, 'metadata.annotations')), ['metadata.annotations: Too long: may not be more than 262144 bytes']);
});

test('finalizers', () => {
  assert.deepEqual(strings(validateObjectMeta({ name: 'x', finalizers: ['ok', 'not ok'] }, { namespaced: false })), [`metadata.finalizers: Invalid value: "not ok": ${KEY_NAME_MSG}`]);
  assert.deepEqual(strings(validateObjectMeta({ name: 'x', finalizers: ['orphan', 'foregroundDeletion'] }, { namespaced: false })), [
    'metadata.finalizers: Invalid value: ["orphan","foregroundDeletion"]: finalizer orphan and foregroundDeletion cannot be both set',
  ]);
});

test('owner references', () => {
  const refs = [
    { apiVersion: '', kind: '', name: '', uid: '' },
    { apiVersion: 'v1', kind: 'Event', name: 'e', uid: 'u' },
  ];
  assert.deepEqual(strings(validateObjectMeta({ name: 'x', ownerReferences: refs }, { namespaced: false })), [
    'metadata.ownerReferences.apiVersion: Invalid value: "": version must not be empty',
    'metadata.ownerReferences.kind: Invalid value: "": must not be empty',
    'metadata.ownerReferences.name: Invalid value: "": must not be empty',
    'metadata.ownerReferences.uid: Invalid value: "": must not be empty',
    'metadata.ownerReferences: Invalid value: {"apiVersion":"v1","kind":"Event","name":"e","uid":"u"}: /v1, Kind=Event is disallowed from being an owner',
  ]);
  assert.deepEqual(strings(validateObjectMeta({ name: 'x', ownerReferences: [{ apiVersion: 'example.com/', kind: 'K', name: 'n', uid: 'u' }] }, { namespaced: false })), [
    'metadata.ownerReferences.apiVersion: Invalid value: "example.com/": version must not be empty',
  ]);
  const two = [
    { apiVersion: 'v1', kind: 'A', name: 'a', uid: '1', controller: true },
    { apiVersion: 'v1', kind: 'B', name: 'b', uid: '2', controller: true },
  ];
  assert.deepEqual(strings(validateObjectMeta({ name: 'x', ownerReferences: two }, { namespaced: false })), [
    'metadata.ownerReferences: Invalid value: [{"apiVersion":"v1","kind":"A","name":"a","uid":"1","controller":true},{"apiVersion":"v1","kind":"B","name":"b","uid":"2","controller":true}]: Only one reference can have Controller set to true. Found "true" in references for A/a and B/b',
  ]);
});

test('managed fields and field managers', () => {
  assert.deepEqual(
    strings(validateObjectMeta({ name: 'x', managedFields: [{ manager: 'm', operation: 'Patch', fieldsType: 'FieldsV2', subresource: 's'.repeat(257) }] }, { namespaced: false })),
    [
      'metadata.managedFields[0].operation: Invalid value: "Patch": must be `Apply` or `Update`',
      'metadata.managedFields[0].fieldsType: Invalid value: "FieldsV2": must be `FieldsV1`',
      'metadata.managedFields[0].subresource: Too long: may not be more than 256 bytes',
    ],
  );
  assert.deepEqual(strings(validateFieldManager('a\tb', 'fieldManager')), ['fieldManager: Invalid value: "a\\tb": invalid character U+0009 (at position 1)']);
  assert.deepEqual(strings(validateFieldManager('m'.repeat(129), 'fieldManager')), ['fieldManager: Too long: may not be more than 128 bytes']);
});

test('update: immutable fields, resourceVersion, generation', () => {
  const old = { name: 'x', namespace: 'ns', uid: 'u1', resourceVersion: '5', generation: 2, creationTimestamp: '2021-01-01T00:00:00Z' };
  assert.deepEqual(validateObjectMetaUpdate({ ...old }, old), []);
  assert.deepEqual(strings(validateObjectMetaUpdate({ ...old, name: 'y', namespace: 'other', uid: 'u2', resourceVersion: '', generation: 1, creationTimestamp: '2022-01-01T00:00:00Z' }, old)), [
    'metadata.resourceVersion: Invalid value: "": must be specified for an update',
    'metadata.generation: Invalid value: 1: must not be decremented',
    'metadata.name: Invalid value: "y": field is immutable',
    'metadata.namespace: Invalid value: "other": field is immutable',
    'metadata.uid: Invalid value: "u2": field is immutable',
    'metadata.creationTimestamp: Invalid value: "2022-01-01T00:00:00Z": field is immutable',
  ]);
  // The same instant written differently is the same timestamp.
  assert.deepEqual(validateObjectMetaUpdate({ ...old, creationTimestamp: '2021-01-01T01:00:00+01:00' }, old), []);
  assert.deepEqual(strings(validateObjectMetaUpdate({ ...old, deletionGracePeriodSeconds: 30 }, old)), ['metadata.deletionGracePeriodSeconds: Invalid value: 30: field is immutable']);
  assert.deepEqual(strings(validateObjectMetaUpdate({ ...old, labels: { a: '-' } }, old)), [`metadata.labels: Invalid value: "-": ${VALUE_MSG}`]);
});

test('update: no new finalizers once deletion started', () => {
  const old = { name: 'x', resourceVersion: '5', deletionTimestamp: '2021-01-01T00:00:00Z', finalizers: ['a'] };
  assert.deepEqual(validateObjectMetaUpdate({ ...old, finalizers: [] }, old), []);
  assert.deepEqual(strings(validateObjectMetaUpdate({ ...old, finalizers: ['a', 'z', 'b'] }, old)), [
    'metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"b", "z"}',
  ]);
});

test('finalizer warnings as the custom resource strategy gives them', () => {
  assert.deepEqual(finalizerWarnings(['example.com/ok', 'orphan', 'kubernetes']), []);
  assert.deepEqual(finalizerWarnings(['plain', 'dotted.name']), [
    'metadata.finalizers: "dotted.name": prefer a domain-qualified finalizer name including a path (/) to avoid accidental conflicts with other finalizer writers',
    'metadata.finalizers: "plain": prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers',
  ]);
  assert.deepEqual(finalizerWarnings(['plain'], ['plain']), []);
});

test('checkMetadataTypes mirrors decoding into metav1.ObjectMeta', () => {
  assert.equal(checkMetadataTypes(undefined), undefined);
  assert.equal(checkMetadataTypes(null), undefined);
  assert.equal(
    checkMetadataTypes({
      name: 'x',
      labels: { a: 'b', n: null },
      generation: 4,
      creationTimestamp: null,
      ownerReferences: [{ controller: true }, null],
      Labels: 5, // a different spelling is an unknown field, not a type error
      unknown: { anything: 1 },
      managedFields: [{ fieldsV1: { 'f:a': {} }, time: '2021-01-01T00:00:00Z' }],
    }),
    undefined,
  );
  assert.equal(checkMetadataTypes('x'), 'json: cannot unmarshal string into Go value of type v1.ObjectMeta');
  assert.equal(checkMetadataTypes([]), 'json: cannot unmarshal array into Go value of type v1.ObjectMeta');
  assert.equal(checkMetadataTypes({ labels: { a: 1 } }), 'json: cannot unmarshal number into Go struct field ObjectMeta.labels of type string');
  assert.equal(checkMetadataTypes({ labels: { a: 1 } }, ['metadata']), 'json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string');
  assert.equal(checkMetadataTypes({ annotations: 5 }), 'json: cannot unmarshal number into Go struct field ObjectMeta.annotations of type map[string]string');
  assert.equal(checkMetadataTypes({ annotations: { a: true } }), 'json: cannot unmarshal bool into Go struct field ObjectMeta.annotations of type string');
  assert.equal(checkMetadataTypes({ name: 5 }), 'json: cannot unmarshal number into Go struct field ObjectMeta.name of type string');
  assert.equal(checkMetadataTypes({ uid: {} }), 'json: cannot unmarshal object into Go struct field ObjectMeta.uid of type types.UID');
  assert.equal(checkMetadataTypes({ generation: 1.5 }), 'json: cannot unmarshal number 1.5 into Go struct field ObjectMeta.generation of type int64');
  assert.equal(checkMetadataTypes({ generation: '1' }), 'json: cannot unmarshal string into Go struct field ObjectMeta.generation of type int64');
  assert.equal(checkMetadataTypes({ finalizers: 'a' }), 'json: cannot unmarshal string into Go struct field ObjectMeta.finalizers of type []string');
  assert.equal(checkMetadataTypes({ finalizers: [1] }), 'json: cannot unmarshal number into Go struct field ObjectMeta.finalizers of type string');
  assert.equal(checkMetadataTypes({ ownerReferences: {} }), 'json: cannot unmarshal object into Go struct field ObjectMeta.ownerReferences of type []v1.OwnerReference');
  assert.equal(checkMetadataTypes({ ownerReferences: ['x'] }), 'json: cannot unmarshal string into Go struct field ObjectMeta.ownerReferences of type v1.OwnerReference');
  assert.equal(checkMetadataTypes({ ownerReferences: [{ uid: 1 }] }), 'json: cannot unmarshal number into Go struct field OwnerReference.ownerReferences.uid of type types.UID');
  assert.equal(checkMetadataTypes({ ownerReferences: [{ controller: 'true' }] }), 'json: cannot unmarshal string into Go struct field OwnerReference.ownerReferences.controller of type bool');
  assert.equal(checkMetadataTypes({ managedFields: [{ operation: 1 }] }), 'json: cannot unmarshal number into Go struct field ManagedFieldsEntry.managedFields.operation of type v1.ManagedFieldsOperationType');
  // The first type error in document order is reported...
  assert.equal(checkMetadataTypes({ name: 1, labels: 2 }), 'json: cannot unmarshal number into Go struct field ObjectMeta.name of type string');
  // ...unless a timestamp fails, which stops decoding at once.
  assert.equal(checkMetadataTypes({ name: 1, creationTimestamp: 'yesterday' }), 'parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"');
  assert.equal(checkMetadataTypes({ deletionTimestamp: 5 }), 'json: cannot unmarshal number into Go struct field ObjectMeta.deletionTimestamp of type string');
});
