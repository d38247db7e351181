/**
 * client-go against kapi, as Go operators and controller-runtime use it for built-in kinds: typed
 * clients that send and accept only Kubernetes protobuf (create, get, update, list, watch, delete with
 * preconditions), client-go's error helpers (AlreadyExists, Conflict, NotFound), a shared informer,
 * the metadata client (PartialObjectMetadataList in protobuf), the dynamic client and discovery. The program (fixtures/go-client/main.go) is
 * built by scripts/go-client.sh from the client-go that Debian's kubernetes source package vendors.
 */
import assert from 'node:assert/strict';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { runClientSteps, startTestServer, type TestServer } from './harness.js';

const CLIENT = process.env.KAPI_TEST_GO_CLIENT ?? resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '.cache', 'bin', 'kapi-go-client');

describe('client-go (protobuf)', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.stop());

  it('works with typed protobuf clients, a shared informer, the metadata and dynamic clients, and discovery', async () => {
    const { code, steps, stderr: output } = await runClientSteps(CLIENT, [s.kapi.kubeconfigPath, 'go-e2e']);
    assert.equal(code, 0, output);
    assert.ok(steps.get('done')?.ok, output);
    assert.deepEqual(steps.get('get configmap').detail, { bin: 'AAH/', created: true, data: { key: 'value' } });
    assert.deepEqual(steps.get('update configmap').detail, { key: 'updated' });
    assert.equal(steps.get('get missing is NotFound').detail, 'configmaps "missing" not found');
    assert.deepEqual(steps.get('watch event').detail, { name: 'go-watched', type: 'ADDED' });
    assert.deepEqual(steps.get('get deployment').detail, { cpu: '500m', generation: 1, maxSurge: '25%', maxUnavailable: '1', replicas: 0 });
    // The namespace's kube-root-ca.crt is there too (once kapi's controller has published it).
    const ours = (names: string[]) => names.filter((n) => n !== 'kube-root-ca.crt');
    assert.deepEqual(ours(steps.get('metadata list').detail), ['go-cm', 'go-watched']);
    assert.ok([2, 3].includes(steps.get('informer sync').detail));
    assert.equal(steps.get('informer event').detail, 'go-informed');
    assert.deepEqual(steps.get('list custom resources').detail, [3]);
    assert.deepEqual(steps.get('get local apiservice').detail, { available: 'True Local', group: 'apps', groupPriorityMinimum: 17800, local: true, versionPriority: 15 });
    assert.equal(steps.get('apiservice checked').detail, 'False ServiceNotFound port=443 ca=28');
    // What the Go client wrote reads the same in JSON.
    const cm = await s.request('GET', '/api/v1/namespaces/go-e2e/configmaps/go-watched');
    assert.equal(cm.status, 200);
    assert.equal((await s.request('GET', '/api/v1/namespaces/go-e2e/configmaps/go-cm')).status, 404, 'deleted with a UID precondition');
    const deploy = (await s.request('GET', '/apis/apps/v1/namespaces/go-e2e/deployments/go-deploy')).json;
    assert.equal(deploy.spec.replicas, 0);
    assert.deepEqual(deploy.spec.strategy.rollingUpdate, { maxUnavailable: 1, maxSurge: '25%' });
    assert.equal(deploy.spec.template.spec.containers[0].ports[0].containerPort, 80);
  });
});
