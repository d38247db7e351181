/**
 * The admission chain, run by the store at upstream's points for every verb
 * and subresource: mutating plugins before the strategy, validating plugins
 * after it, updates inside the compare-and-swap loop with the object they
 * replace, deletes with the object deleted.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { AdmissionAttributes } from '../../src/registry/admission.js';
import { errors } from '../../src/machinery/status.js';
import { startTestServer, type TestServer } from './harness.js';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const GROUP = 'adm.example.com';
const widgets = `/apis/${GROUP}/v1/namespaces/default/widgets`;

interface Seen {
  phase: 'admit' | 'validate';
  operation: string;
  subresource: string;
  name: string;
  object: boolean;
  oldObject: boolean;
  uid: boolean;
  dryRun: boolean;
  user: string;
}

describe('admission', () => {
  let s: TestServer;
  const seen: Seen[] = [];
  const record = (phase: Seen['phase'], a: AdmissionAttributes) => {
    if (a.resource.resource !== 'widgets') return;
    seen.push({ phase, operation: a.operation, subresource: a.subresource, name: a.name, object: !!a.object, oldObject: !!a.oldObject, uid: !!a.object?.metadata?.uid, dryRun: a.dryRun, user: a.user?.name ?? '' });
  };
  before(async () => {
    s = await startTestServer({
      admission: [
        {
          name: 'Recorder',
          admit(a) {
            record('admit', a);
            // A mutation: every new widget gets a label.
            if (a.resource.resource === 'widgets' && a.operation === 'CREATE') a.object!.metadata.labels = { ...(a.object!.metadata.labels ?? {}), admitted: 'yes' };
          },
          validate(a) {
            record('validate', a);
            if (a.resource.resource === 'widgets' && a.operation === 'UPDATE' && a.object?.spec?.size === 13) {
              throw errors.forbidden({ group: GROUP, resource: 'widgets' }, a.name, 'size 13 is refused');
            }
          },
        },
      ],
    });
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `widgets.${GROUP}` },
      spec: {
        group: GROUP,
        scope: 'Namespaced',
        names: { plural: 'widgets', kind: 'Widget' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } },
            schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' }, replicas: { type: 'integer' } } }, status: { type: 'object', properties: { replicas: { type: 'integer' } } } } } },
          },
        ],
      },
    };
    assert.equal((await s.request('POST', CRDS, { body: crd })).status, 201);
  });
  after(() => s.stop());

  const steps = (from: number) => seen.slice(from).map((x) => `${x.phase} ${x.operation}${x.subresource ? `/${x.subresource}` : ''} ${x.name}${x.oldObject ? ' +old' : ''}${x.uid ? ' +uid' : ''}${x.dryRun ? ' dry' : ''}`);

  it('runs on every verb and subresource, mutating before the strategy and validating after it', async () => {
    const w = (name: string, spec: Record<string, unknown> = { size: 1, replicas: 1 }) => ({ apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name }, spec });
    let mark = seen.length;
    const created = await s.request('POST', widgets, { body: w('a') });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.json.metadata.labels.admitted, 'yes', 'the mutating plugin\'s change is stored');
    // The mutating plugin sees the object before the strategy filled its uid; the validating one after.
    assert.deepEqual(steps(mark), ['admit CREATE a', 'validate CREATE a +uid']);

    mark = seen.length;
    assert.equal((await s.request('PUT', `${widgets}/a`, { body: { ...created.json, spec: { size: 2, replicas: 1 } } })).status, 200);
    assert.equal((await s.request('PATCH', `${widgets}/a`, { body: { spec: { size: 3 } }, contentType: 'application/merge-patch+json' })).status, 200);
    assert.equal((await s.request('PATCH', `${widgets}/a?fieldManager=t&force=true`, { body: w('a', { size: 4 }), contentType: 'application/apply-patch+yaml' })).status, 200);
    assert.equal((await s.request('PATCH', `${widgets}/b?fieldManager=t`, { body: w('b'), contentType: 'application/apply-patch+yaml' })).status, 201);
    const cur = (await s.request('GET', `${widgets}/a`)).json;
    assert.equal((await s.request('PUT', `${widgets}/a/status`, { body: { ...cur, status: { replicas: 1 } } })).status, 200);
    const scale = (await s.request('GET', `${widgets}/a/scale`)).json;
    assert.equal((await s.request('PUT', `${widgets}/a/scale`, { body: { ...scale, spec: { replicas: 5 } } })).status, 200);
    assert.equal((await s.request('POST', `${widgets}?dryRun=All`, { body: w('dry') })).status, 201);
    assert.equal((await s.request('DELETE', `${widgets}/b`)).status, 200);
    assert.deepEqual(steps(mark), [
      'admit UPDATE a +old +uid',
      'validate UPDATE a +old +uid',
      'admit UPDATE a +old +uid',
      'validate UPDATE a +old +uid',
      'admit UPDATE a +old +uid',
      'validate UPDATE a +old +uid',
      'admit CREATE b',
      'validate CREATE b +uid',
      'admit UPDATE/status a +old +uid',
      'validate UPDATE/status a +old +uid',
      'admit UPDATE/scale a +old +uid',
      'validate UPDATE/scale a +old +uid',
      'admit CREATE dry dry',
      'validate CREATE dry +uid dry',
      'admit DELETE b +old',
      'validate DELETE b +old',
    ]);
    assert.ok(seen.every((x) => x.user === 'kapi-admin'), 'the request\'s user');
  });

  it('refuses what a validating plugin refuses, and nothing is stored', async () => {
    const before = (await s.request('GET', `${widgets}/a`)).json;
    const refused = await s.request('PATCH', `${widgets}/a`, { body: { spec: { size: 13 } }, contentType: 'application/merge-patch+json' });
    assert.equal(refused.status, 403, refused.text);
    assert.equal(refused.json.message, `widgets.${GROUP} "a" is forbidden: size 13 is refused`);
    const after = (await s.request('GET', `${widgets}/a`)).json;
    assert.equal(after.metadata.resourceVersion, before.metadata.resourceVersion);
    assert.equal(after.spec.size, 4);
  });
});

describe('admission plugins of an embedder', () => {
  it('have what they add decoded again: a field the type does not declare is dropped, a wrong type refused', async () => {
    const s = await startTestServer({
      admission: [
        {
          name: 'Embedder',
          admit(a) {
            if (a.resource.resource !== 'configmaps' || a.operation !== 'CREATE') return;
            a.object!.bogus = 'x';
            if (a.object!.metadata.name === 'typed') a.object!.data = { n: 5 };
          },
        },
      ],
    });
    try {
      const made = await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'plain' }, data: { a: 'b' } } });
      assert.equal(made.status, 201, made.text);
      assert.equal(made.json.bogus, undefined);
      const typed = await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'typed' } } });
      assert.equal(typed.status, 400, typed.text);
      assert.match(typed.json.message, /cannot unmarshal number into Go struct field ConfigMap\.data of type string/);
    } finally {
      await s.stop();
    }
  });
});
