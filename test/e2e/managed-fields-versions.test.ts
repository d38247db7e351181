/**
 * Managed fields of a resource served in several versions, as upstream's field manager keeps them: a manager that
 * wrote in another version of the group sees each change converted to its version (an HPA written in autoscaling/v2,
 * changed through v1), and one whose version does not convert (an Event written through events.k8s.io, changed
 * through the core group) is dropped rather than compared in the wrong field paths.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from './harness.js';

describe('managed fields across versions', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.stop());

  const managers = (obj: any) => Object.fromEntries(obj.metadata.managedFields.map((m: any) => [m.manager, { apiVersion: m.apiVersion, fields: m.fieldsV1 }]));
  const mergePatch = async (path: string, body: unknown, manager: string) => {
    const r = await s.request('PATCH', `${path}?fieldManager=${manager}`, { body, contentType: 'application/merge-patch+json' });
    assert.equal(r.status, 200, r.text);
    return r.json;
  };

  it('takes from a manager of another version what a write changed, in its own version', async () => {
    const made = await s.request('POST', '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers?fieldManager=a', {
      body: {
        apiVersion: 'autoscaling/v2',
        kind: 'HorizontalPodAutoscaler',
        metadata: { name: 'h' },
        spec: {
          minReplicas: 2,
          maxReplicas: 5,
          scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'd' },
          metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }],
        },
      },
    });
    assert.equal(made.status, 201, made.text);
    // v1's targetCPUUtilizationPercentage is v2's metrics: manager a loses metrics, as it loses maxReplicas.
    await mergePatch('/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers/h', { spec: { targetCPUUtilizationPercentage: 70, maxReplicas: 6 } }, 'b');
    const h = (await s.request('GET', '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/h')).json;
    const m = managers(h);
    assert.deepEqual(m.a, { apiVersion: 'autoscaling/v2', fields: { 'f:spec': { 'f:minReplicas': {}, 'f:scaleTargetRef': {} } } });
    assert.deepEqual(m.b, { apiVersion: 'autoscaling/v1', fields: { 'f:spec': { 'f:maxReplicas': {}, 'f:targetCPUUtilizationPercentage': {} } } });
    assert.deepEqual(h.spec.metrics[0].resource.target, { type: 'Utilization', averageUtilization: 70 });
  });

  it('drops a manager whose version is of another group, and applies without a conflict with it', async () => {
    const made = await s.request('POST', '/api/v1/namespaces/default/events?fieldManager=a', {
      body: { apiVersion: 'v1', kind: 'Event', metadata: { name: 'e' }, involvedObject: { kind: 'Pod', name: 'p', namespace: 'default' }, reason: 'R', message: 'one', type: 'Normal' },
    });
    assert.equal(made.status, 201, made.text);
    const changed = await mergePatch('/apis/events.k8s.io/v1/namespaces/default/events/e', { note: 'two' }, 'b');
    assert.deepEqual(Object.keys(managers(changed)), ['b']);
    const applied = await s.request('PATCH', '/api/v1/namespaces/default/events/e?fieldManager=c', {
      body: { apiVersion: 'v1', kind: 'Event', metadata: { name: 'e' }, involvedObject: { kind: 'Pod', name: 'p', namespace: 'default' }, reason: 'R', message: 'three' },
      contentType: 'application/apply-patch+yaml',
    });
    assert.equal(applied.status, 200, applied.text);
    assert.equal(applied.json.message, 'three');
    assert.deepEqual(Object.keys(managers(applied.json)), ['c']);
  });
});
