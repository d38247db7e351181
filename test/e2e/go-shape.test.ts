/**
 * Built-in objects read in the shape kube-apiserver gives them, whatever the client sent: upstream decodes each
 * object into its Go struct and writes it with encoding/json (structs always there, omitempty zeros gone, nil
 * lists without omitempty as null), and a create's managed fields are what changed from the kind's zero object.
 * Also the strategies' own fields: a DaemonSet's template generation, a PriorityClass's generation, a
 * StatefulSet's maxUnavailable and claim templates' type meta.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from './harness.js';

const template = { metadata: { labels: { app: 'a' }, creationTimestamp: null }, spec: { containers: [{ name: 'c', image: 'nginx' }] } };

describe('built-in objects in their Go shape', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.stop());

  const create = async (path: string, body: unknown) => {
    const r = await s.request('POST', path, { body });
    assert.equal(r.status, 201, r.text);
    return r.json;
  };
  const get = async (path: string) => {
    const r = await s.request('GET', path);
    assert.equal(r.status, 200, r.text);
    return r.json;
  };

  it('writes structs, zero values and nils as encoding/json does, and drops omitempty zeros', async () => {
    const made = await create('/apis/apps/v1/namespaces/default/deployments', {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', labels: {}, finalizers: [] },
      spec: { minReadySeconds: 0, paused: false, selector: { matchLabels: { app: 'a' } }, template },
    });
    const d = await get('/apis/apps/v1/namespaces/default/deployments/web');
    for (const x of [made, d]) {
      assert.deepEqual(x.status, {}, 'a struct is always written');
      assert.deepEqual(x.spec.template.spec.containers[0].resources, {});
      assert.deepEqual(x.spec.template.metadata, { labels: { app: 'a' } }, 'creationTimestamp is omitzero');
      for (const k of ['minReadySeconds', 'paused']) assert.equal(k in x.spec, false, `${k}: omitempty at its zero`);
      assert.equal('labels' in x.metadata || 'finalizers' in x.metadata, false);
    }
    // A role without rules: rules has no omitempty, so it is null; nothing was set, so nobody manages anything.
    const role = await create('/apis/rbac.authorization.k8s.io/v1/clusterroles', { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'empty' } });
    assert.equal(role.rules, null);
    assert.equal(role.metadata.managedFields, undefined);
    // A pod condition without times: zero times are null; a field selector's divisor is the zero quantity.
    const pod = await create('/api/v1/namespaces/default/pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p' },
      spec: { containers: [{ name: 'c', image: 'nginx', env: [{ name: 'CPU', valueFrom: { resourceFieldRef: { resource: 'limits.cpu' } } }] }] },
    });
    assert.deepEqual(pod.spec.containers[0].env[0].valueFrom.resourceFieldRef, { resource: 'limits.cpu', divisor: '0' });
    const status = await s.request('PATCH', '/api/v1/namespaces/default/pods/p/status', {
      body: { status: { conditions: [{ type: 'PodScheduled', status: 'False' }] } },
      contentType: 'application/strategic-merge-patch+json',
    });
    assert.equal(status.status, 200, status.text);
    assert.deepEqual(status.json.status.conditions[0], { type: 'PodScheduled', status: 'False', lastProbeTime: null, lastTransitionTime: null });
    // events.k8s.io serves the stored core Event in its own struct's shape.
    await create('/api/v1/namespaces/default/events', { apiVersion: 'v1', kind: 'Event', metadata: { name: 'e' }, involvedObject: { kind: 'Pod', name: 'p', namespace: 'default' }, reason: 'R', message: 'm' });
    const ev = await get('/apis/events.k8s.io/v1/namespaces/default/events/e');
    assert.equal(ev.eventTime, null);
    assert.equal(ev.note, 'm');
    const core = await get('/api/v1/namespaces/default/events/e');
    assert.deepEqual([core.firstTimestamp, core.lastTimestamp, core.eventTime, core.source], [null, null, null, {}]);
  });

  it("records a create's managed fields against the kind's zero object", async () => {
    const d = await get('/apis/apps/v1/namespaces/default/deployments/web');
    const fields = d.metadata.managedFields[0].fieldsV1;
    // spec, its strategy and its template are in the zero Deployment: their fields are owned, not they themselves.
    assert.equal('.' in fields['f:spec'], false);
    assert.equal('.' in fields['f:spec']['f:strategy'], false);
    assert.equal('.' in fields['f:spec']['f:template'], false);
    // rollingUpdate (a pointer) and labels (a map) are not: the create added them.
    assert.deepEqual(fields['f:spec']['f:strategy']['f:rollingUpdate']['.'], {});
    // replicas is defaulted as the request is decoded, so its writer owns it.
    assert.deepEqual(fields['f:spec']['f:replicas'], {});
    assert.deepEqual(fields['f:spec']['f:template']['f:spec']['f:containers']['k:{"name":"c"}']['f:resources'], {});
    const secret = await create('/api/v1/namespaces/default/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, stringData: { k: 'v' } });
    assert.deepEqual([secret.type, secret.data, secret.stringData], ['Opaque', { k: 'dg==' }, undefined]);
    assert.deepEqual(secret.metadata.managedFields[0].fieldsV1, { 'f:data': { '.': {}, 'f:k': {} }, 'f:type': {} });
  });

  it("keeps a DaemonSet's template generation and a PriorityClass's generation as upstream's strategies do", async () => {
    const path = '/apis/apps/v1/namespaces/default/daemonsets';
    const ds = await create(path, { apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: 'ds', annotations: { 'deprecated.daemonset.template.generation': '7' } }, spec: { selector: { matchLabels: { app: 'a' } }, template } });
    const generation = (o: any) => o.metadata.annotations['deprecated.daemonset.template.generation'];
    assert.equal(generation(ds), '7', 'a create keeps a generation of at least 1');
    const plain = await create(path, { apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: 'plain' }, spec: { selector: { matchLabels: { app: 'a' } }, template } });
    assert.equal(generation(plain), '1');
    const patch = (body: unknown) => s.request('PATCH', `${path}/plain`, { body, contentType: 'application/merge-patch+json' });
    const other = await patch({ metadata: { annotations: { 'deprecated.daemonset.template.generation': '40' } }, spec: { minReadySeconds: 5 } });
    assert.equal(other.status, 200, other.text);
    assert.equal(generation(other.json), '1', 'an update cannot set it; a change outside the template keeps it');
    const changed = await patch({ spec: { template: { spec: { containers: [{ name: 'c', image: 'nginx:2' }] } } } });
    assert.equal(generation(changed.json), '2', 'a template change adds one');

    const pc = await create('/apis/scheduling.k8s.io/v1/priorityclasses', { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'high' }, value: 1000 });
    assert.equal(pc.metadata.generation, 1);
    const updated = await s.request('PATCH', '/apis/scheduling.k8s.io/v1/priorityclasses/high', { body: { description: 'd' }, contentType: 'application/merge-patch+json' });
    assert.equal(updated.json.metadata.generation, 1);
  });

  it("defaults a StatefulSet's maxUnavailable and writes its claim templates' type meta", async () => {
    const sts = await create('/apis/apps/v1/namespaces/default/statefulsets', {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'db' },
      spec: {
        serviceName: 'db',
        selector: { matchLabels: { app: 'a' } },
        template,
        volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
      },
    });
    assert.deepEqual(sts.spec.updateStrategy, { type: 'RollingUpdate', rollingUpdate: { partition: 0, maxUnavailable: 1 } });
    assert.deepEqual([sts.spec.volumeClaimTemplates[0].apiVersion, sts.spec.volumeClaimTemplates[0].kind], ['v1', 'PersistentVolumeClaim']);
    assert.ok(sts.metadata.managedFields, 'the claim templates type-check with their type meta');
  });
});
