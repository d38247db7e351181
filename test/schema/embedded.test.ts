import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrorString } from '../../src/machinery/field-errors.js';
import { compileSchema } from '../../src/schema/index.js';
import type { JSONSchemaProps } from '../../src/schema/types.js';

const schema = {
  type: 'object',
  properties: {
    embedded: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
    embeddedNested: {
      type: 'object',
      'x-kubernetes-embedded-resource': true,
      'x-kubernetes-preserve-unknown-fields': true,
      properties: { embedded: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true } },
    },
    notEmbedded: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
  },
} as JSONSchemaProps;

const obj = (rest: Record<string, unknown>) => ({ apiVersion: 'g/v1', kind: 'K', metadata: { name: 'x' }, ...rest });
const strings = (errs: unknown[]) => errs.map((e) => fieldErrorString(e as never));
const DNS1035 =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

test('embedded resources need apiVersion and kind and valid metadata (X-02)', () => {
  const cs = compileSchema(schema);
  assert.deepEqual(strings(cs.validate(obj({ embedded: {} }))), ['embedded.apiVersion: Required value', 'embedded.kind: Required value']);
  assert.deepEqual(strings(cs.validate(obj({ embedded: { apiVersion: 'v1', kind: '%', metadata: { name: '..' } } }))), [
    `embedded.kind: Invalid value: "%": may have mixed case, but should otherwise match: ${DNS1035}`,
    `embedded.metadata.name: Invalid value: "..": may not be '..'`,
  ]);
  assert.deepEqual(strings(cs.validate(obj({ embedded: { apiVersion: 'a/b/c', kind: 'Foo', metadata: { generateName: 'x/' } } }))), [
    'embedded.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c',
    `embedded.metadata.generateName: Invalid value: "x/": may not contain '/'`,
  ]);
  assert.deepEqual(strings(cs.validate(obj({ embeddedNested: { apiVersion: 'v1', kind: 'Foo', embedded: { apiVersion: 'v1', kind: 'Bad Kind' } } }))), [
    `embeddedNested.embedded.kind: Invalid value: "Bad Kind": may have mixed case, but should otherwise match: ${DNS1035}`,
  ]);
  assert.deepEqual(cs.validate(obj({ notEmbedded: { apiVersion: 5, kind: '%' } })), [], 'objects not marked embedded are left alone');
});

test('a schema too deep to evaluate is refused rather than crashing', () => {
  let deep: Record<string, unknown> = { type: 'string' };
  for (let i = 0; i < 5000; i++) deep = { type: 'object', properties: { a: deep } };
  const cs = compileSchema({ type: 'object', properties: { a: deep } } as JSONSchemaProps);
  assert.deepEqual(strings(cs.validate(obj({}))), ['<nil>: Internal error: the schema of this resource is too large or too deeply nested to be evaluated']);
});
