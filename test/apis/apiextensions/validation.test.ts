import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { errors } from '../../../src/machinery/status.js';
import { validateCRD, validateCRDStatusUpdate, validateCRDUpdate, validateStoredVersions } from '../../../src/apis/apiextensions/validation.js';
import { defaultV1, defaultV1beta1, prepareCRDForCreate, prepareCRDForUpdate } from '../../../src/apis/apiextensions/defaults.js';
import type { CustomResourceDefinitionV1, CustomResourceDefinitionV1beta1 } from '../../../src/api/apiextensions.js';
import { cronTabV1beta1, noxu, noxuWithSubresources, texts } from './fixtures.js';

const CRD_GK = { group: 'apiextensions.k8s.io', resource: 'CustomResourceDefinition' };
const DNS1035 =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const DNS1123_SUBDOMAIN =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

/** A v1 create as the server sees it: defaulted and prepared. */
function create(crd: CustomResourceDefinitionV1): string[] {
  return texts(validateCRD(prepareCRDForCreate(defaultV1(crd)), 'v1'));
}

function createBeta(crd: CustomResourceDefinitionV1beta1): string[] {
  return texts(validateCRD(prepareCRDForCreate(defaultV1beta1(crd)), 'v1beta1'));
}

function update(next: CustomResourceDefinitionV1, old: CustomResourceDefinitionV1): string[] {
  return texts(validateCRDUpdate(prepareCRDForUpdate(defaultV1(next), old), old, 'v1'));
}

const stored = (crd: CustomResourceDefinitionV1): CustomResourceDefinitionV1 => prepareCRDForCreate(defaultV1(crd));

function established(crd: CustomResourceDefinitionV1): CustomResourceDefinitionV1 {
  const out = stored(crd);
  out.status!.conditions = [{ type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' }];
  return out;
}

function mutate(f: (crd: CustomResourceDefinitionV1) => void, base = noxu()): CustomResourceDefinitionV1 {
  f(base);
  return base;
}

describe('valid CRDs', () => {
  it('accepts F-NOXU in both scopes', () => {
    assert.deepEqual(create(noxu()), []);
    assert.deepEqual(create(noxu('Cluster')), []);
  });

  it('accepts F-SUB (status and scale subresources, two versions)', () => {
    assert.deepEqual(create(noxuWithSubresources()), []);
  });

  it('accepts the docs CronTab CRD through v1beta1', () => {
    assert.deepEqual(createBeta(cronTabV1beta1()), []);
  });
});

describe('metadata.name (A-03)', () => {
  it('must be <plural>.<group>, with the full 422 message', () => {
    const crd = mutate((c) => (c.metadata!.name = 'foo.mygroup.example.com'));
    const errs = validateCRD(prepareCRDForCreate(defaultV1(crd)), 'v1');
    assert.equal(
      errors.invalid(CRD_GK, 'foo.mygroup.example.com', errs).message,
      'CustomResourceDefinition.apiextensions.k8s.io "foo.mygroup.example.com" is invalid: metadata.name: Invalid value: "foo.mygroup.example.com": must be spec.names.plural+"."+spec.group',
    );
  });

  it('is required', () => {
    assert.deepEqual(create(mutate((c) => (c.metadata = {}))), ['metadata.name: Required value: name or generateName is required']);
  });

  it('checks generateName with the same function, and forbids a namespace', () => {
    assert.deepEqual(
      create(
        mutate((c) => {
          c.metadata!.generateName = 'noxus-';
          c.metadata!.namespace = 'default';
        }),
      ),
      ['metadata.generateName: Invalid value: "noxus-": must be spec.names.plural+"."+spec.group', 'metadata.namespace: Forbidden: not allowed on this type'],
    );
  });

  it('reports DNS errors before the naming rule', () => {
    assert.deepEqual(create(mutate((c) => (c.metadata!.name = 'Noxus.mygroup.example.com'))), [
      `metadata.name: Invalid value: "Noxus.mygroup.example.com": ${DNS1123_SUBDOMAIN}`,
      'metadata.name: Invalid value: "Noxus.mygroup.example.com": must be spec.names.plural+"."+spec.group',
    ]);
  });

  it('runs the generic ObjectMeta hook after the name checks', () => {
    const errs = validateCRD(stored(noxu()), 'v1', { validateObjectMeta: (_m, path) => [{ type: 'FieldValueInvalid', field: `${path}.labels`, badValue: 'x', detail: 'hook' }] });
    assert.deepEqual(texts(errs), ['metadata.labels: Invalid value: "x": hook']);
  });
});

describe('spec.group (B-01)', () => {
  const withGroup = (g: string): CustomResourceDefinitionV1 =>
    mutate((c) => {
      c.spec!.group = g;
      c.metadata!.name = `noxus.${g}`;
    });

  it('is required', () => {
    assert.ok(create(withGroup('')).includes('spec.group: Required value'));
  });

  it('must be a DNS-1123 subdomain', () => {
    assert.deepEqual(create(withGroup('My.Group')).filter((t) => t.startsWith('spec.')), [`spec.group: Invalid value: "My.Group": ${DNS1123_SUBDOMAIN}`]);
  });

  it('needs at least one dot', () => {
    assert.deepEqual(create(withGroup('mygroup')), ['spec.group: Invalid value: "mygroup": should be a domain with at least one dot']);
  });
});

describe('spec.scope (B-02)', () => {
  it('is required', () => {
    assert.deepEqual(create(mutate((c) => delete c.spec!.scope)), ['spec.scope: Required value']);
  });

  it('must be Cluster or Namespaced', () => {
    assert.deepEqual(create(mutate((c) => (c.spec!.scope = 'Global'))), ['spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"']);
  });
});

describe('spec.names (B-03)', () => {
  it('requires plural and kind (singular is defaulted; listKind only from a kind)', () => {
    const crd = mutate((c) => {
      c.spec!.names = { singular: 'noxu' };
      c.metadata!.name = '.mygroup.example.com';
    });
    assert.deepEqual(
      create(crd).filter((t) => t.startsWith('spec.')),
      ['spec.names.plural: Required value', 'spec.names.kind: Required value', 'spec.names.listKind: Required value'],
    );
  });

  it('without v1 defaulting, singular and listKind are required too', () => {
    const crd = prepareCRDForCreate(mutate((c) => (c.spec!.names = { plural: 'noxus', kind: 'Noxu' })));
    assert.deepEqual(texts(validateCRD(crd, 'v1')), ['spec.names.singular: Required value', 'spec.names.listKind: Required value']);
  });

  it('plural, singular, shortNames and categories must be DNS-1035 labels', () => {
    const crd = mutate((c) => {
      c.metadata!.name = 'Noxus.mygroup.example.com';
      c.spec!.names = { plural: 'Noxus', singular: 'a_b', kind: 'Noxu', shortNames: ['ok', '9lives'], categories: ['all', 'ALL'] };
    });
    assert.deepEqual(
      create(crd).filter((t) => t.startsWith('spec.')),
      [
        `spec.names.plural: Invalid value: "Noxus": ${DNS1035}`,
        `spec.names.singular: Invalid value: "a_b": ${DNS1035}`,
        `spec.names.shortNames[1]: Invalid value: "9lives": ${DNS1035}`,
        `spec.names.categories[1]: Invalid value: "ALL": ${DNS1035}`,
      ],
    );
  });

  it('kind and listKind may have mixed case but must otherwise be DNS-1035 labels', () => {
    const ok = mutate((c) => (c.spec!.names!.kind = 'E2e-test-crd-publish-openapi-1234-crd'));
    assert.deepEqual(create(ok), []);
    const bad = mutate((c) => {
      c.spec!.names!.kind = 'Wish_Noxu';
      c.spec!.names!.listKind = '1List';
    });
    assert.deepEqual(create(bad), [
      `spec.names.kind: Invalid value: "Wish_Noxu": may have mixed case, but should otherwise match: ${DNS1035}`,
      `spec.names.listKind: Invalid value: "1List": may have mixed case, but should otherwise match: ${DNS1035}`,
    ]);
  });

  it('kind and listKind may not be the same', () => {
    const crd = mutate((c) => (c.spec!.names!.listKind = 'WishIHadChosenNoxu'));
    assert.deepEqual(create(crd), ['spec.names.listKind: Invalid value: "WishIHadChosenNoxu": kind and listKind may not be the same']);
  });

  it('status.acceptedNames are validated like names', () => {
    const crd = stored(noxu());
    crd.status!.acceptedNames = { plural: 'A', kind: 'K' };
    assert.deepEqual(texts(validateCRD(crd, 'v1')), [`status.acceptedNames.plural: Invalid value: "A": ${DNS1035}`]);
  });
});

describe('spec.versions (B-04)', () => {
  const schema = { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } };

  it('names must be DNS-1035 labels (the internal spec.version, copied from versions[0], too)', () => {
    const crd = mutate((c) => (c.spec!.versions![0].name = 'V1'));
    assert.deepEqual(create(crd), [`spec.versions[0].name: Invalid value: "V1": ${DNS1035}`, `spec.version: Invalid value: "V1": ${DNS1035}`]);
  });

  it('must be unique, rendering the internal versions as the bad value', () => {
    const crd = mutate((c) => {
      c.spec!.versions = [
        { name: 'v1', served: true, storage: true, schema: structuredClone(schema) },
        { name: 'v1', served: true, storage: false, schema: structuredClone(schema) },
      ];
    });
    assert.deepEqual(create(crd), [
      'spec.versions: Invalid value: [{"Name":"v1","Served":true,"Storage":true,"Deprecated":false,"DeprecationWarning":null,"Schema":null,"Subresources":null,"AdditionalPrinterColumns":null,"SelectableFields":null},{"Name":"v1","Served":true,"Storage":false,"Deprecated":false,"DeprecationWarning":null,"Schema":null,"Subresources":null,"AdditionalPrinterColumns":null,"SelectableFields":null}]: must contain unique version names',
    ]);
  });

  it('need exactly one storage version', () => {
    const none = create(mutate((c) => (c.spec!.versions![0].storage = false)));
    assert.deepEqual(none, [
      'spec.versions: Invalid value: [{"Name":"v1beta1","Served":true,"Storage":false,"Deprecated":false,"DeprecationWarning":null,"Schema":null,"Subresources":null,"AdditionalPrinterColumns":null,"SelectableFields":null}]: must have exactly one version marked as storage version',
      'status.storedVersions: Invalid value: null: must have at least one stored version',
    ]);
    const two = create(
      mutate((c) => {
        c.spec!.versions = [
          { name: 'v1', served: true, storage: true, schema: structuredClone(schema) },
          { name: 'v2', served: true, storage: true, schema: structuredClone(schema) },
        ];
      }),
    );
    assert.equal(two.length, 2);
    assert.match(two[0], /^spec\.versions: Invalid value: \[.*\]: must have exactly one version marked as storage version$/);
    assert.equal(two[1], 'status.storedVersions: Invalid value: ["v1"]: must have the storage version v2');
  });

  it('v1beta1: `version` must match the first version', () => {
    const crd = cronTabV1beta1();
    crd.spec!.version = 'v2';
    assert.deepEqual(createBeta(crd), ['spec.version: Invalid value: "v2": must match the first version in spec.versions']);
  });
});

describe('schemas (B-05, B-06)', () => {
  it('B-05: v1 requires a schema per version', () => {
    const crd = noxuWithSubresources();
    delete crd.spec!.versions![1].schema;
    assert.deepEqual(create(crd), ['spec.versions[1].schema.openAPIV3Schema: Required value: schemas are required']);
  });

  it('v1beta1 does not require schemas when pruning is off', () => {
    const crd = cronTabV1beta1();
    delete crd.spec!.validation;
    delete crd.spec!.preserveUnknownFields;
    assert.deepEqual(createBeta(crd), []);
  });

  it('v1beta1 with pruning needs schemas for served versions', () => {
    const crd = cronTabV1beta1();
    delete crd.spec!.validation;
    assert.deepEqual(createBeta(crd), ['spec.versions[0].schema.openAPIV3Schema: Required value: because otherwise all fields are pruned']);
  });

  it('B-06: v1 rejects preserveUnknownFields: true', () => {
    const crd = mutate((c) => (c.spec!.preserveUnknownFields = true));
    assert.deepEqual(create(crd), [
      'spec.preserveUnknownFields: Invalid value: true: cannot set to true, set x-preserve-unknown-fields to true in spec.versions[*].schema instead',
    ]);
  });

  it('B-06: v1beta1 allows it, and a v1 update may keep a pre-existing true', () => {
    const beta = cronTabV1beta1();
    beta.spec!.preserveUnknownFields = true;
    assert.deepEqual(createBeta(beta), []);
    const old = stored(noxu());
    old.spec!.preserveUnknownFields = true;
    const next = structuredClone(old);
    next.spec!.versions![0].served = false;
    assert.deepEqual(texts(validateCRDUpdate(next, old, 'v1')), []);
  });

  it('B-06: flipping false to true in a v1 update is rejected', () => {
    const old = stored(noxu());
    const next = mutate((c) => (c.spec!.preserveUnknownFields = true));
    assert.deepEqual(update(next, old), [
      'spec.preserveUnknownFields: Invalid value: true: cannot set to true, set x-preserve-unknown-fields to true in spec.versions[*].schema instead',
    ]);
  });

  it('defaults need preserveUnknownFields false and v1', () => {
    const beta = cronTabV1beta1();
    beta.spec!.validation!.openAPIV3Schema!.properties!.spec.default = {};
    assert.deepEqual(createBeta(beta), [
      'spec.validation.openAPIV3Schema.properties[spec].default: Forbidden: must not be set (cannot set default values in apiextensions.k8s.io/v1beta1 CRDs, must use apiextensions.k8s.io/v1)',
    ]);
    const v1 = mutate((c) => {
      c.spec!.versions![0].schema = { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', default: {} } } } };
      c.spec!.preserveUnknownFields = true;
    });
    assert.deepEqual(create(v1), [
      'spec.preserveUnknownFields: Invalid value: true: must be false in order to use defaults in the schema',
      'spec.preserveUnknownFields: Invalid value: true: cannot set to true, set x-preserve-unknown-fields to true in spec.versions[*].schema instead',
    ]);
  });
});

describe('path quirk: identical per-version values are reported at the top level', () => {
  const badColumn = { name: 'Bad', type: 'long', jsonPath: '.spec.x' };

  it('identical columns → spec.additionalPrinterColumns', () => {
    const crd = noxuWithSubresources();
    for (const v of crd.spec!.versions!) v.additionalPrinterColumns = [structuredClone(badColumn)];
    assert.deepEqual(create(crd), ['spec.additionalPrinterColumns[0].type: Invalid value: "long": must be one of boolean,date,integer,number,string']);
  });

  it('differing columns → spec.versions[i].additionalPrinterColumns', () => {
    const crd = noxuWithSubresources();
    crd.spec!.versions![1].additionalPrinterColumns = [structuredClone(badColumn)];
    assert.deepEqual(create(crd), ['spec.versions[1].additionalPrinterColumns[0].type: Invalid value: "long": must be one of boolean,date,integer,number,string']);
  });

  it('identical subresources → spec.subresources', () => {
    const crd = noxuWithSubresources();
    for (const v of crd.spec!.versions!) v.subresources = { scale: { specReplicasPath: 'foo,bar', statusReplicasPath: '.status.replicas' } };
    assert.deepEqual(create(crd), ['spec.subresources.scale.specReplicasPath: Invalid value: "foo,bar": must be a simple json path starting with .']);
  });

  it('v1beta1 may not set identical per-version schemas, nor mix top-level and per-version', () => {
    const crd = cronTabV1beta1();
    const schema = crd.spec!.validation!;
    delete crd.spec!.validation;
    crd.spec!.versions = [
      { name: 'v1', served: true, storage: true, schema: structuredClone(schema) },
      { name: 'v2', served: true, storage: false, schema: structuredClone(schema) },
    ];
    const errs = createBeta(crd);
    assert.equal(errs.length, 1);
    assert.match(errs[0], /^spec\.versions: Invalid value: \[.*\]: per-version schemas may not all be set to identical values \(top-level validation should be used instead\)$/);

    const mixed = cronTabV1beta1();
    mixed.spec!.versions![0].schema = structuredClone(schema);
    assert.ok(createBeta(mixed).includes('spec.validation: Forbidden: top-level and per-version schemas are mutually exclusive'));
  });
});

describe('scale subresource (B-09)', () => {
  function withScale(scale: Record<string, string>, version = 0): CustomResourceDefinitionV1 {
    const crd = noxuWithSubresources();
    crd.spec!.versions![version].subresources = { status: {}, scale };
    return crd;
  }

  it('rejects a path not starting with a dot', () => {
    assert.deepEqual(create(withScale({ specReplicasPath: 'foo,bar', statusReplicasPath: '.status.replicas' })), [
      'spec.versions[0].subresources.scale.specReplicasPath: Invalid value: "foo,bar": must be a simple json path starting with .',
    ]);
  });

  it('requires paths under .spec and .status', () => {
    assert.deepEqual(create(withScale({ specReplicasPath: '.status.x', statusReplicasPath: '.spec.y', labelSelectorPath: '.metadata.labels' })), [
      'spec.versions[0].subresources.scale.specReplicasPath: Invalid value: ".status.x": should be a json path under .spec',
      'spec.versions[0].subresources.scale.statusReplicasPath: Invalid value: ".spec.y": should be a json path under .status',
      'spec.versions[0].subresources.scale.labelSelectorPath: Invalid value: ".metadata.labels": should be a json path under either .spec or .status',
    ]);
  });

  it('requires spec and status replica paths; accepts .spec.replicas[0]', () => {
    assert.deepEqual(create(withScale({})), [
      'spec.versions[0].subresources.scale.specReplicasPath: Required value',
      'spec.versions[0].subresources.scale.statusReplicasPath: Required value',
    ]);
    assert.deepEqual(create(withScale({ specReplicasPath: '.spec.replicas[0]', statusReplicasPath: '.status.replicas' })), []);
  });
});

describe('printer columns (B-10)', () => {
  it('reports name, type, format and JSONPath (internal spelling)', () => {
    const crd = mutate((c) => {
      c.spec!.versions![0].additionalPrinterColumns = [{ format: 'uuid' }, { name: 'X', type: 'integer', jsonPath: 'spec.x' }];
    });
    assert.deepEqual(create(crd), [
      'spec.additionalPrinterColumns[0].name: Required value',
      'spec.additionalPrinterColumns[0].type: Required value: must be one of boolean,date,integer,number,string',
      'spec.additionalPrinterColumns[0].format: Invalid value: "uuid": must be one of byte,date,date-time,double,float,int32,int64,password',
      'spec.additionalPrinterColumns[0].JSONPath: Required value',
      'spec.additionalPrinterColumns[1].JSONPath: Invalid value: "spec.x": must be a simple json path starting with .',
    ]);
  });
});

describe('conversion (B-11)', () => {
  const withConversion = (conversion: NonNullable<CustomResourceDefinitionV1['spec']>['conversion']): CustomResourceDefinitionV1 =>
    mutate((c) => (c.spec!.conversion = conversion));

  it('Webhook requires a client config and review versions', () => {
    assert.deepEqual(create(withConversion({ strategy: 'Webhook' })), [
      'spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook',
      'spec.conversion.conversionReviewVersions: Required value',
    ]);
  });

  it('exactly one of url or service', () => {
    assert.deepEqual(create(withConversion({ strategy: 'Webhook', webhook: { clientConfig: {}, conversionReviewVersions: ['v1'] } })), [
      'spec.conversion.webhookClientConfig: Required value: exactly one of url or service is required',
    ]);
  });

  it('review versions must include v1 or v1beta1, without duplicates', () => {
    assert.deepEqual(create(withConversion({ strategy: 'Webhook', webhook: { clientConfig: { url: 'https://h/c' }, conversionReviewVersions: ['v2', 'v2'] } })), [
      'spec.conversion.conversionReviewVersions[1]: Invalid value: "v2": duplicate version',
      'spec.conversion.conversionReviewVersions: Invalid value: ["v2","v2"]: must include at least one of v1, v1beta1',
    ]);
  });

  it('webhook fields are forbidden with strategy None', () => {
    assert.deepEqual(create(withConversion({ strategy: 'None', webhook: { clientConfig: { url: 'https://h/c' }, conversionReviewVersions: ['v1'] } })), [
      'spec.conversion.webhookClientConfig: Forbidden: should not be set when strategy is not set to Webhook',
      'spec.conversion.conversionReviewVersions: Forbidden: should not be set when strategy is not set to Webhook',
    ]);
  });

  it('strategy must be None or Webhook', () => {
    assert.deepEqual(create(withConversion({ strategy: 'Magic' })), [
      'spec.conversion.strategy: Unsupported value: "Magic": supported values: "None", "Webhook"',
    ]);
  });

  it('Webhook needs preserveUnknownFields false', () => {
    const beta = cronTabV1beta1();
    beta.spec!.preserveUnknownFields = true;
    beta.spec!.conversion = { strategy: 'Webhook', webhookClientConfig: { url: 'https://h/c' } };
    assert.deepEqual(createBeta(beta), ['spec.conversion.strategy: Invalid value: "Webhook": must be None if spec.preserveUnknownFields is true']);
  });

  it('validates the service reference', () => {
    const crd = withConversion({
      strategy: 'Webhook',
      webhook: { clientConfig: { service: { namespace: '', name: '', path: 'a//B', port: 70000 } }, conversionReviewVersions: ['v1'] },
    });
    assert.deepEqual(create(crd), [
      'spec.conversion.webhookClientConfig.service.name: Required value: service name is required',
      'spec.conversion.webhookClientConfig.service.namespace: Required value: service namespace is required',
      'spec.conversion.webhookClientConfig.service.port: Invalid value: 70000: port is not valid: must be between 1 and 65535, inclusive',
      `spec.conversion.webhookClientConfig.service.path: Invalid value: "a//B": must start with a '/'`,
      'spec.conversion.webhookClientConfig.service.path: Invalid value: "a//B": segment[0] may not be empty',
      'spec.conversion.webhookClientConfig.service.path: Invalid value: "a//B": segment[1] may not be empty',
      `spec.conversion.webhookClientConfig.service.path: Invalid value: "a//B": segment[2]: ${DNS1123_SUBDOMAIN}`,
    ]);
  });
});

describe('deprecationWarning (B-13)', () => {
  const withWarning = (deprecated: boolean, warning: string): CustomResourceDefinitionV1 =>
    mutate((c) => Object.assign(c.spec!.versions![0], { deprecated, deprecationWarning: warning }));

  it('only for deprecated versions', () => {
    assert.deepEqual(create(withWarning(false, 'x')), ['spec.versions[0].deprecationWarning: Invalid value: "x": can only be set for deprecated versions']);
  });

  it('at most 256 bytes, non-empty, printable', () => {
    assert.deepEqual(create(withWarning(true, 'é'.repeat(129))), [`spec.versions[0].deprecationWarning: Invalid value: "${'é'.repeat(129)}": must be <= 256 characters long`]);
    assert.deepEqual(create(withWarning(true, '')), ['spec.versions[0].deprecationWarning: Invalid value: "": must not be an empty string']);
    assert.deepEqual(create(withWarning(true, 'aé\tb')), [
      'spec.versions[0].deprecationWarning: Invalid value: "aé\\tb": must only contain printable UTF-8 characters; non-printable character found at index 3',
    ]);
    assert.deepEqual(create(withWarning(true, 'use v2 instead!')), []);
  });
});

describe('updates: immutable fields (A-08)', () => {
  it('group and plural are always immutable', () => {
    const old = stored(noxu());
    const next = mutate((c) => {
      c.spec!.group = 'othergroup.example.com';
      c.spec!.names!.plural = 'noxen';
    });
    assert.deepEqual(update(next, old).filter((t) => t.includes('immutable')), [
      'spec.group: Invalid value: "othergroup.example.com": field is immutable',
      'spec.names.plural: Invalid value: "noxen": field is immutable',
    ]);
  });

  it('scope and kind only once established', () => {
    const next = mutate((c) => {
      c.spec!.scope = 'Cluster';
      c.spec!.names!.kind = 'Noxu';
    });
    assert.deepEqual(update(next, stored(noxu())), []);
    assert.deepEqual(update(next, established(noxu())), [
      'spec.scope: Invalid value: "Cluster": field is immutable',
      'spec.names.kind: Invalid value: "Noxu": field is immutable',
    ]);
  });

  it('runs the ObjectMeta update hook first', () => {
    const old = stored(noxu());
    const errs = validateCRDUpdate(old, old, 'v1', { validateObjectMetaUpdate: (_n, _o, p) => [{ type: 'FieldValueInvalid', field: `${p}.resourceVersion`, badValue: '', detail: 'must be specified for an update' }] });
    assert.deepEqual(texts(errs), ['metadata.resourceVersion: Invalid value: "": must be specified for an update']);
  });

  it('does not tighten checks on persisted data: an unrecognized review version may stay', () => {
    const old = stored(noxu());
    old.spec!.conversion = { strategy: 'Webhook', webhook: { clientConfig: { url: 'https://h/c' }, conversionReviewVersions: ['v9'] } };
    const next = structuredClone(old);
    next.spec!.versions![0].served = false;
    assert.deepEqual(texts(validateCRDUpdate(next, old, 'v1')), []);
  });
});

describe('stored versions (A-10)', () => {
  it('removing a stored version from spec.versions is rejected', () => {
    const old = stored(noxuWithSubresources());
    old.status!.storedVersions = ['v1beta1', 'v1'];
    const next = noxuWithSubresources();
    next.spec!.versions = next.spec!.versions!.slice(0, 1);
    assert.deepEqual(update(next, old), ['status.storedVersions[1]: Invalid value: "v1": must appear in spec.versions']);
  });

  it('must contain the storage version and at least one entry', () => {
    const versions = [{ name: 'v1', storage: true }, { name: 'v2' }];
    assert.deepEqual(texts(validateStoredVersions(['v2'], versions)), ['status.storedVersions: Invalid value: ["v2"]: must have the storage version v1']);
    assert.deepEqual(texts(validateStoredVersions([], versions)), ['status.storedVersions: Invalid value: []: must have at least one stored version']);
    assert.deepEqual(texts(validateStoredVersions(['v3', 'v1', 'v0'], versions)), [
      'status.storedVersions[0]: Invalid value: "v3": must appear in spec.versions',
      'status.storedVersions[2]: Invalid value: "v0": must appear in spec.versions',
    ]);
  });

  it('are not checked by status updates (upstream)', () => {
    const old = stored(noxu());
    const next = structuredClone(old);
    next.status!.storedVersions = [];
    assert.deepEqual(texts(validateCRDStatusUpdate(next, old)), []);
    next.status!.acceptedNames = { plural: 'X', kind: 'K' };
    assert.deepEqual(texts(validateCRDStatusUpdate(next, old)), [`status.acceptedNames.plural: Invalid value: "X": ${DNS1035}`]);
  });
});

describe('API approval (A-16)', () => {
  const protectedCRD = (annotation?: string): CustomResourceDefinitionV1 =>
    mutate((c) => {
      c.spec!.group = 'mygroup.k8s.io';
      c.metadata = { name: 'noxus.mygroup.k8s.io', annotations: annotation === undefined ? undefined : { 'api-approved.kubernetes.io': annotation } };
    });

  it('requires the annotation on v1 creates for protected groups', () => {
    assert.deepEqual(create(protectedCRD()), [
      'metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval annotation "api-approved.kubernetes.io", see https://github.com/kubernetes/enhancements/pull/1111',
    ]);
  });

  it('requires a URL or a reason starting with "unapproved"', () => {
    assert.deepEqual(create(protectedCRD('yes please')), [
      'metadata.annotations[api-approved.kubernetes.io]: Invalid value: "yes please": protected groups must have approval annotation "api-approved.kubernetes.io" with either a URL or a reason starting with "unapproved", see https://github.com/kubernetes/enhancements/pull/1111',
    ]);
    assert.deepEqual(create(protectedCRD('https://github.com/kubernetes/kubernetes/pull/78458')), []);
    assert.deepEqual(create(protectedCRD('unapproved, test-only')), []);
  });

  it('does not apply to v1beta1, other groups, or unchanged approval state on update', () => {
    const beta = cronTabV1beta1();
    beta.spec!.group = 'stable.k8s.io';
    beta.metadata!.name = 'crontabs.stable.k8s.io';
    assert.deepEqual(createBeta(beta), []);
    assert.deepEqual(create(noxu()), []);
    const old = stored(protectedCRD());
    assert.deepEqual(update(protectedCRD(), old), []);
  });
});
