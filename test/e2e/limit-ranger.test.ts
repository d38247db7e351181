/**
 * The LimitRanger admission plugin (#41): LimitRanges defaulted as upstream's (a container item's default limit is
 * its max, its default request its default limit), pods given the defaults they do not say (with the annotation
 * naming them), and pods and claims checked against min, max and the limit-to-request ratio with upstream's
 * messages. kubectl shows the refusals as kube-apiserver's.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from './harness.js';

describe('LimitRanger admission', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
    for (const name of ['lr', 'ratio']) assert.equal((await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name } } })).status, 201);
  });
  after(() => s.stop());

  const limitRange = async (namespace: string, limits: unknown[]) => {
    const res = await s.request('POST', `/api/v1/namespaces/${namespace}/limitranges`, { body: { metadata: { name: 'limits' }, spec: { limits } } });
    assert.equal(res.status, 201, res.text);
    return res.json;
  };
  const pod = (namespace: string, name: string, containers: Array<Record<string, unknown>>) =>
    s.request('POST', `/api/v1/namespaces/${namespace}/pods`, { body: { metadata: { name }, spec: { containers: containers.map((c, i) => ({ name: `c${i}`, image: 'nginx', ...c })) } } });

  it('defaults a LimitRange, gives pods the defaults they do not say, and refuses what is over or under', async () => {
    const lr = await limitRange('lr', [
      { type: 'Container', max: { cpu: '1' }, min: { cpu: '100m' }, default: { memory: '256Mi' }, defaultRequest: { memory: '128Mi' } },
      { type: 'Pod', max: { memory: '1Gi' } },
      { type: 'PersistentVolumeClaim', min: { storage: '1Gi' }, max: { storage: '10Gi' } },
    ]);
    assert.deepEqual(lr.spec.limits[0], { type: 'Container', max: { cpu: '1' }, min: { cpu: '100m' }, default: { memory: '256Mi', cpu: '1' }, defaultRequest: { memory: '128Mi', cpu: '1' } });

    const plain = await pod('lr', 'plain', [{}]);
    assert.equal(plain.status, 201, plain.text);
    assert.deepEqual(plain.json.spec.containers[0].resources, { limits: { cpu: '1', memory: '256Mi' }, requests: { cpu: '1', memory: '128Mi' } });
    assert.equal(plain.json.metadata.annotations['kubernetes.io/limit-ranger'], 'LimitRanger plugin set: cpu, memory request for container c0; cpu, memory limit for container c0');

    const big = await pod('lr', 'big', [{ resources: { limits: { cpu: '2' } } }]);
    assert.equal(big.status, 403, big.text);
    assert.equal(big.json.message, 'pods "big" is forbidden: maximum cpu usage per Container is 1, but limit is 2');
    const small = await pod('lr', 'small', [{ resources: { requests: { cpu: '50m' }, limits: { cpu: '500m' } } }]);
    assert.equal(small.status, 403);
    assert.equal(small.json.message, 'pods "small" is forbidden: minimum cpu usage per Container is 100m, but request is 50m');
    // Two containers of 600Mi each: the pod's sum (in whole units) is over the Pod item's max.
    const pair = await pod('lr', 'pair', [{ resources: { limits: { memory: '600Mi' } } }, { resources: { limits: { memory: '600Mi' } } }]);
    assert.equal(pair.status, 403);
    assert.equal(pair.json.message, 'pods "pair" is forbidden: maximum memory usage per Pod is 1Gi, but limit is 1258291200');

    const claim = (name: string, storage: string) =>
      s.request('POST', '/api/v1/namespaces/lr/persistentvolumeclaims', { body: { metadata: { name }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } } } } });
    assert.equal((await claim('fits', '5Gi')).status, 201);
    const huge = await claim('huge', '20Gi');
    assert.equal(huge.status, 403);
    assert.equal(huge.json.message, 'persistentvolumeclaims "huge" is forbidden: maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi');
    const cli = await s.kubectl(['-n', 'lr', 'run', 'cli', '--image=nginx', '--limits=cpu=3']);
    assert.notEqual(cli.code, 0);
    assert.match(cli.stderr, /Error from server \(Forbidden\): pods "cli" is forbidden: maximum cpu usage per Container is 1, but limit is 3/);
  });

  it('refuses a limit too far above its request', async () => {
    await limitRange('ratio', [{ type: 'Container', maxLimitRequestRatio: { memory: '2' } }]);
    const res = await pod('ratio', 'wide', [{ resources: { requests: { memory: '100Mi' }, limits: { memory: '300Mi' } } }]);
    assert.equal(res.status, 403);
    assert.equal(res.json.message, 'pods "wide" is forbidden: memory max limit to request ratio per Container is 2, but provided ratio is 3.000000');
    assert.equal((await pod('ratio', 'narrow', [{ resources: { requests: { memory: '100Mi' }, limits: { memory: '200Mi' } } }])).status, 201);
  });
});
