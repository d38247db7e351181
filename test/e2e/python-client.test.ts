/**
 * The official Python client (Debian's python3-kubernetes, installed by npm test) against kapi,
 * as its documentation uses it: typed models without apiVersion and kind (namespaces, ConfigMaps,
 * a CRD), a strategic merge patch, a list, a watch, custom objects, the dynamic client (which
 * reads discovery) and an error, over HTTP/1.1.
 */
import assert from 'node:assert/strict';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { runClientSteps, startTestServer, type TestServer } from './harness.js';

const SCRIPT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'test', 'e2e', 'fixtures', 'python-client.py');
const PYTHON = process.env.KAPI_TEST_PYTHON ?? '/usr/bin/python3';

describe('the official Python client', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.stop());

  it('creates, patches, lists, watches and deletes with typed models, custom objects and the dynamic client', async () => {
    const { code, steps, stderr } = await runClientSteps(PYTHON, ['-u', SCRIPT, 'from-python'], { ...process.env, KUBECONFIG: s.kapi.kubeconfigPath });
    assert.equal(code, 0, `the script failed:\n${stderr}\n${JSON.stringify([...steps.values()])}`);
    assert.deepEqual(steps.get('create_namespace'), { step: 'create_namespace', name: 'from-python', kind: 'Namespace', phase: 'Active' });
    assert.deepEqual(steps.get('create_config_map').data, { mode: 'fast' });
    assert.deepEqual(steps.get('patch_config_map').data, { mode: 'fast', level: '3' });
    assert.deepEqual(steps.get('create_pod'), {
      step: 'create_pod',
      phase: 'Pending',
      qos: 'Guaranteed',
      pull: 'IfNotPresent',
      requests: { cpu: '1', memory: '1Gi' },
      restart: 'Always',
      account: 'default',
    });
    assert.deepEqual(steps.get('debug_pod'), { step: 'debug_pod', name: 'debugger', target: 'web', pull: 'Always', generation: 2, containers: ['web'] });
    assert.deepEqual(steps.get('service_account_token'), {
      step: 'service_account_token',
      expiration: 3600,
      authenticated: true,
      username: 'system:serviceaccount:from-python:builder',
      groups: ['system:serviceaccounts', 'system:serviceaccounts:from-python', 'system:authenticated'],
    });
    const svc = steps.get('create_service');
    assert.match(svc.cluster_ip, /^10\.0\.0\.\d+$/);
    assert.deepEqual(svc.cluster_ips, [svc.cluster_ip]);
    assert.ok(svc.node_port >= 30000 && svc.node_port <= 32767, String(svc.node_port));
    assert.deepEqual([svc.target_port, svc.protocol], [80, 'TCP']);
    const listed = steps.get('list_config_maps');
    assert.deepEqual({ ...listed, names: listed.names.filter((n: string) => n !== 'kube-root-ca.crt') }, { step: 'list_config_maps', names: ['settings'], kind: 'ConfigMapList' });
    assert.deepEqual(steps.get('watch_config_maps').events.filter((e: string[]) => e[1] !== 'kube-root-ca.crt'), [['ADDED', 'settings']]);
    assert.deepEqual(steps.get('create_crd').established, ['NamesAccepted', 'Established']);
    assert.deepEqual(steps.get('custom_object'), { step: 'custom_object', created: 'monty', size: 3 });
    assert.deepEqual(steps.get('dynamic_list').names, ['monty']);
    assert.deepEqual(steps.get('read_missing'), { step: 'read_missing', status: 404, reason: 'NotFound' });
    assert.ok(steps.has('delete_namespace'));
    const ns = await s.request('GET', '/api/v1/namespaces/from-python');
    assert.ok(ns.status === 404 || ns.json.metadata.deletionTimestamp, 'the namespace is going');
  });
});
