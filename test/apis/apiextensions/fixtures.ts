/**
 * CRD fixtures of the behaviour catalog (section 0) and of the Kubernetes docs'
 * CronTab example, as plain JSON, plus small helpers for asserting error texts.
 */
import { fieldErrorString, type FieldError } from '../../../src/machinery/field-errors.js';
import type { CustomResourceDefinitionV1, CustomResourceDefinitionV1beta1 } from '../../../src/api/apiextensions.js';

export const texts = (errs: FieldError[]): string[] => errs.map(fieldErrorString);

/** F-NOXU: fixtures.NewNoxuV1CustomResourceDefinition(scope). */
export function noxu(scope: 'Namespaced' | 'Cluster' = 'Namespaced'): CustomResourceDefinitionV1 {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'noxus.mygroup.example.com' },
    spec: {
      group: 'mygroup.example.com',
      versions: [
        {
          name: 'v1beta1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
      names: {
        plural: 'noxus',
        singular: 'nonenglishnoxu',
        kind: 'WishIHadChosenNoxu',
        shortNames: ['foo', 'bar', 'abc', 'def'],
        listKind: 'NoxuItemList',
        categories: ['all'],
      },
      scope,
    },
  };
}

/** F-NOXU2: same group and short names as F-NOXU. */
export function noxu2(): CustomResourceDefinitionV1 {
  const crd = noxu();
  crd.metadata = { name: 'noxus2.mygroup.example.com' };
  crd.spec!.versions![0].name = 'v1alpha1';
  crd.spec!.names = {
    plural: 'noxus2',
    singular: 'nonenglishnoxu2',
    kind: 'WishIHadChosenNoxu2',
    shortNames: ['foo', 'bar', 'abc', 'def'],
    listKind: 'Noxu2ItemList',
    categories: ['all'],
  };
  return crd;
}

const cronTabSchema = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        cronSpec: { type: 'string' },
        image: { type: 'string' },
        replicas: { type: 'integer' },
      },
    },
  },
};

/** The docs' CronTab CRD in apiextensions.k8s.io/v1beta1 (seed 004). */
export function cronTabV1beta1(): CustomResourceDefinitionV1beta1 {
  return {
    apiVersion: 'apiextensions.k8s.io/v1beta1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'crontabs.stable.example.com' },
    spec: {
      group: 'stable.example.com',
      versions: [{ name: 'v1', served: true, storage: true }],
      scope: 'Namespaced',
      names: { plural: 'crontabs', singular: 'crontab', kind: 'CronTab', shortNames: ['ct'] },
      preserveUnknownFields: false,
      validation: { openAPIV3Schema: structuredClone(cronTabSchema) },
    },
  };
}

/** The same CronTab CRD in apiextensions.k8s.io/v1. */
export function cronTabV1(): CustomResourceDefinitionV1 {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'crontabs.stable.example.com' },
    spec: {
      group: 'stable.example.com',
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: structuredClone(cronTabSchema) } }],
      scope: 'Namespaced',
      names: { plural: 'crontabs', singular: 'crontab', kind: 'CronTab', shortNames: ['ct'] },
    },
  };
}

/** F-SUB-like: two versions with status and scale subresources. */
export function noxuWithSubresources(): CustomResourceDefinitionV1 {
  const crd = noxu();
  const schema = { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } };
  crd.spec!.versions = [
    {
      name: 'v1beta1',
      served: true,
      storage: true,
      schema: structuredClone(schema),
      subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.labelSelector' } },
    },
    {
      name: 'v1',
      served: true,
      storage: false,
      schema: structuredClone(schema),
      subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.anotherLabelSelector' } },
    },
  ];
  return crd;
}
