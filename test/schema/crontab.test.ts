// The CronTab walkthroughs of the Kubernetes documentation (seed 004): validation,
// defaulting and pruning of a custom resource.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { aggregateMessage } from '../../src/machinery/field-errors.js';
import { compileSchema } from '../../src/schema/index.js';
import type { JSONSchemaProps } from '../../src/schema/types.js';

const CRON = '^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$';

const validationSchema: JSONSchemaProps = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        cronSpec: { type: 'string', pattern: CRON },
        image: { type: 'string' },
        replicas: { type: 'integer', minimum: 1, maximum: 10 },
      },
    },
  },
};

const defaultingSchema: JSONSchemaProps = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        cronSpec: { type: 'string', pattern: CRON, default: '5 0 * * *' },
        image: { type: 'string' },
        replicas: { type: 'integer', minimum: 1, maximum: 10, default: 1 },
      },
    },
  },
};

const opts = { kind: 'CronTab', apiVersion: 'stable.example.com/v1', namespaced: true };
const crontab = (spec: Record<string, unknown>) => ({
  apiVersion: 'stable.example.com/v1',
  kind: 'CronTab',
  metadata: { name: 'my-new-cron-object', namespace: 'default' },
  spec,
});

test('invalid values are rejected with the documented messages', () => {
  const cs = compileSchema(validationSchema, opts);
  const obj = crontab({ cronSpec: '* * * *', image: 'my-awesome-cron-image', replicas: 15 });
  assert.deepEqual(cs.admit(obj), { unknownFields: [] });
  assert.equal(
    aggregateMessage(cs.validate(obj)),
    "[spec.cronSpec: Invalid value: \"* * * *\": spec.cronSpec in body should match '^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$', " +
      'spec.replicas: Invalid value: 15: spec.replicas in body should be less than or equal to 10]',
  );
});

test('valid values are accepted', () => {
  const cs = compileSchema(validationSchema, opts);
  const obj = crontab({ cronSpec: '* * * * */5', image: 'my-awesome-cron-image', replicas: 5 });
  cs.admit(obj);
  assert.deepEqual(cs.validate(obj), []);
});

test('cronSpec and replicas are defaulted', () => {
  const cs = compileSchema(defaultingSchema, opts);
  const obj = crontab({ image: 'my-awesome-cron-image' });
  cs.admit(obj);
  assert.deepEqual(obj.spec, { image: 'my-awesome-cron-image', cronSpec: '5 0 * * *', replicas: 1 });
  assert.deepEqual(cs.validate(obj), []);
});

test('unknown fields are pruned and reported for fieldValidation', () => {
  const cs = compileSchema(validationSchema, opts);
  const obj = crontab({ cronSpec: '* * * * */5', image: 'my-awesome-cron-image', someRandomField: 42 });
  assert.deepEqual(cs.admit(obj), { unknownFields: ['spec.someRandomField'] });
  assert.deepEqual(obj.spec, { cronSpec: '* * * * */5', image: 'my-awesome-cron-image' });
});

test('defaults apply when reading from storage, without changing stored values', () => {
  const cs = compileSchema(defaultingSchema, opts);
  const stored = crontab({ image: 'img', replicas: 3, unknown: true });
  cs.read(stored);
  assert.deepEqual(stored.spec, { image: 'img', replicas: 3, cronSpec: '5 0 * * *' });
  cs.read(stored);
  assert.deepEqual(stored.spec, { image: 'img', replicas: 3, cronSpec: '5 0 * * *' }, 'idempotent');
});
