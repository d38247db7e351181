/** CRDs over HTTP: create, conditions, discovery, served at once, deletion with instance cleanup, re-registration. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CRONTAB_CRD, cronTab, startTestServer, until, type TestServer } from './harness.js';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

describe('CRD lifecycle over HTTP', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.stop());

  it('creates a CRD that is established and served when the POST returns', async () => {
    const res = await s.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: CRONTAB_CRD });
    assert.equal(res.status, 201, res.text);
    const crd = res.json;
    assert.equal(crd.metadata.generation, 1);
    assert.deepEqual(crd.status.storedVersions, ['v1']);
    assert.equal(crd.spec.names.listKind, 'CronTabList');
    assert.deepEqual(crd.spec.conversion, { strategy: 'None' });
    const cond = Object.fromEntries(crd.status.conditions.map((c: any) => [c.type, c]));
    assert.equal(cond.NamesAccepted.status, 'True');
    assert.equal(cond.NamesAccepted.reason, 'NoConflicts');
    assert.equal(cond.NamesAccepted.message, 'no conflicts found');
    assert.equal(cond.Established.status, 'True');
    assert.equal(cond.Established.reason, 'InitialNamesAccepted');
    assert.ok(cond.Established.lastTransitionTime);
    assert.equal(crd.status.acceptedNames.kind, 'CronTab');
    const created = await s.request('POST', '/apis/stable.example.com/v1/namespaces/default/crontabs', { body: cronTab('my-new-cron-object') });
    assert.equal(created.status, 201, created.text);
  });

  it('lists the resource in discovery with upstream verbs, short names and storage version hash', async () => {
    const gv = await s.request('GET', '/apis/stable.example.com/v1');
    assert.equal(gv.status, 200);
    assert.equal(gv.json.kind, 'APIResourceList');
    assert.equal(gv.json.groupVersion, 'stable.example.com/v1');
    const [r] = gv.json.resources;
    assert.equal(r.name, 'crontabs');
    assert.equal(r.singularName, 'crontab');
    assert.equal(r.namespaced, true);
    assert.equal(r.kind, 'CronTab');
    assert.deepEqual(r.verbs, ['delete', 'deletecollection', 'get', 'list', 'patch', 'create', 'update', 'watch']);
    assert.deepEqual(r.shortNames, ['ct']);
    assert.match(r.storageVersionHash, /^[A-Za-z0-9+/]{11}=$/);
    const group = await s.request('GET', '/apis/stable.example.com');
    assert.deepEqual(group.json, {
      kind: 'APIGroup',
      apiVersion: 'v1',
      name: 'stable.example.com',
      versions: [{ groupVersion: 'stable.example.com/v1', version: 'v1' }],
      preferredVersion: { groupVersion: 'stable.example.com/v1', version: 'v1' },
    });
    const groups = await s.request('GET', '/apis');
    assert.ok(groups.json.groups.some((g: any) => g.name === 'stable.example.com'));
    const aggregated = await s.request('GET', '/apis', { accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' });
    assert.equal(aggregated.json.kind, 'APIGroupDiscoveryList');
    const item = aggregated.json.items.find((g: any) => g.metadata.name === 'stable.example.com');
    assert.equal(item.versions[0].resources[0].resource, 'crontabs');
    assert.equal(item.versions[0].resources[0].scope, 'Namespaced');
    // As upstream: an ETag (a SHA-512, quoted), and 304 to a client that has the document; a new CRD changes it.
    const accept = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';
    const etag = String(aggregated.headers.etag);
    assert.match(etag, /^"[0-9A-F]{128}"$/);
    assert.deepEqual([aggregated.headers.vary, aggregated.headers['cache-control']], ['Accept', 'public']);
    const again = await s.request('GET', '/apis', { accept, headers: { 'If-None-Match': etag } });
    assert.deepEqual([again.status, again.text, again.headers.etag], [304, '', etag]);
    const asProtobuf = await s.request('GET', '/apis', { accept: accept.replace('application/json', 'application/vnd.kubernetes.protobuf'), headers: { 'If-None-Match': etag } });
    assert.equal(asProtobuf.status, 304, 'one document, whatever its encoding');
    const other = { ...CRONTAB_CRD, metadata: { name: 'gauges.stable.example.com' }, spec: { ...CRONTAB_CRD.spec, names: { plural: 'gauges', singular: 'gauge', kind: 'Gauge' } } };
    assert.equal((await s.request('POST', CRDS, { body: other })).status, 201);
    await until('the new CRD in discovery', async () => (await s.request('GET', '/apis', { accept, headers: { 'If-None-Match': etag } })).status === 200);
    assert.equal((await s.request('DELETE', `${CRDS}/gauges.stable.example.com`)).status, 200);
  });

  it('reports a name conflict within a group and resolves it when the holder goes', async () => {
    // crontabs.stable.example.com (created above) holds the short name "ct"; a second CRD of the group asks for it too.
    const holderPath = `${CRDS}/crontabs.stable.example.com`;
    const rivalPath = `${CRDS}/crontabs2.stable.example.com`;
    const rivalInstances = '/apis/stable.example.com/v1/namespaces/default/crontabs2';
    assert.equal((await s.request('GET', holderPath)).status, 200);
    const rival = structuredClone(CRONTAB_CRD);
    rival.metadata.name = 'crontabs2.stable.example.com';
    rival.spec.names = { plural: 'crontabs2', singular: 'crontab2', kind: 'CronTab2', shortNames: ['ct'] };
    const res = await s.request('POST', CRDS, { body: rival });
    assert.equal(res.status, 201, res.text);
    const names = res.json.status.conditions.find((c: any) => c.type === 'NamesAccepted');
    assert.equal(names.status, 'False');
    assert.equal(names.reason, 'ShortNamesConflict');
    assert.equal(names.message, '"ct" is already in use');
    const established = res.json.status.conditions.find((c: any) => c.type === 'Established');
    assert.equal(established.status, 'False');
    assert.equal(established.reason, 'NotAccepted');
    assert.equal((await s.request('GET', rivalInstances)).status, 404);

    // The holder goes: the name is free, and the rival is accepted, established and served.
    try {
      const del = await s.request('DELETE', holderPath);
      assert.equal(del.status, 200, del.text);
      const deadline = Date.now() + 10_000;
      let conds: Record<string, any> = {};
      for (;;) {
        const cur = await s.request('GET', rivalPath);
        assert.equal(cur.status, 200, cur.text);
        conds = Object.fromEntries(cur.json.status.conditions.map((c: any) => [c.type, c]));
        if (conds.NamesAccepted.status === 'True') break;
        if (Date.now() > deadline) throw new Error(`the rival's names not accepted after the holder went: ${JSON.stringify(conds)}`);
        await new Promise((r) => setTimeout(r, 25));
      }
      assert.equal((await s.request('GET', holderPath)).status, 404, 'the holder is gone');
      assert.equal(conds.NamesAccepted.reason, 'NoConflicts');
      assert.equal(conds.Established.status, 'True');
      assert.equal(conds.Established.reason, 'InitialNamesAccepted');
      const list = await s.request('GET', rivalInstances);
      assert.equal(list.status, 200, list.text);
      assert.equal(list.json.kind, 'CronTab2List');
      const gv = await s.request('GET', '/apis/stable.example.com/v1');
      assert.deepEqual(gv.json.resources.map((r: any) => [r.name, r.shortNames]), [['crontabs2', ['ct']]]);
      assert.equal((await s.request('DELETE', rivalPath)).status, 200);
      assert.equal((await s.request('GET', rivalPath)).status, 404);
    } finally {
      // Back to the CronTab CRD alone for the tests below, also when an assertion above failed.
      if ((await s.request('GET', rivalPath)).status !== 404) await s.request('DELETE', rivalPath);
      if ((await s.request('GET', holderPath)).status === 404) await s.request('POST', CRDS, { body: CRONTAB_CRD });
    }
  });

  it('answers a dry-run create with the empty status Go encodes (conditions null)', async () => {
    const crd = structuredClone(CRONTAB_CRD);
    crd.metadata.name = 'drys.stable.example.com';
    crd.spec.names = { plural: 'drys', singular: 'dry', kind: 'Dry' } as never;
    const dry = await s.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions?dryRun=All', { body: crd });
    assert.equal(dry.status, 201, dry.text);
    assert.deepEqual(dry.json.status, { conditions: null, acceptedNames: { plural: '', kind: '' }, storedVersions: ['v1'] });
  });

  it('deletes the instances of a deleted CRD and starts empty when it is created again', async () => {
    const crdPath = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.stable.example.com';
    const created = await s.request('POST', '/apis/stable.example.com/v1/namespaces/default/crontabs', { body: cronTab('doomed') });
    assert.equal(created.status, 201, created.text);
    const before = (await s.request('GET', crdPath)).json;
    const del = await s.request('DELETE', crdPath);
    assert.equal(del.status, 200, del.text);
    // As upstream's CRD REST Delete: marked, with its finalizer and condition, generation and grace untouched.
    assert.ok(del.json.metadata.deletionTimestamp);
    assert.equal(del.json.metadata.generation, before.metadata.generation);
    assert.equal(del.json.metadata.deletionGracePeriodSeconds, undefined);
    assert.equal((await s.request('GET', crdPath)).status, 404);
    const list = await s.request('GET', '/apis/stable.example.com/v1/namespaces/default/crontabs');
    assert.equal(list.status, 404);
    assert.equal(list.text, '404 page not found\n');
    assert.equal((await s.request('GET', '/apis/stable.example.com/v1')).status, 404);
    const again = await s.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: CRONTAB_CRD });
    assert.equal(again.status, 201, again.text);
    const empty = await s.request('GET', '/apis/stable.example.com/v1/namespaces/default/crontabs');
    assert.equal(empty.status, 200);
    assert.deepEqual(empty.json.items, []);
  });

  it('rejects an invalid CRD with upstream field paths', async () => {
    const bad = structuredClone(CRONTAB_CRD);
    bad.metadata.name = 'foo.stable.example.com';
    const res = await s.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: bad });
    assert.equal(res.status, 422);
    assert.equal(res.json.reason, 'Invalid');
    assert.match(
      res.json.message,
      /^CustomResourceDefinition\.apiextensions\.k8s\.io "foo\.stable\.example\.com" is invalid: .*metadata\.name: Invalid value: "foo\.stable\.example\.com": must be spec\.names\.plural\+"\."\+spec\.group/,
    );
  });
});

describe('CRD deletion waits for finalized instances', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
    assert.equal((await s.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: CRONTAB_CRD })).status, 201);
  });
  after(() => s.stop());

  it('keeps a terminating CRD while an instance holds a finalizer, refuses creates, then goes', async () => {
    const ct = '/apis/stable.example.com/v1/namespaces/default/crontabs';
    const crdPath = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.stable.example.com';
    await s.request('POST', ct, { body: { ...cronTab('held'), metadata: { name: 'held', finalizers: ['example.com/hold'] } } });
    const del = await s.request('DELETE', crdPath);
    assert.equal(del.status, 200);
    assert.ok(del.json.metadata.deletionTimestamp);
    assert.deepEqual(del.json.metadata.finalizers, ['customresourcecleanup.apiextensions.k8s.io']);
    const terminating = del.json.status.conditions.find((c: any) => c.type === 'Terminating');
    assert.equal(terminating.status, 'True');
    assert.equal(terminating.reason, 'InstanceDeletionInProgress');
    const held = await s.request('GET', `${ct}/held`);
    assert.equal(held.status, 200);
    assert.ok(held.json.metadata.deletionTimestamp);
    const refused = await s.request('POST', ct, { body: cronTab('late') });
    assert.equal(refused.status, 403);
    assert.equal(refused.json.message, 'crontabs.stable.example.com "late" is forbidden: create not allowed while custom resource definition is terminating');
    const verbs = (await s.request('GET', '/apis/stable.example.com/v1')).json.resources[0].verbs;
    assert.deepEqual(verbs, ['delete', 'deletecollection', 'get', 'list', 'watch']);
    await s.request('PATCH', `${ct}/held`, { body: { metadata: { finalizers: null } }, contentType: 'application/merge-patch+json' });
    const deadline = Date.now() + 10_000;
    while ((await s.request('GET', crdPath)).status !== 404) {
      if (Date.now() > deadline) throw new Error('CRD not removed after its last instance');
      await new Promise((r) => setTimeout(r, 25));
    }
    assert.equal((await s.request('GET', `${ct}/held`)).status, 404);
  });
});
