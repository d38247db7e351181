// Custom resource Tables: printer columns, default columns, cell typing, includeObject, list metadata, watch rows.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  buildTable,
  customResourceTableConvertor,
  parseIncludeObject,
  tableForList,
  tableForObject,
  tableForWatchEvent,
  type PrinterColumn,
} from '../../src/printing/index.js';
import { StatusError } from '../../src/machinery/status.js';

const NOW = Date.parse('2024-05-01T12:00:00Z');
const NAME_DESC =
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names';
const CREATED_DESC =
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata';

// The printer columns of the CronTab example in the Kubernetes docs.
const CRONTAB_COLUMNS: PrinterColumn[] = [
  { name: 'Spec', type: 'string', description: 'The cron spec defining the interval a CronJob is run', jsonPath: '.spec.cronSpec' },
  { name: 'Replicas', type: 'integer', description: 'The number of jobs launched by the CronJob', jsonPath: '.spec.replicas' },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
];

const crontab = (name: string, created: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'stable.example.com/v1',
  kind: 'CronTab',
  metadata: {
    name,
    namespace: 'default',
    uid: 'u-' + name,
    resourceVersion: '42',
    generation: 1,
    creationTimestamp: created,
    labels: { app: 'x' },
    managedFields: [{ manager: 'kubectl' }],
  },
  spec: { cronSpec: '* * * * */5', image: 'my-awesome-cron-image', replicas: 1, ...extra },
});

describe('custom resource tables', () => {
  it('renders the CronTab printer columns as kube-apiserver does', () => {
    const table = buildTable([crontab('my-new-cron-object', '2024-05-01T11:59:53Z')], CRONTAB_COLUMNS, {
      list: { resourceVersion: '77', continue: '' },
      now: NOW,
    });
    assert.deepEqual(table, {
      kind: 'Table',
      apiVersion: 'meta.k8s.io/v1',
      metadata: { resourceVersion: '77' },
      columnDefinitions: [
        { name: 'Name', type: 'string', format: 'name', description: NAME_DESC, priority: 0 },
        { name: 'Spec', type: 'string', format: '', description: 'The cron spec defining the interval a CronJob is run', priority: 0 },
        { name: 'Replicas', type: 'integer', format: '', description: 'The number of jobs launched by the CronJob', priority: 0 },
        { name: 'Age', type: 'date', format: '', description: 'Custom resource definition column (in JSONPath format): .metadata.creationTimestamp', priority: 0 },
      ],
      rows: [
        {
          cells: ['my-new-cron-object', '* * * * */5', 1, '7s'],
          object: {
            kind: 'PartialObjectMetadata',
            apiVersion: 'meta.k8s.io/v1',
            metadata: {
              name: 'my-new-cron-object',
              namespace: 'default',
              uid: 'u-my-new-cron-object',
              resourceVersion: '42',
              generation: 1,
              creationTimestamp: '2024-05-01T11:59:53Z',
              labels: { app: 'x' },
              managedFields: [{ manager: 'kubectl' }],
            },
          },
        },
      ],
    });
    // Key order follows the Go structs.
    assert.deepEqual(Object.keys(table), ['kind', 'apiVersion', 'metadata', 'columnDefinitions', 'rows']);
    assert.deepEqual(Object.keys(table.rows![0]), ['cells', 'object']);
  });

  it('falls back to Name and Age when a version has no printer columns', () => {
    const table = buildTable([crontab('a', '2024-05-01T11:00:00Z')], [], { now: NOW });
    assert.deepEqual(table.columnDefinitions, [
      { name: 'Name', type: 'string', format: 'name', description: NAME_DESC, priority: 0 },
      { name: 'Age', type: 'date', format: '', description: CREATED_DESC, priority: 0 },
    ]);
    assert.deepEqual(table.rows![0].cells, ['a', '60m']);
    assert.deepEqual(buildTable([], undefined, { now: NOW }).rows, []);
  });

  it('types cells as the tableconvertor does (the F-TABLE fixture)', () => {
    const columns: PrinterColumn[] = [
      { name: 'Age', type: 'date', JSONPath: '.metadata.creationTimestamp' },
      { name: 'Alpha', type: 'string', JSONPath: '.spec.alpha' },
      { name: 'Beta', type: 'integer', format: 'int64', priority: 42, description: 'the beta field', JSONPath: '.spec.beta' },
      { name: 'Gamma', type: 'integer', description: 'a column with wrongly typed values', JSONPath: '.spec.gamma' },
      { name: 'Epsilon', type: 'string', description: 'an array of integers as string', JSONPath: '.spec.epsilon' },
      { name: 'Zeta', type: 'integer', format: 'int64', priority: 42, jsonPath: '.spec.zeta' },
    ];
    const obj = { metadata: { name: 'foo', creationTimestamp: '2024-05-01T11:59:55Z' }, spec: { alpha: 'foo_123', beta: 10, gamma: 'bar', delta: 'hello', epsilon: [1, 2, 3], zeta: 5 } };
    const table = buildTable([obj], columns, { now: NOW });
    assert.deepEqual(table.rows![0].cells, ['foo', '5s', 'foo_123', 10, null, '[1,2,3]', 5]);
    assert.deepEqual(
      table.columnDefinitions!.map((c) => [c.name, c.type, c.format, c.priority, c.description]),
      [
        ['Name', 'string', 'name', 0, NAME_DESC],
        ['Age', 'date', '', 0, 'Custom resource definition column (in JSONPath format): .metadata.creationTimestamp'],
        ['Alpha', 'string', '', 0, 'Custom resource definition column (in JSONPath format): .spec.alpha'],
        ['Beta', 'integer', 'int64', 42, 'the beta field'],
        ['Gamma', 'integer', '', 0, 'a column with wrongly typed values'],
        ['Epsilon', 'string', '', 0, 'an array of integers as string'],
        ['Zeta', 'integer', 'int64', 42, 'Custom resource definition column (in JSONPath format): .spec.zeta'],
      ],
    );
  });

  it('coerces values per column type and leaves wrongly typed or failing cells empty', () => {
    const columns: PrinterColumn[] = [
      { name: 'I', type: 'integer', jsonPath: '.spec.f' },
      { name: 'N', type: 'number', jsonPath: '.spec.i' },
      { name: 'B', type: 'boolean', jsonPath: '.spec.b' },
      { name: 'BadB', type: 'boolean', jsonPath: '.spec.i' },
      { name: 'S', type: 'string', jsonPath: '.spec.obj' },
      { name: 'SN', type: 'string', jsonPath: '.spec.f' },
      { name: 'Null', type: 'string', jsonPath: '.spec.nothing' },
      { name: 'Missing', type: 'string', jsonPath: '.spec.missing' },
      { name: 'OutOfRange', type: 'integer', jsonPath: '.spec.list[9]' },
      { name: 'First', type: 'string', jsonPath: '.spec.list[*].n' },
      { name: 'BadDate', type: 'date', jsonPath: '.spec.s' },
      { name: 'EmptyDate', type: 'date', jsonPath: '.spec.empty' },
      { name: 'ZeroDate', type: 'date', jsonPath: '.spec.zero' },
      { name: 'NumDate', type: 'date', jsonPath: '.spec.i' },
      { name: 'Big', type: 'integer', jsonPath: '.spec.big' },
    ];
    const obj = {
      metadata: { name: 'x' },
      spec: {
        f: 2.9,
        i: 3,
        b: true,
        obj: { b: [1], a: '<x>' },
        nothing: null,
        list: [{ n: 'first' }, { n: 'second' }],
        s: 'yesterday',
        empty: '',
        zero: '0001-01-01T00:00:00Z',
        big: 9223372036854775807n,
      },
    };
    assert.deepEqual(buildTable([obj], columns, { now: NOW }).rows![0].cells, [
      'x',
      2,
      3,
      true,
      null,
      '{"a":"\\u003cx\\u003e","b":[1]}',
      '2.9',
      '<no value>',
      null,
      null,
      'first',
      '<invalid>',
      '<unknown>',
      '<unknown>',
      null,
      9223372036854775807n,
    ]);
  });

  it('keeps the columns before an unparseable path and reports it', () => {
    const c = customResourceTableConvertor([
      { name: 'A', type: 'string', jsonPath: '.spec.a' },
      { name: 'B', type: 'string', jsonPath: '.spec[' },
      { name: 'C', type: 'string', jsonPath: '.spec.c' },
    ]);
    assert.equal(c.error, 'unrecognized column definition ".spec["');
    assert.deepEqual(
      c.columns.map((x) => x.name),
      ['Name', 'A'],
    );
  });

  it('honours includeObject, the Table version and list metadata', () => {
    const obj = crontab('a', '2024-05-01T11:59:00Z');
    const convertor = customResourceTableConvertor(CRONTAB_COLUMNS);
    const full = tableForList(convertor, [obj], { resourceVersion: '9', continue: 'tok', remainingItemCount: 0 }, { includeObject: 'Object', now: NOW });
    assert.deepEqual(full.metadata, { resourceVersion: '9', continue: 'tok', remainingItemCount: 0 });
    assert.equal(full.rows![0].object, obj);
    const none = tableForList(convertor, [obj], undefined, { includeObject: 'None', version: 'v1beta1', now: NOW });
    assert.equal(none.apiVersion, 'meta.k8s.io/v1beta1');
    assert.equal(none.rows![0].object, null);
    assert.deepEqual(none.metadata, {});
    const beta = tableForList(convertor, [obj], undefined, { version: 'v1beta1', now: NOW });
    assert.equal((beta.rows![0].object as { apiVersion: string }).apiVersion, 'meta.k8s.io/v1beta1');
    assert.equal(parseIncludeObject(undefined), 'Metadata');
    assert.equal(parseIncludeObject(''), 'Metadata');
    assert.equal(parseIncludeObject('None'), 'None');
    assert.throws(
      () => parseIncludeObject('All'),
      (e: unknown) => e instanceof StatusError && e.code === 400 && e.message === 'unrecognized includeObject value: "All"',
    );
  });

  it('renders a single object and watch events', () => {
    const obj = crontab('one', '2024-05-01T11:59:58Z');
    const convertor = customResourceTableConvertor(CRONTAB_COLUMNS);
    const single = tableForObject(convertor, obj, { now: NOW });
    assert.deepEqual(single.metadata, { resourceVersion: '42' });
    assert.equal(single.rows!.length, 1);
    assert.deepEqual(buildTable([obj], CRONTAB_COLUMNS, { single: true, now: NOW }), single);
    const first = tableForWatchEvent(convertor, obj, { now: NOW });
    assert.equal(first.columnDefinitions!.length, 4);
    const later = tableForWatchEvent(convertor, obj, { noHeaders: true, now: NOW });
    assert.equal(later.columnDefinitions, null);
    assert.deepEqual(later.rows![0].cells, ['one', '* * * * */5', 1, '2s']);
    assert.equal(JSON.stringify(later).includes('"columnDefinitions":null'), true);
  });
});
