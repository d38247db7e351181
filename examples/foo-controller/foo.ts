/**
 * The seed's flow, in TypeScript: a `Foo` (foo.example.com/v1) whose controller keeps one ConfigMap per
 * replica, owned by the Foo (garbage collected with it), reports a Ready condition, and holds a finalizer
 * that cleans up an external resource (here a registry the test can look into) before the Foo goes.
 *
 * The resource is defined once (schema → TypeScript type → CRD); the controller only ever gets a key and
 * reads what is there now (level-based).
 */
import {
  defineResource,
  fieldError,
  handleFinalizer,
  setControllerReference,
  setStatusCondition,
  StatusError,
  t,
  version,
  type Client,
  type Condition,
  type ControllerOptions,
  type EventRecorder,
  type KubeObject,
  type TypeOf,
} from 'kapi/sdk';

export const v1 = version('v1', {
  spec: t.object({
    replicas: t.integer({ minimum: 0, default: 1, description: 'How many ConfigMaps to keep.' }),
    message: t.optional(t.string({ maxLength: 256, description: 'Written into every ConfigMap.' })),
  }),
  status: t.object({
    readyReplicas: t.optional(t.integer()),
    conditions: t.optional(t.conditions()),
  }),
  printerColumns: [
    { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
    { name: 'Ready', type: 'integer', jsonPath: '.status.readyReplicas' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
});

export type Foo = TypeOf<typeof v1>;

export const Foo = defineResource<Foo>({
  group: 'foo.example.com',
  kind: 'Foo',
  shortNames: ['fo'],
  versions: [v1],
  strategy: {
    // Validate: static checks the schema cannot say.
    validate: (foo) => (foo.spec.replicas > 100 ? [fieldError.invalid('spec.replicas', foo.spec.replicas, 'must be no more than 100')] : []),
  },
});

export const FINALIZER = 'foo.example.com/external-cleanup';
const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps' };

/** Where the controller keeps the "external" resource of each Foo (a cloud resource, in real life). */
export interface ExternalResources {
  ensure(key: string): Promise<void> | void;
  remove(key: string): Promise<void> | void;
}

/** The Foo controller: for Foos, owning ConfigMaps. */
export function fooController(client: Client, external: ExternalResources, events?: EventRecorder): ControllerOptions {
  const foos = client.resource<Foo>(Foo);
  const configMaps = client.resource<KubeObject & { data?: Record<string, string> }>(CONFIGMAPS);
  return {
    name: 'foo',
    for: Foo,
    owns: [CONFIGMAPS],
    async reconcile({ namespace, name }) {
      let foo: Foo;
      try {
        foo = await foos.get(namespace, name);
      } catch (err) {
        if (err instanceof StatusError && err.code === 404) return; // gone: its ConfigMaps go with it
        throw err;
      }
      const key = `${namespace}/${name}`;
      const life = await handleFinalizer(foos, foo, FINALIZER, () => external.remove(key));
      if (life.state === 'deleted') return;
      foo = life.object;
      await external.ensure(key);

      const owned = (await configMaps.list(namespace, { labelSelector: `foo.example.com/name=${name}` })).items;
      for (let i = 0; i < foo.spec.replicas; i++) {
        const cmName = `${name}-${i}`;
        const want = { index: String(i), message: foo.spec.message ?? '' };
        const have = owned.find((cm) => cm.metadata.name === cmName);
        if (have && have.data?.index === want.index && have.data?.message === want.message) continue;
        const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: cmName, namespace, labels: { 'foo.example.com/name': name } }, data: want };
        setControllerReference(foo, cm);
        await configMaps.apply(cm, { fieldManager: 'foo-controller', force: true });
      }
      for (const cm of owned) if (Number(cm.data?.index) >= foo.spec.replicas) await configMaps.delete(namespace, cm.metadata.name!);

      const conditions: Condition[] = foo.status?.conditions ?? [];
      const changed = setStatusCondition(conditions, {
        type: 'Ready',
        status: 'True',
        reason: 'ConfigMapsReady',
        message: `${foo.spec.replicas} ConfigMap(s)`,
        observedGeneration: foo.metadata.generation,
      });
      if (changed || foo.status?.readyReplicas !== foo.spec.replicas) {
        await foos.updateStatus(namespace, name, { ...foo, status: { readyReplicas: foo.spec.replicas, conditions } });
        await events?.record(foo, 'Normal', 'Reconciled', 'Reconcile', `${foo.spec.replicas} ConfigMap(s) ready`);
      }
    },
  };
}
