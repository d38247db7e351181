// Shared fixtures of the OpenAPI tests: the CronTab CRD of the Kubernetes docs and the built-ins kapi serves.
import type { CustomResourceDefinitionV1 } from '../../src/api/apiextensions.js';
import type { BuiltinResource } from '../../src/openapi/index.js';

const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

export const BUILTINS: BuiltinResource[] = [
  { group: '', version: 'v1', kind: 'Namespace', resource: 'namespaces', namespaced: false, verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'], subresources: ['status'] },
  { group: '', version: 'v1', kind: 'ConfigMap', resource: 'configmaps', namespaced: true, verbs: ALL_VERBS },
  { group: '', version: 'v1', kind: 'Secret', resource: 'secrets', namespaced: true, verbs: ALL_VERBS },
  { group: '', version: 'v1', kind: 'Pod', resource: 'pods', namespaced: true, verbs: ALL_VERBS, subresources: ['status'] },
  { group: 'apps', version: 'v1', kind: 'Deployment', resource: 'deployments', namespaced: true, verbs: ALL_VERBS, subresources: ['status', 'scale'] },
  { group: 'coordination.k8s.io', version: 'v1', kind: 'Lease', resource: 'leases', namespaced: true, verbs: ALL_VERBS },
  { group: 'events.k8s.io', version: 'v1', kind: 'Event', resource: 'events', namespaced: true, verbs: ALL_VERBS },
  { group: 'apiextensions.k8s.io', version: 'v1', kind: 'CustomResourceDefinition', resource: 'customresourcedefinitions', namespaced: false, verbs: ALL_VERBS, subresources: ['status'] },
  { group: 'example.kapi.dev', version: 'v1', kind: 'Gadget', resource: 'gadgets', namespaced: true, verbs: ['get', 'list'] },
];

export function crontabCrd(overrides: { name?: string; group?: string; kind?: string; plural?: string; extraProps?: number } = {}): CustomResourceDefinitionV1 {
  const group = overrides.group ?? 'stable.example.com';
  const plural = overrides.plural ?? 'crontabs';
  const kind = overrides.kind ?? 'CronTab';
  const extra: Record<string, object> = {};
  for (let i = 0; i < (overrides.extraProps ?? 0); i++) extra[`field${i}`] = { type: i % 2 ? 'integer' : 'string', description: `Field number ${i} of the spec.` };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: overrides.name ?? `${plural}.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List`, shortNames: ['ct'] },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.labelSelector' } },
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description: 'CronTab runs a job on a schedule.',
              properties: {
                spec: {
                  type: 'object',
                  properties: {
                    cronSpec: { type: 'string', description: 'The cron spec defining the interval a CronJob is run' },
                    image: { type: 'string' },
                    replicas: { type: 'integer', minimum: 0, default: 1 },
                    ...extra,
                  },
                },
                status: { type: 'object', properties: { replicas: { type: 'integer' }, labelSelector: { type: 'string' } } },
              },
            },
          },
        },
      ],
    },
    status: {
      conditions: [
        { type: 'NamesAccepted', status: 'True' },
        { type: 'Established', status: 'True' },
      ],
      acceptedNames: { plural, kind },
      storedVersions: ['v1'],
    },
  };
}
