import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  defaultCRD,
  defaultV1,
  defaultV1beta1,
  prepareCRDForCreate,
  prepareCRDForUpdate,
  prepareCRDStatusForUpdate,
  specChanged,
} from '../../../src/apis/apiextensions/defaults.js';
import { v1ToV1beta1 } from '../../../src/apis/apiextensions/conversion.js';
import type { CustomResourceDefinitionV1 } from '../../../src/api/apiextensions.js';
import { cronTabV1, cronTabV1beta1, noxu } from './fixtures.js';

function widget(): CustomResourceDefinitionV1 {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.example.com' },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'widgets', kind: 'Widget' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }],
    },
  };
}

describe('v1 defaults', () => {
  it('A-02: singular is the lower-cased kind, listKind is kind + "List"', () => {
    const out = defaultV1(widget());
    assert.equal(out.spec?.names?.singular, 'widget');
    assert.equal(out.spec?.names?.listKind, 'WidgetList');
  });

  it('keeps names that are set', () => {
    const out = defaultV1(noxu());
    assert.equal(out.spec?.names?.singular, 'nonenglishnoxu');
    assert.equal(out.spec?.names?.listKind, 'NoxuItemList');
  });

  it('defaults conversion to strategy None', () => {
    assert.deepEqual(defaultV1(widget()).spec?.conversion, { strategy: 'None' });
  });

  it('defaults the conversion webhook service port to 443', () => {
    const crd = widget();
    crd.spec!.conversion = { strategy: 'Webhook', webhook: { clientConfig: { service: { namespace: 'ns', name: 'svc' } }, conversionReviewVersions: ['v1'] } };
    assert.equal(defaultV1(crd).spec?.conversion?.webhook?.clientConfig?.service?.port, 443);
    crd.spec!.conversion.webhook!.clientConfig!.service!.port = 8443;
    assert.equal(defaultV1(crd).spec?.conversion?.webhook?.clientConfig?.service?.port, 8443);
  });

  it('does not default scope or preserveUnknownFields in v1', () => {
    const crd = widget();
    delete crd.spec!.scope;
    const out = defaultV1(crd);
    assert.equal(out.spec?.scope, undefined);
    assert.equal(out.spec?.preserveUnknownFields, undefined);
  });

  it('defaults status.storedVersions to the storage version when empty', () => {
    assert.deepEqual(defaultV1(widget()).status?.storedVersions, ['v1']);
  });

  it('does not mutate its input', () => {
    const crd = widget();
    const copy = structuredClone(crd);
    defaultV1(crd);
    assert.deepEqual(crd, copy);
  });
});

describe('v1beta1 defaults', () => {
  it('defaults scope, names, versions from version, conversion and preserveUnknownFields', () => {
    const out = defaultV1beta1({ apiVersion: 'apiextensions.k8s.io/v1beta1', spec: { group: 'example.com', version: 'v1', names: { plural: 'widgets', kind: 'Widget' } } });
    assert.deepEqual(out.spec, {
      group: 'example.com',
      version: 'v1',
      names: { plural: 'widgets', kind: 'Widget', singular: 'widget', listKind: 'WidgetList' },
      scope: 'Namespaced',
      versions: [{ name: 'v1', storage: true, served: true }],
      conversion: { strategy: 'None' },
      preserveUnknownFields: true,
    });
  });

  it('sets version from versions[0] and keeps an explicit preserveUnknownFields false', () => {
    const out = defaultV1beta1(cronTabV1beta1());
    assert.equal(out.spec?.version, 'v1');
    assert.equal(out.spec?.preserveUnknownFields, false);
  });

  it('defaults conversionReviewVersions to ["v1beta1"] for the Webhook strategy, and the service port', () => {
    const crd = cronTabV1beta1();
    crd.spec!.conversion = { strategy: 'Webhook', webhookClientConfig: { service: { namespace: 'ns', name: 'svc' } } };
    const out = defaultV1beta1(crd);
    assert.deepEqual(out.spec?.conversion?.conversionReviewVersions, ['v1beta1']);
    assert.equal(out.spec?.conversion?.webhookClientConfig?.service?.port, 443);
  });

  it('defaultCRD picks the version from apiVersion or the request', () => {
    assert.equal(defaultCRD(cronTabV1beta1()).spec?.scope, 'Namespaced');
    const beta = cronTabV1beta1();
    delete beta.apiVersion;
    delete beta.spec!.scope;
    assert.equal(defaultCRD(beta, 'v1beta1').spec?.scope, 'Namespaced');
    assert.equal(defaultCRD(beta, 'v1').spec?.scope, undefined);
  });
});

describe('prepareCRDForCreate (A-01)', () => {
  it('discards client status, sets storedVersions to the storage version, empty accepted names and null conditions (as Go encodes the empty status)', () => {
    const crd = defaultV1(noxu());
    crd.status = {
      conditions: [{ type: 'Established', status: 'True' }],
      acceptedNames: { plural: 'evil', kind: 'Evil' },
      storedVersions: ['v0', 'v9'],
    };
    const out = prepareCRDForCreate(crd);
    assert.deepEqual(out.status, { conditions: null, acceptedNames: { plural: '', kind: '' }, storedVersions: ['v1beta1'] });
  });

  it('uses the version marked storage, not the first one', () => {
    const crd = widget();
    crd.spec!.versions = [
      { name: 'v1', served: true, storage: false },
      { name: 'v2', served: true, storage: true },
    ];
    assert.deepEqual(prepareCRDForCreate(crd).status?.storedVersions, ['v2']);
  });

  it('leaves storedVersions unset without a storage version (validation then rejects it)', () => {
    const crd = widget();
    crd.spec!.versions![0].storage = false;
    assert.equal(prepareCRDForCreate(crd).status?.storedVersions, undefined);
  });

  it('works on v1beta1 objects too', () => {
    assert.deepEqual(prepareCRDForCreate(defaultV1beta1(cronTabV1beta1())).status?.storedVersions, ['v1']);
  });
});

describe('prepareCRDForUpdate (A-09)', () => {
  it('keeps the old status and appends a new storage version', () => {
    const old = prepareCRDForCreate(noxu());
    old.status!.conditions = [{ type: 'Established', status: 'True', reason: 'InitialNamesAccepted' }];
    const next = noxu();
    next.spec!.versions = [
      { name: 'v1beta1', served: true, storage: false, schema: next.spec!.versions![0].schema },
      { name: 'v1beta2', served: true, storage: true, schema: next.spec!.versions![0].schema },
    ];
    next.status = { storedVersions: [] };
    const out = prepareCRDForUpdate(next, old);
    assert.deepEqual(out.status?.storedVersions, ['v1beta1', 'v1beta2']);
    assert.deepEqual(out.status?.conditions, old.status!.conditions);
  });

  it('never removes stored versions and does not duplicate', () => {
    const old = prepareCRDForCreate(noxu());
    old.status!.storedVersions = ['v0', 'v1beta1'];
    assert.deepEqual(prepareCRDForUpdate(noxu(), old).status?.storedVersions, ['v0', 'v1beta1']);
  });
});

describe('prepareCRDStatusForUpdate', () => {
  it('takes spec, labels, annotations, ownerReferences and generation from the old object', () => {
    const old = prepareCRDForCreate(noxu());
    old.metadata = { ...old.metadata, labels: { a: 'b' }, generation: 3 };
    const next = structuredClone(old);
    next.spec!.scope = 'Cluster';
    next.metadata = { ...next.metadata, labels: { c: 'd' }, annotations: { x: 'y' }, generation: 9 };
    next.status!.conditions = [{ type: 'NamesAccepted', status: 'True' }];
    const out = prepareCRDStatusForUpdate(next, old);
    assert.equal(out.spec?.scope, 'Namespaced');
    assert.deepEqual(out.metadata?.labels, { a: 'b' });
    assert.equal(out.metadata?.annotations, undefined);
    assert.equal(out.metadata?.generation, 3);
    assert.deepEqual(out.status?.conditions, [{ type: 'NamesAccepted', status: 'True' }]);
  });
});

describe('specChanged (A-11)', () => {
  it('is false for status and metadata changes', () => {
    const a = prepareCRDForCreate(defaultV1(noxu()));
    const b = structuredClone(a);
    b.metadata!.labels = { x: 'y' };
    b.status!.acceptedNames = b.spec!.names;
    assert.equal(specChanged(b, a), false);
  });

  it('is true for spec changes', () => {
    const a = defaultV1(noxu());
    const b = structuredClone(a);
    b.spec!.versions![0].served = false;
    assert.equal(specChanged(b, a), true);
  });

  it('compares semantically: explicit zero values and representation differences do not count', () => {
    const a = defaultV1(cronTabV1());
    const b = structuredClone(a);
    b.spec!.versions![0].deprecated = false;
    b.spec!.versions![0].additionalPrinterColumns = [];
    b.spec!.preserveUnknownFields = false;
    assert.equal(specChanged(b, a), false);
    assert.equal(specChanged(v1ToV1beta1(a), a), false);
  });
});
