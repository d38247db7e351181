// Resource operations as published: paths, operation ids, tags, descriptions, parameters and responses.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { operationIdAndTag, resourceRoutes, type ResourceInfo } from '../../src/openapi/index.js';
import { v2PathItems, v3Paths } from '../../src/openapi/routes.js';

const CRONTAB: ResourceInfo = {
  group: 'stable.example.com',
  version: 'v1',
  kind: 'CronTab',
  plural: 'crontabs',
  namespaced: true,
  kindDefinition: 'com.example.stable.v1.CronTab',
  listDefinition: 'com.example.stable.v1.CronTabList',
  status: true,
  scale: true,
};

describe('resource routes', () => {
  it('produces upstream operation ids, tags and descriptions', () => {
    const routes = resourceRoutes(CRONTAB);
    const summary = routes.map((r) => `${r.method.toUpperCase()} ${r.path} ${r.operationId} ${r.action} | ${r.description}`);
    assert.deepEqual(summary, [
      'GET /apis/stable.example.com/v1/crontabs listStableExampleComV1CronTabForAllNamespaces list | list objects of kind CronTab',
      'GET /apis/stable.example.com/v1/namespaces/{namespace}/crontabs listStableExampleComV1NamespacedCronTab list | list objects of kind CronTab',
      'POST /apis/stable.example.com/v1/namespaces/{namespace}/crontabs createStableExampleComV1NamespacedCronTab post | create a CronTab',
      'DELETE /apis/stable.example.com/v1/namespaces/{namespace}/crontabs deleteStableExampleComV1CollectionNamespacedCronTab deletecollection | delete collection of CronTab',
      'GET /apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name} readStableExampleComV1NamespacedCronTab get | read the specified CronTab',
      'PUT /apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name} replaceStableExampleComV1NamespacedCronTab put | replace the specified CronTab',
      'DELETE /apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name} deleteStableExampleComV1NamespacedCronTab delete | delete a CronTab',
      'PATCH /apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name} patchStableExampleComV1NamespacedCronTab patch | partially update the specified CronTab',
      'GET /apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}/status readStableExampleComV1NamespacedCronTabStatus get | read status of the specified CronTab',
      'PUT /apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}/status replaceStableExampleComV1NamespacedCronTabStatus put | replace status of the specified CronTab',
      'PATCH /apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}/status patchStableExampleComV1NamespacedCronTabStatus patch | partially update status of the specified CronTab',
      'GET /apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}/scale readStableExampleComV1NamespacedCronTabScale get | read scale of the specified CronTab',
      'PUT /apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}/scale replaceStableExampleComV1NamespacedCronTabScale put | replace scale of the specified CronTab',
      'PATCH /apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}/scale patchStableExampleComV1NamespacedCronTabScale patch | partially update scale of the specified CronTab',
    ]);
    assert.equal(routes[0].tag, 'stableExampleCom_v1');
    assert.deepEqual(operationIdAndTag('listNamespacedConfigMap', '/api/v1/namespaces/{namespace}/configmaps'), { id: 'listCoreV1NamespacedConfigMap', tag: 'core_v1' });
    assert.deepEqual(operationIdAndTag('readNamespaceStatus', '/api/v1/namespaces/{name}/status'), { id: 'readCoreV1NamespaceStatus', tag: 'core_v1' });
    assert.deepEqual(operationIdAndTag('patchCustomResourceDefinition', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}'), {
      id: 'patchApiextensionsV1CustomResourceDefinition',
      tag: 'apiextensions_v1',
    });
    const cluster = resourceRoutes({ ...CRONTAB, namespaced: false, status: false, scale: false, kind: 'Ingress', verbs: ['get', 'list', 'create'] });
    assert.deepEqual(
      cluster.map((r) => `${r.operationId} ${r.description}`),
      ['listStableExampleComV1Ingress list objects of kind Ingress', 'createStableExampleComV1Ingress create an Ingress', 'readStableExampleComV1Ingress read the specified Ingress'],
    );
  });

  it('renders v2 path items with hoisted common parameters and upstream responses', () => {
    const items = v2PathItems(resourceRoutes(CRONTAB), () => undefined);
    const item = items.get('/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}')!;
    assert.deepEqual(
      item.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`),
      ['path:name', 'path:namespace', 'query:pretty'],
    );
    assert.deepEqual(item.parameters[0], { uniqueItems: true, type: 'string', description: 'name of the CronTab', name: 'name', in: 'path', required: true });
    assert.deepEqual(Object.keys(item), ['get', 'put', 'delete', 'patch', 'parameters']);
    const put = item.put;
    assert.deepEqual(
      put.parameters.map((p: { name: string }) => p.name),
      ['body', 'dryRun', 'fieldManager'],
    );
    assert.deepEqual(put.parameters[0], { name: 'body', in: 'body', required: true, schema: { $ref: '#/definitions/com.example.stable.v1.CronTab' } });
    assert.deepEqual(Object.keys(put.responses), ['200', '201', '401']);
    assert.deepEqual(put.consumes, ['application/json', 'application/yaml']);
    assert.deepEqual(put.produces, ['application/json', 'application/yaml']);
    assert.deepEqual(put['x-kubernetes-group-version-kind'], { group: 'stable.example.com', kind: 'CronTab', version: 'v1' });
    assert.equal(put['x-kubernetes-action'], 'put');
    const del = item.delete;
    assert.deepEqual(del.parameters[0], { name: 'body', in: 'body', schema: { $ref: '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions' } });
    assert.deepEqual(
      del.parameters.map((p: { name: string }) => p.name),
      ['body', 'dryRun', 'gracePeriodSeconds', 'orphanDependents', 'propagationPolicy'],
    );
    assert.deepEqual(Object.keys(del.responses), ['200', '202', '401']);
    assert.deepEqual(item.patch.consumes, ['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml']);
    const list = items.get('/apis/stable.example.com/v1/namespaces/{namespace}/crontabs')!;
    assert.deepEqual(
      list.get.parameters.map((p: { name: string }) => p.name),
      ['allowWatchBookmarks', 'continue', 'fieldSelector', 'labelSelector', 'limit', 'resourceVersion', 'resourceVersionMatch', 'timeoutSeconds', 'watch'],
    );
    assert.deepEqual(list.get.responses['200'], { description: 'OK', schema: { $ref: '#/definitions/com.example.stable.v1.CronTabList' } });
    assert.deepEqual(Object.keys(list.post.responses), ['200', '201', '202', '401']);
    const withFv = v2PathItems(resourceRoutes(CRONTAB, { fieldValidation: true }), () => undefined);
    assert.ok(withFv.get('/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}')!.patch.parameters.some((p: { name: string }) => p.name === 'fieldValidation'));
  });

  it('renders v3 paths with request bodies and response content', () => {
    const paths = v3Paths(resourceRoutes(CRONTAB));
    const patch = paths.get('/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}/scale')!.patch;
    assert.deepEqual(patch.requestBody, {
      content: {
        'application/json-patch+json': { schema: { $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Patch' } },
        'application/merge-patch+json': { schema: { $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Patch' } },
        'application/apply-patch+yaml': { schema: { $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Patch' } },
      },
      required: true,
    });
    assert.deepEqual(patch.responses['200'].content['application/json'], { schema: { $ref: '#/components/schemas/io.k8s.api.autoscaling.v1.Scale' } });
    assert.deepEqual(patch.parameters[0], {
      name: 'dryRun',
      in: 'query',
      description:
        'When present, indicates that modifications should not be persisted. An invalid or unrecognized dryRun directive will result in an error response and no further processing of the request. Valid values are: - All: all dry run stages will be processed',
      schema: { type: 'string', uniqueItems: true },
    });
    assert.equal(patch.operationId, 'patchStableExampleComV1NamespacedCronTabScale');
  });
});
