// An aggregated APIService's share of /openapi/v2 (kube-aggregator's filtering and merge) and of /openapi/v3.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { backendPart, OpenApiPublisher, v3FromBackendPart } from '../../src/openapi/index.js';

const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';
const backend = {
  swagger: '2.0',
  paths: {
    '/apis/ext.example.com/v1/': { get: { operationId: 'getExtAPIResources' } },
    '/apis/ext.example.com/v1/widgets': {
      parameters: [{ $ref: '#/parameters/pretty-tJGM1-ng' }],
      get: { operationId: 'listWidgets', parameters: [{ $ref: '#/parameters/limit' }, { $ref: '#/parameters/missing' }], responses: { '200': { schema: { $ref: '#/definitions/com.example.ext.v1.WidgetList' } } } },
    },
    // Other group-versions of the backend are not this APIService's.
    '/apis/other.example.com/v1/things': { get: { responses: { '200': { schema: { $ref: '#/definitions/com.example.other.v1.Thing' } } } } },
    '/api/v1/namespaces': { get: {} },
  },
  definitions: {
    'com.example.ext.v1.WidgetList': { type: 'object', properties: { items: { type: 'array', items: { $ref: '#/definitions/com.example.ext.v1.Widget' } } } },
    'com.example.ext.v1.Widget': { type: 'object', properties: { metadata: { $ref: `#/definitions/${OBJECT_META}` }, owner: { $ref: '#/definitions/io.k8s.api.core.v1.Capabilities' }, self: { $ref: '#/definitions/com.example.ext.v1.Widget' } } },
    // Differs from the aggregator's own: renamed.
    'io.k8s.api.core.v1.Capabilities': { type: 'object', description: 'the backend\'s own' },
    'com.example.other.v1.Thing': { type: 'object' },
    [OBJECT_META]: { type: 'object', description: 'placeholder' },
  },
  parameters: { 'pretty-tJGM1-ng': { name: 'pretty', in: 'query', type: 'string', uniqueItems: true }, limit: { name: 'limit', in: 'query', type: 'integer' } },
};

describe('aggregated OpenAPI', () => {
  it('keeps only the group-version\'s paths and the definitions they reach, parameters in place', () => {
    const part = backendPart(JSON.parse(JSON.stringify(backend)), 'ext.example.com', 'v1');
    assert.deepEqual([...part.paths.keys()].sort(), ['/apis/ext.example.com/v1/', '/apis/ext.example.com/v1/widgets']);
    assert.deepEqual([...part.definitions.keys()].sort(), ['com.example.ext.v1.Widget', 'com.example.ext.v1.WidgetList', 'io.k8s.api.core.v1.Capabilities', OBJECT_META]);
    const widgets = part.paths.get('/apis/ext.example.com/v1/widgets') as any;
    assert.deepEqual(widgets.parameters, [backend.parameters['pretty-tJGM1-ng']]);
    assert.deepEqual(widgets.get.parameters, [backend.parameters.limit], 'a reference to no parameter is dropped');
  });

  it('refuses what is not an OpenAPI v2 document, and documents nested deeper than it follows', () => {
    assert.throws(() => backendPart([], 'g', 'v1'), /not an OpenAPI v2 document/);
    let deep: unknown = { $ref: '#/definitions/X' };
    for (let i = 0; i < 500; i++) deep = { items: deep };
    assert.throws(() => backendPart({ paths: { '/apis/g/v1/x': { get: deep } } }, 'g', 'v1'), /nested more than 128 levels deep/);
  });

  it('merges the share into /openapi/v2: local definitions win, a different one of the same name is renamed _v2 with its references', () => {
    const p = new OpenApiPublisher();
    p.setBuiltins([{ group: '', version: 'v1', kind: 'Pod', resource: 'pods', namespaced: true }]);
    const local = JSON.parse(p.handle('/openapi/v2', { accept: 'application/json' })!.body!.toString());
    assert.ok(local.definitions['io.k8s.api.core.v1.Capabilities'], 'the built-ins publish Capabilities');
    const part = backendPart(JSON.parse(JSON.stringify(backend)), 'ext.example.com', 'v1');
    // The backend's ObjectMeta as the aggregator publishes it: shared, not renamed.
    part.definitions.set(OBJECT_META, local.definitions[OBJECT_META]);
    p.setAggregated('v1.ext.example.com', { groupVersion: 'apis/ext.example.com/v1', v2: part, v3URL: '/openapi/v3/apis/ext.example.com/v1?hash=ABC' });
    const merged = JSON.parse(p.handle('/openapi/v2', { accept: 'application/json' })!.body!.toString());
    assert.ok(merged.paths['/apis/ext.example.com/v1/widgets']);
    assert.ok(merged.paths['/api/v1/namespaces/{namespace}/pods']);
    assert.equal(merged.paths['/apis/other.example.com/v1/things'], undefined);
    assert.deepEqual(merged.definitions['io.k8s.api.core.v1.Capabilities'], local.definitions['io.k8s.api.core.v1.Capabilities']);
    assert.deepEqual(merged.definitions['io.k8s.api.core.v1.Capabilities_v2'], { type: 'object', description: 'the backend\'s own' });
    assert.equal(merged.definitions['com.example.ext.v1.Widget'].properties.owner.$ref, '#/definitions/io.k8s.api.core.v1.Capabilities_v2');
    assert.equal(merged.definitions['com.example.ext.v1.Widget'].properties.metadata.$ref, `#/definitions/${OBJECT_META}`);
    assert.equal(merged.definitions[`${OBJECT_META}_v2`], undefined);
    // The protobuf form holds the same paths.
    const proto = p.handle('/openapi/v2', { accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf' })!;
    assert.equal(proto.status, 200);
    assert.ok(Buffer.from(proto.body!).includes('/apis/ext.example.com/v1/widgets'));
    // v3: the backend's document URL is listed; local group-versions keep theirs.
    const v3 = JSON.parse(p.handle('/openapi/v3')!.body!.toString());
    assert.deepEqual(v3.paths['apis/ext.example.com/v1'], { serverRelativeURL: '/openapi/v3/apis/ext.example.com/v1?hash=ABC' });
    assert.ok(v3.paths['api/v1'].serverRelativeURL.startsWith('/openapi/v3/api/v1?hash='));
    // Withdrawn (the backend unavailable): gone from both.
    p.setAggregated('v1.ext.example.com', undefined);
    const after = JSON.parse(p.handle('/openapi/v2', { accept: 'application/json' })!.body!.toString());
    assert.equal(after.paths['/apis/ext.example.com/v1/widgets'], undefined);
    assert.equal(after.definitions['io.k8s.api.core.v1.Capabilities_v2'], undefined);
    assert.equal(JSON.parse(p.handle('/openapi/v3')!.body!.toString()).paths['apis/ext.example.com/v1'], undefined);
  });

  it('gives a contested name to the share of the higher APIService, reuses an equal renamed definition, and leaves a share protobuf cannot hold out of that form', () => {
    const p = new OpenApiPublisher();
    p.setBuiltins([{ group: '', version: 'v1', kind: 'Pod', resource: 'pods', namespaced: true }]);
    const share = (group: string, description: unknown) =>
      backendPart(
        {
          paths: { [`/apis/${group}/v1/things`]: { get: { responses: { '200': { schema: { $ref: '#/definitions/shared.Thing' } } } } } },
          definitions: { 'shared.Thing': { type: 'object', description } },
        },
        group,
        'v1',
      );
    // Three backends publish shared.Thing: the two lower ones alike. The highest keeps the name.
    p.setAggregated('v1.a.example.com', { groupVersion: 'apis/a.example.com/v1', v2: share('a.example.com', 'low'), priority: [1000, 10] });
    p.setAggregated('v1.b.example.com', { groupVersion: 'apis/b.example.com/v1', v2: share('b.example.com', 'high'), priority: [2000, 10] });
    p.setAggregated('v1.c.example.com', { groupVersion: 'apis/c.example.com/v1', v2: share('c.example.com', 'low'), priority: [1000, 5] });
    const doc = JSON.parse(p.handle('/openapi/v2', { accept: 'application/json' })!.body!.toString());
    assert.equal(doc.definitions['shared.Thing'].description, 'high');
    assert.equal(doc.definitions['shared.Thing_v2'].description, 'low');
    assert.equal(doc.definitions['shared.Thing_v3'], undefined, 'an equal renamed definition is reused');
    const ref = (g: string) => doc.paths[`/apis/${g}/v1/things`].get.responses['200'].schema.$ref;
    assert.deepEqual([ref('a.example.com'), ref('b.example.com'), ref('c.example.com')], ['#/definitions/shared.Thing_v2', '#/definitions/shared.Thing', '#/definitions/shared.Thing_v2']);
    // A description that is no string: JSON carries it, protobuf leaves that share out but still answers.
    p.setAggregated('v1.d.example.com', { groupVersion: 'apis/d.example.com/v1', v2: share('d.example.com', 5), priority: [3000, 10] });
    const proto = p.handle('/openapi/v2', { accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf' })!;
    assert.equal(proto.status, 200);
    assert.ok(!Buffer.from(proto.body!).includes('/apis/d.example.com/v1/things'));
    assert.ok(Buffer.from(proto.body!).includes('/apis/a.example.com/v1/things'));
    assert.equal(JSON.parse(p.handle('/openapi/v2', { accept: 'application/json' })!.body!.toString()).definitions['shared.Thing'].description, 5);
  });

  it('makes a v3 document of a v2-only backend\'s share: request bodies, response content, parameter schemas, component references', () => {
    const part = backendPart(
      {
        info: { title: 'old', version: 'v1.19.0' },
        paths: {
          '/apis/old.example.com/v1/things': {
            post: {
              consumes: ['application/json', 'application/yaml'],
              produces: ['application/json'],
              parameters: [{ name: 'body', in: 'body', required: true, schema: { $ref: '#/definitions/old.Thing' } }, { $ref: '#/parameters/dry' }],
              responses: { '201': { description: 'Created', schema: { $ref: '#/definitions/old.Thing' } }, '401': { description: 'Unauthorized' } },
            },
          },
        },
        definitions: {
          'old.Thing': { type: 'object', properties: { owner: { $ref: '#/definitions/old.Owner' }, described: { $ref: '#/definitions/old.Owner', description: 'who' } } },
          'old.Owner': { type: 'string' },
        },
        parameters: { dry: { name: 'dryRun', in: 'query', type: 'string', uniqueItems: true, collectionFormat: 'csv' } },
      },
      'old.example.com',
      'v1',
    );
    const doc = v3FromBackendPart(part) as any;
    assert.deepEqual(doc.info, { title: 'old', version: 'v1.19.0' });
    const post = doc.paths['/apis/old.example.com/v1/things'].post;
    assert.deepEqual(post.requestBody, { content: { 'application/json': { schema: { $ref: '#/components/schemas/old.Thing' } }, 'application/yaml': { schema: { $ref: '#/components/schemas/old.Thing' } } }, required: true });
    assert.deepEqual(post.parameters, [{ name: 'dryRun', in: 'query', schema: { type: 'string', uniqueItems: true } }]);
    assert.deepEqual(post.responses, { '201': { description: 'Created', content: { 'application/json': { schema: { $ref: '#/components/schemas/old.Thing' } } } }, '401': { description: 'Unauthorized' } });
    assert.equal(post.consumes, undefined);
    assert.deepEqual(doc.components.schemas['old.Thing'].properties.owner, { $ref: '#/components/schemas/old.Owner' });
    // A reference with fields beside it keeps them (OpenAPI 3.0 would ignore them beside a $ref).
    assert.deepEqual(doc.components.schemas['old.Thing'].properties.described, { allOf: [{ $ref: '#/components/schemas/old.Owner' }], description: 'who' });
    // Served by the publisher under its hash, listed in /openapi/v3.
    const p = new OpenApiPublisher();
    p.setAggregated('v1.old.example.com', { groupVersion: 'apis/old.example.com/v1', v2: part, v3Converted: Buffer.from(JSON.stringify(doc)) });
    const url = JSON.parse(p.handle('/openapi/v3')!.body!.toString()).paths['apis/old.example.com/v1'].serverRelativeURL;
    assert.match(url, /^\/openapi\/v3\/apis\/old\.example\.com\/v1\?hash=[0-9A-F]{128}$/);
    const served = p.handle(url, { accept: 'application/json' })!;
    assert.equal(served.status, 200);
    assert.deepEqual(JSON.parse(served.body!.toString()), doc);
  });

  it('refuses shares that copying would blow up: a large parameter referenced many times, and lists media types once', () => {
    const big = { name: 'big', in: 'query', type: 'string', enum: Array.from({ length: 20_000 }, (_, i) => `value-${i}`) };
    const paths = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`/apis/amp.example.com/v1/p${i}`, { get: { parameters: [{ $ref: '#/parameters/big' }] } }]));
    assert.throws(() => backendPart({ paths, parameters: { big } }, 'amp.example.com', 'v1'), /copies of shared parts would exceed 16777216 bytes/);
    const many = backendPart(
      { paths: { '/apis/amp.example.com/v1/x': { get: { produces: Array.from({ length: 100_000 }, () => 'application/json'), responses: { '200': { schema: { type: 'object' } } } } } } },
      'amp.example.com',
      'v1',
    );
    assert.deepEqual(Object.keys((v3FromBackendPart(many) as any).paths['/apis/amp.example.com/v1/x'].get.responses['200'].content), ['application/json']);
  });
});
