/**
 * --runtime-config, as kube-apiserver reads it: the versions upstream removed (which the 1.20 control plane lists)
 * are off by default and served from their v1 resource when turned on, converted as upstream's conversions did;
 * bad keys and values are refused at start with upstream's messages.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from './harness.js';

describe('--runtime-config', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ runtimeConfig: { 'api/beta': 'true', 'batch/v1beta1': 'true', 'policy/v1beta1': 'True', 'discovery.k8s.io/v1beta1': '', 'networking.k8s.io/v1': 'false', 'example.com/v1': 'true' } });
  });
  after(() => s.stop());

  it('serves nothing removed by default, and refuses a bad key or value', async () => {
    // api/beta turns on beta versions, not the ones upstream removed: those must be named.
    const plain = await startTestServer({ runtimeConfig: { 'api/beta': 'true' } });
    try {
      assert.equal((await plain.request('GET', '/apis/batch/v1beta1')).status, 404);
      assert.deepEqual((await plain.request('GET', '/apis/policy')).json.versions.map((v: { version: string }) => v.version), ['v1']);
    } finally {
      await plain.stop();
    }
    await assert.rejects(startTestServer({ runtimeConfig: { 'batch/v2': 'true' } }), /--runtime-config: group version batch\/v2 that has not been registered/);
    await assert.rejects(startTestServer({ runtimeConfig: { 'batch/v1/jobs': 'false' } }), /--runtime-config: invalid key batch\/v1\/jobs: kapi turns group versions on and off, not single resources/);
    await assert.rejects(startTestServer({ runtimeConfig: { 'api/all': 'yes' } }), /--runtime-config: invalid value of api\/all: yes/);
    await assert.rejects(startTestServer({ runtimeConfig: { 'api/ga': 'false' } }), /--runtime-config: v1, .* cannot be turned off: kapi itself stores in or serves from them/);
  });

  it('turns versions on and off by stability and by name (a group kapi does not serve is skipped)', async () => {
    const versions = async (group: string) => ((await s.request('GET', `/apis/${group}`)).json?.versions ?? []).map((v: { version: string }) => v.version);
    assert.deepEqual(await versions('batch'), ['v1', 'v1beta1']);
    assert.deepEqual(await versions('policy'), ['v1', 'v1beta1'], 'policy/v1beta1=True (strconv.ParseBool)');
    assert.deepEqual(await versions('discovery.k8s.io'), ['v1', 'v1beta1']);
    assert.equal((await s.request('GET', '/apis/networking.k8s.io/v1')).status, 404, 'networking.k8s.io/v1=false');
    const cron = await s.request('POST', '/apis/batch/v1beta1/namespaces/default/cronjobs', {
      body: { apiVersion: 'batch/v1beta1', kind: 'CronJob', metadata: { name: 'nightly' }, spec: { schedule: '0 3 * * *', jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } } } } },
    });
    assert.equal(cron.status, 201, cron.text);
    assert.equal(cron.json.apiVersion, 'batch/v1beta1');
    assert.equal((await s.request('GET', '/apis/batch/v1/namespaces/default/cronjobs/nightly')).json.spec.schedule, '0 3 * * *', 'one object, read in both versions');
  });

  it('converts a v1beta1 PodDisruptionBudget\'s empty selector (no pods) and an EndpointSlice\'s topology as upstream', async () => {
    const PDB_LABEL = 'pdb.kubernetes.io/deprecated-v1beta1-empty-selector-match';
    const none = await s.request('POST', '/apis/policy/v1beta1/namespaces/default/poddisruptionbudgets', { body: { apiVersion: 'policy/v1beta1', kind: 'PodDisruptionBudget', metadata: { name: 'none' }, spec: { minAvailable: 1, selector: {} } } });
    assert.equal(none.status, 201, none.text);
    assert.deepEqual(none.json.spec.selector, {});
    assert.deepEqual((await s.request('GET', '/apis/policy/v1/namespaces/default/poddisruptionbudgets/none')).json.spec.selector, { matchExpressions: [{ key: PDB_LABEL, operator: 'Exists' }] });
    const all = await s.request('POST', '/apis/policy/v1/namespaces/default/poddisruptionbudgets', { body: { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'all' }, spec: { minAvailable: 1, selector: {} } } });
    assert.equal(all.status, 201, all.text);
    assert.deepEqual((await s.request('GET', '/apis/policy/v1beta1/namespaces/default/poddisruptionbudgets/all')).json.spec.selector, { matchExpressions: [{ key: PDB_LABEL, operator: 'DoesNotExist' }] });

    const slice = await s.request('POST', '/apis/discovery.k8s.io/v1beta1/namespaces/default/endpointslices', {
      body: {
        apiVersion: 'discovery.k8s.io/v1beta1',
        kind: 'EndpointSlice',
        metadata: { name: 'web-1' },
        addressType: 'IPv4',
        endpoints: [{ addresses: ['10.0.0.1'], nodeName: 'n1', topology: { 'kubernetes.io/hostname': 'n1', 'topology.kubernetes.io/zone': 'z1', 'topology.kubernetes.io/region': 'r1' } }],
        ports: [{ name: 'http', port: 80, protocol: 'TCP' }],
      },
    });
    assert.equal(slice.status, 201, slice.text);
    const v1 = (await s.request('GET', '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/web-1')).json;
    // conditions is a struct: encoding/json writes it even when empty.
    assert.deepEqual(v1.endpoints[0], { addresses: ['10.0.0.1'], conditions: {}, nodeName: 'n1', zone: 'z1', deprecatedTopology: { 'topology.kubernetes.io/region': 'r1' } });
    assert.deepEqual(slice.json.endpoints[0].topology, { 'kubernetes.io/hostname': 'n1', 'topology.kubernetes.io/region': 'r1', 'topology.kubernetes.io/zone': 'z1' });
  });
});
