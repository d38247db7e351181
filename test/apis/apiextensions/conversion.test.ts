import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { v1beta1ToV1, v1ToV1beta1, v1ToInternal, internalToV1, toInternal } from '../../../src/apis/apiextensions/conversion.js';
import { defaultV1, defaultV1beta1 } from '../../../src/apis/apiextensions/defaults.js';
import { DESCRIPTORS, canonicalize } from '../../../src/apis/apiextensions/wire-codec.js';
import type { CustomResourceDefinitionV1, CustomResourceDefinitionV1beta1 } from '../../../src/api/apiextensions.js';
import { cronTabV1, cronTabV1beta1, noxu, noxuWithSubresources } from './fixtures.js';

const cronSchema = cronTabV1().spec!.versions![0].schema;

describe('v1beta1ToV1', () => {
  it('converts the docs CronTab CRD, distributing the top-level schema to the version', () => {
    const v1 = v1beta1ToV1(cronTabV1beta1());
    assert.equal(v1.apiVersion, 'apiextensions.k8s.io/v1');
    assert.equal(v1.kind, 'CustomResourceDefinition');
    assert.deepEqual(v1.spec, {
      group: 'stable.example.com',
      names: { plural: 'crontabs', singular: 'crontab', shortNames: ['ct'], kind: 'CronTab', listKind: 'CronTabList' },
      scope: 'Namespaced',
      versions: [{ name: 'v1', served: true, storage: true, schema: cronSchema }],
      conversion: { strategy: 'None' },
    });
  });

  it('equals the v1 CronTab CRD after v1 defaulting', () => {
    const fromBeta = v1beta1ToV1(cronTabV1beta1());
    const direct = canonicalize(defaultV1(cronTabV1()), DESCRIPTORS.crdV1);
    assert.deepEqual(fromBeta, direct);
  });

  it('applies v1beta1 defaults first: versions from `version`, scope, preserveUnknownFields true', () => {
    const v1 = v1beta1ToV1({
      apiVersion: 'apiextensions.k8s.io/v1beta1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'foos.example.com' },
      spec: { group: 'example.com', version: 'v1alpha1', names: { plural: 'foos', kind: 'Foo' } },
    });
    assert.deepEqual(v1.spec, {
      group: 'example.com',
      names: { plural: 'foos', singular: 'foo', kind: 'Foo', listKind: 'FooList' },
      scope: 'Namespaced',
      versions: [{ name: 'v1alpha1', served: true, storage: true }],
      conversion: { strategy: 'None' },
      preserveUnknownFields: true,
    });
    assert.deepEqual(v1.status?.storedVersions, ['v1alpha1']);
  });

  it('moves the webhook client config and review versions under conversion.webhook, defaulting port and versions', () => {
    const v1 = v1beta1ToV1({
      apiVersion: 'apiextensions.k8s.io/v1beta1',
      spec: {
        group: 'example.com',
        versions: [{ name: 'v1', served: true, storage: true }],
        names: { plural: 'foos', kind: 'Foo' },
        conversion: { strategy: 'Webhook', webhookClientConfig: { service: { namespace: 'ns', name: 'svc' }, caBundle: 'Y2E=' } },
      },
    });
    assert.deepEqual(v1.spec?.conversion, {
      strategy: 'Webhook',
      webhook: { clientConfig: { service: { namespace: 'ns', name: 'svc', port: 443 }, caBundle: 'Y2E=' }, conversionReviewVersions: ['v1beta1'] },
    });
  });

  it('renames printer columns JSONPath to jsonPath and copies top-level columns and subresources to every version', () => {
    const v1 = v1beta1ToV1({
      apiVersion: 'apiextensions.k8s.io/v1beta1',
      spec: {
        group: 'example.com',
        versions: [
          { name: 'v1', served: true, storage: true },
          { name: 'v2', served: true, storage: false },
        ],
        names: { plural: 'foos', kind: 'Foo' },
        subresources: { status: {} },
        additionalPrinterColumns: [{ name: 'Age', type: 'date', JSONPath: '.metadata.creationTimestamp' }],
      },
    });
    for (const v of v1.spec!.versions!) {
      assert.deepEqual(v.subresources, { status: {} });
      assert.deepEqual(v.additionalPrinterColumns, [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }]);
    }
  });
});

describe('v1ToV1beta1', () => {
  it('converts the v1 CronTab CRD, hoisting the single version schema to spec.validation', () => {
    const beta = v1ToV1beta1(cronTabV1());
    assert.equal(beta.apiVersion, 'apiextensions.k8s.io/v1beta1');
    assert.deepEqual(beta.spec, {
      group: 'stable.example.com',
      version: 'v1',
      names: { plural: 'crontabs', singular: 'crontab', shortNames: ['ct'], kind: 'CronTab', listKind: 'CronTabList' },
      scope: 'Namespaced',
      validation: cronSchema,
      versions: [{ name: 'v1', served: true, storage: true }],
      conversion: { strategy: 'None' },
      preserveUnknownFields: false,
    });
  });

  it('equals the docs v1beta1 CronTab after v1beta1 defaulting', () => {
    const expected = canonicalize(defaultV1beta1(cronTabV1beta1()), DESCRIPTORS.crdV1beta1);
    assert.deepEqual(v1ToV1beta1(cronTabV1()), expected);
  });

  it('keeps differing per-version values per version and hoists identical ones', () => {
    const beta = v1ToV1beta1(noxuWithSubresources());
    assert.deepEqual(beta.spec?.validation, { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } });
    assert.equal(beta.spec?.subresources, undefined);
    assert.equal(beta.spec?.versions?.[0].subresources?.scale?.labelSelectorPath, '.status.labelSelector');
    assert.equal(beta.spec?.versions?.[1].subresources?.scale?.labelSelectorPath, '.status.anotherLabelSelector');
    assert.equal(beta.spec?.versions?.[0].schema, undefined);
  });

  it('moves conversion.webhook fields to the top of conversion', () => {
    const crd = cronTabV1();
    crd.spec!.conversion = { strategy: 'Webhook', webhook: { clientConfig: { url: 'https://example.com/convert' }, conversionReviewVersions: ['v1', 'v1beta1'] } };
    assert.deepEqual(v1ToV1beta1(crd).spec?.conversion, {
      strategy: 'Webhook',
      webhookClientConfig: { url: 'https://example.com/convert' },
      conversionReviewVersions: ['v1', 'v1beta1'],
    });
  });
});

describe('round trips', () => {
  const v1Cases: [string, () => CustomResourceDefinitionV1][] = [
    ['CronTab', cronTabV1],
    ['F-NOXU', () => noxu()],
    ['F-SUB', noxuWithSubresources],
    [
      'columns, deprecation and webhook',
      () => {
        const crd = noxuWithSubresources();
        crd.spec!.versions![0].additionalPrinterColumns = [{ name: 'Spec', type: 'string', jsonPath: '.spec.x', priority: 1, description: 'd', format: 'byte' }];
        crd.spec!.versions![1].deprecated = true;
        crd.spec!.versions![1].deprecationWarning = 'use v1beta1';
        crd.spec!.conversion = { strategy: 'Webhook', webhook: { clientConfig: { service: { namespace: 'n', name: 's', path: '/c', port: 8443 } }, conversionReviewVersions: ['v1'] } };
        return crd;
      },
    ],
  ];
  for (const [name, make] of v1Cases) {
    it(`v1 → v1beta1 → v1 is lossless: ${name}`, () => {
      const expected = canonicalize(defaultV1(make()), DESCRIPTORS.crdV1);
      assert.deepEqual(v1beta1ToV1(v1ToV1beta1(make())), expected);
    });
  }

  const betaCases: [string, () => CustomResourceDefinitionV1beta1][] = [
    ['CronTab', cronTabV1beta1],
    [
      'per-version schemas',
      () => ({
        apiVersion: 'apiextensions.k8s.io/v1beta1',
        kind: 'CustomResourceDefinition',
        metadata: { name: 'foos.example.com', labels: { a: 'b' } },
        spec: {
          group: 'example.com',
          names: { plural: 'foos', kind: 'Foo' },
          versions: [
            { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', description: 'one' } } },
            { name: 'v2', served: false, storage: false, schema: { openAPIV3Schema: { type: 'object', description: 'two' } } },
          ],
          additionalPrinterColumns: [{ name: 'A', type: 'string', JSONPath: '.a' }],
        },
      }),
    ],
  ];
  for (const [name, make] of betaCases) {
    it(`v1beta1 → v1 → v1beta1 is lossless: ${name}`, () => {
      const expected = canonicalize(defaultV1beta1(make()), DESCRIPTORS.crdV1beta1);
      assert.deepEqual(v1ToV1beta1(v1beta1ToV1(make())), expected);
    });
  }

  it('does not mutate its input', () => {
    const input = cronTabV1beta1();
    const copy = structuredClone(input);
    v1beta1ToV1(input);
    v1ToV1beta1(cronTabV1());
    assert.deepEqual(input, copy);
  });
});

describe('internal form', () => {
  it('hoists identical per-version values and sets version to versions[0]', () => {
    const internal = v1ToInternal(noxu());
    assert.equal(internal.spec.version, 'v1beta1');
    assert.deepEqual(internal.spec.validation, noxu().spec!.versions![0].schema);
    assert.equal(internal.spec.versions?.[0].schema, undefined);
    assert.equal(internal.spec.preserveUnknownFields, false);
  });

  it('does not hoist when one version lacks the value', () => {
    const crd = noxuWithSubresources();
    delete crd.spec!.versions![1].schema;
    const internal = v1ToInternal(crd);
    assert.equal(internal.spec.validation, undefined);
    assert.ok(internal.spec.versions?.[0].schema);
  });

  it('treats absent and empty lists alike when comparing versions', () => {
    const crd = noxuWithSubresources();
    crd.spec!.versions![0].additionalPrinterColumns = [];
    const internal = v1ToInternal(crd);
    assert.equal(internal.spec.additionalPrinterColumns, undefined);
  });

  it('detects the wire version from apiVersion, else from the request version', () => {
    const beta = cronTabV1beta1();
    assert.ok(toInternal(beta).spec.validation);
    delete beta.apiVersion;
    assert.ok(toInternal(beta, 'v1beta1').spec.validation);
  });

  it('internalToV1 drops unknown fields and emits Go struct order', () => {
    const crd = noxu() as CustomResourceDefinitionV1 & { extra?: unknown };
    (crd.spec as Record<string, unknown>).bogus = 1;
    crd.spec!.versions![0] = { storage: true, served: true, name: 'v1beta1', schema: crd.spec!.versions![0].schema, deprecated: false } as never;
    const out = internalToV1(v1ToInternal(crd));
    assert.deepEqual(Object.keys(out), ['kind', 'apiVersion', 'metadata', 'spec', 'status']);
    assert.deepEqual(Object.keys(out.spec!), ['group', 'names', 'scope', 'versions']);
    assert.deepEqual(Object.keys(out.spec!.versions![0]), ['name', 'served', 'storage', 'schema']);
  });
});
