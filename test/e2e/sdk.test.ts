/**
 * The SDK as a user imports it (`kapi/sdk`, `kapi/testing`): a resource defined in TypeScript served as a
 * CRD with its strategy hooks, versions converted through the internal form, the test server, a client
 * through a kubeconfig, and a controller that owns ConfigMaps, keeps a condition and a finalizer.
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  connect,
  defineResource,
  EventRecorder,
  fieldError,
  handleFinalizer,
  setControllerReference,
  setStatusCondition,
  StatusError,
  t,
  version,
  type Condition,
  type TypeOf,
} from 'kapi/sdk';
import type { appsv1, corev1 } from 'kapi/sdk';
import { startTestServer, type TestServer } from 'kapi/testing';

const GROUP = 'sdk.example.com';

const v1 = version('v1', {
  spec: t.object({
    replicas: t.integer({ minimum: 0, default: 1 }),
    message: t.optional(t.string({ maxLength: 64 })),
    tags: t.optional(t.array(t.string(), { listType: 'set' })),
  }),
  status: t.object({ ready: t.optional(t.integer()), conditions: t.optional(t.conditions()) }),
  printerColumns: [{ name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' }],
});
type Foo = TypeOf<typeof v1>;

const canonicalized: string[] = [];
const Foo = defineResource<Foo>({
  group: GROUP,
  kind: 'Foo',
  shortNames: ['fo'],
  categories: ['sdk'],
  versions: [v1],
  strategy: {
    defaulting: (obj) => {
      const spec = obj.spec as Foo['spec'];
      spec.message ??= 'hello';
    },
    prepareForCreate: (obj) => {
      obj.metadata.labels = { ...obj.metadata.labels, created: 'by-strategy' };
    },
    validate: (obj) => (obj.spec.replicas > 10 ? [fieldError.invalid('spec.replicas', obj.spec.replicas, 'must be no more than 10')] : []),
    validateUpdate: (obj, old) => (obj.spec.message !== old.spec.message && old.spec.message === 'frozen' ? [fieldError.invalid('spec.message', obj.spec.message, 'field is immutable')] : []),
    canonicalize: (obj) => {
      if (obj.spec.tags) obj.spec.tags.sort();
      canonicalized.push(obj.metadata.name!);
    },
  },
});

// Two versions of a Bar converted through an internal form that has both names.
interface BarInternal {
  apiVersion?: string;
  kind?: string;
  metadata: Foo['metadata'];
  size: number;
}
const barV1 = version('v1', {
  spec: t.object({ size: t.integer() }),
  toInternal: (o): BarInternal => ({ metadata: o.metadata, size: o.spec.size }),
  fromInternal: (i: BarInternal) => ({ metadata: i.metadata, spec: { size: i.size } }),
});
const barV2 = version('v2', {
  spec: t.object({ replicas: t.integer() }),
  storage: true,
  toInternal: (o): BarInternal => ({ metadata: o.metadata, size: o.spec.replicas }),
  fromInternal: (i: BarInternal) => ({ metadata: i.metadata, spec: { replicas: i.size } }),
});
const Bar = defineResource<BarInternal>({
  group: GROUP,
  kind: 'Bar',
  versions: [barV1, barV2],
  strategy: { validate: (o) => (o.size < 0 ? [fieldError.invalid('spec', o.size, 'size must not be negative')] : []) },
});

const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps' };

describe('kapi/sdk: resources defined in TypeScript', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ resources: [Foo, Bar] });
  });
  after(() => s.stop());

  it('serves a defined resource as a CRD, with the strategy hooks in the seed\'s order', async () => {
    const foos = s.client().resource<Foo>(Foo);
    const made = await foos.create('default', { apiVersion: `${GROUP}/v1`, kind: 'Foo', metadata: { name: 'a' }, spec: { replicas: 2, tags: ['b', 'a'] } });
    assert.equal(made.spec.message, 'hello', 'defaulting');
    assert.equal(made.metadata.labels?.created, 'by-strategy', 'prepareForCreate');
    assert.deepEqual(made.spec.tags, ['a', 'b'], 'canonicalize');
    assert.ok(canonicalized.includes('a'));
    await assert.rejects(foos.create('default', { apiVersion: `${GROUP}/v1`, kind: 'Foo', metadata: { name: 'big' }, spec: { replicas: 11 } }), (err: unknown) => {
      assert.ok(err instanceof StatusError);
      assert.equal(err.code, 422);
      assert.equal(err.message, 'Foo.sdk.example.com "big" is invalid: spec.replicas: Invalid value: 11: must be no more than 10');
      return true;
    });
    // The schema's own validation runs too (maxLength), and the status subresource keeps status off the main endpoint.
    await assert.rejects(foos.create('default', { apiVersion: `${GROUP}/v1`, kind: 'Foo', metadata: { name: 'long' }, spec: { replicas: 1, message: 'x'.repeat(65) } }), /spec\.message: Too long/);
    const frozen = await foos.create('default', { apiVersion: `${GROUP}/v1`, kind: 'Foo', metadata: { name: 'frozen' }, spec: { replicas: 1, message: 'frozen' }, status: { ready: 9 } });
    assert.equal(frozen.status, undefined);
    await assert.rejects(foos.update('default', 'frozen', { ...frozen, spec: { ...frozen.spec, message: 'thawed' } }), /spec\.message: Invalid value: "thawed": field is immutable/);
    // kubectl sees it as any CRD: discovery (short name, category), printer columns, server-side apply.
    const env = { ...process.env, KUBECONFIG: s.kubeconfigPath };
    // kubectl runs beside the server (in this process): never synchronously.
    // Its discovery cache is this server's own (another test's server may have had this port, with other short names).
    const cache = ['--cache-dir', join(dirname(s.kubeconfigPath), 'kube-cache')];
    const kubectl = async (args: string[]) => (await promisify(execFile)('kubectl', [...cache, ...args], { env, encoding: 'utf8', timeout: 30_000 })).stdout;
    const table = await kubectl(['get', 'fo', '-n', 'default']);
    assert.match(table, /^NAME\s+REPLICAS\n/);
    assert.match(table, /\na\s+2\s+/);
    assert.match(await kubectl(['get', 'sdk', '-n', 'default', '-o', 'name']), /foo\.sdk\.example\.com\/a/);
    const applied = await foos.apply({ apiVersion: `${GROUP}/v1`, kind: 'Foo', metadata: { name: 'applied', namespace: 'default' }, spec: { replicas: 3 } }, { fieldManager: 'sdk-test' });
    assert.equal(applied.spec.replicas, 3);
    assert.equal((applied.metadata.managedFields as Array<{ manager: string }>)[0].manager, 'sdk-test');
  });

  it('keeps a hook from objects the schema refused, and from /status writes', async () => {
    const foos = s.client().resource<Foo>(Foo);
    // No spec: the schema's "Required", never a hook reading spec.replicas of nothing.
    await assert.rejects(foos.create('default', { apiVersion: `${GROUP}/v1`, kind: 'Foo', metadata: { name: 'nospec' } } as Foo), (err: unknown) => {
      assert.ok(err instanceof StatusError);
      assert.equal(err.code, 422);
      assert.match(err.message, /spec: Required value/);
      return true;
    });
    const frozen = await foos.get('default', 'frozen');
    // A status write by a controller does not run the spec's update rules.
    const written = await foos.updateStatus('default', 'frozen', { ...frozen, status: { ready: 1 } });
    assert.equal(written.status?.ready, 1);
  });

  it('converts between versions through the internal form, and runs the hooks on it', async () => {
    const c = s.client();
    const barsV1 = c.resource({ group: GROUP, version: 'v1', resource: 'bars' });
    const barsV2 = c.resource({ group: GROUP, version: 'v2', resource: 'bars' });
    await barsV1.create('default', { apiVersion: `${GROUP}/v1`, kind: 'Bar', metadata: { name: 'b' }, spec: { size: 4 } });
    const asV2 = await barsV2.get('default', 'b');
    assert.deepEqual([asV2.apiVersion, asV2.spec], [`${GROUP}/v2`, { replicas: 4 }]);
    await assert.rejects(barsV1.create('default', { apiVersion: `${GROUP}/v1`, kind: 'Bar', metadata: { name: 'neg' }, spec: { size: -1 } }), /spec: Invalid value: -1: size must not be negative/);
  });

  it('reaches the same server through a kubeconfig (HTTPS), as it would any API server', async () => {
    const remote = connect({ kubeconfig: s.kubeconfigPath, userAgent: 'sdk-remote' });
    try {
      const foo = await remote.resource<Foo>(Foo).get('default', 'a');
      assert.equal(foo.spec.replicas, 2);
      const list = await remote.resource(Foo).list('default', { labelSelector: 'created=by-strategy' });
      assert.ok(list.items.length >= 2);
    } finally {
      remote.close();
    }
  });

  it('starts test servers with CRDs from files', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kapi-sdk-crds-'));
    try {
      writeFileSync(
        join(dir, 'widgets.yaml'),
        `apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.files.example.com}\nspec:\n  group: files.example.com\n  scope: Namespaced\n  names: {plural: widgets, kind: Widget}\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: not-a-crd}\n`,
      );
      const t2 = await startTestServer({ crdDirectoryPaths: [dir] });
      try {
        const w = await t2.client().resource({ group: 'files.example.com', version: 'v1', resource: 'widgets' }).create('default', { apiVersion: 'files.example.com/v1', kind: 'Widget', metadata: { name: 'w' } });
        assert.equal(w.metadata.name, 'w');
      } finally {
        await t2.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('kapi/sdk: the controller runtime', () => {
  const external = new Set<string>();
  let s: TestServer;
  before(async () => {
    s = await startTestServer({
      resources: [Foo],
      controllers: [
        {
          name: 'foo',
          for: Foo,
          owns: [CONFIGMAPS],
          async reconcile({ namespace, name }) {
            const c = s.client('foo-controller');
            const foos = c.resource<Foo>(Foo);
            const configMaps = c.resource(CONFIGMAPS);
            let foo: Foo;
            try {
              foo = await foos.get(namespace, name);
            } catch (err) {
              if (err instanceof StatusError && err.code === 404) return;
              throw err;
            }
            // The external resource lives while the Foo does; the finalizer removes it.
            const life = await handleFinalizer(foos, foo, 'sdk.example.com/external', (f) => void external.delete(`${f.metadata.namespace}/${f.metadata.name}`));
            if (life.state === 'deleted') return;
            foo = life.object;
            external.add(`${namespace}/${name}`);
            const owned = (await configMaps.list(namespace)).items.filter((cm) => cm.metadata.ownerReferences?.some((r: { uid: string }) => r.uid === foo.metadata.uid));
            for (let i = 0; i < foo.spec.replicas; i++) {
              if (owned.some((cm) => cm.metadata.name === `${name}-${i}`)) continue;
              const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${name}-${i}`, namespace }, data: { index: String(i) } };
              setControllerReference(foo, cm);
              await configMaps.create(namespace, cm);
            }
            for (const cm of owned) if (Number(cm.data?.index) >= foo.spec.replicas) await configMaps.delete(namespace, cm.metadata.name);
            const conditions: Condition[] = foo.status?.conditions ?? [];
            const changed = setStatusCondition(conditions, { type: 'Ready', status: 'True', reason: 'Reconciled', message: `${foo.spec.replicas} config maps`, observedGeneration: foo.metadata.generation });
            if (changed || foo.status?.ready !== foo.spec.replicas) await foos.updateStatus(namespace, name, { ...foo, status: { ready: foo.spec.replicas, conditions } });
          },
        },
      ],
    });
  });
  after(() => s.stop());

  const until = async (what: string, check: () => Promise<boolean>) => {
    for (let i = 0; i < 500; i++) {
      if (await check()) return;
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.fail(`timed out waiting for ${what}`);
  };
  const configMapNames = async () =>
    (await s.client().resource(CONFIGMAPS).list('default')).items.map((cm) => cm.metadata.name as string).filter((n) => n.startsWith('r-')).sort();

  it('reconciles owned objects to the desired state, level-based, and cleans up through its finalizer', async () => {
    const foos = s.client().resource<Foo>(Foo);
    await foos.create('default', { apiVersion: `${GROUP}/v1`, kind: 'Foo', metadata: { name: 'r' }, spec: { replicas: 2 } });
    await until('two config maps and Ready', async () => {
      const foo = await foos.get('default', 'r');
      return (await configMapNames()).join() === 'r-0,r-1' && foo.status?.conditions?.[0]?.status === 'True';
    });
    const foo = await foos.get('default', 'r');
    assert.deepEqual(foo.metadata.finalizers, ['sdk.example.com/external']);
    assert.ok(external.has('default/r'));
    // An owned object deleted behind its back is made again (its owner is reconciled).
    await s.client().resource(CONFIGMAPS).delete('default', 'r-1');
    await until('r-1 again', async () => (await configMapNames()).join() === 'r-0,r-1');
    await foos.patch('default', 'r', { spec: { replicas: 1 } });
    await until('one config map', async () => (await configMapNames()).join() === 'r-0');
    // Deleted: the finalizer's cleanup runs, then the Foo goes, and its config maps after it (garbage collection).
    await foos.delete('default', 'r');
    await until('the Foo gone', async () => {
      try {
        await foos.get('default', 'r');
        return false;
      } catch (err) {
        return err instanceof StatusError && err.code === 404;
      }
    });
    assert.equal(external.has('default/r'), false);
    await until('its config maps collected', async () => (await configMapNames()).length === 0);
    const metrics = await s.manager!.metrics.metrics();
    assert.match(metrics, /controller_runtime_reconcile_total\{controller="foo",result="success"\} \d+/);
    assert.match(metrics, /workqueue_adds_total\{name="foo",controller="foo"\} \d+/);
  });

  it('backs off a key that asks to be requeued, as controller-runtime does', async () => {
    const runs: number[] = [];
    const { Manager } = await import('kapi/sdk');
    const m = new Manager(s.client('requeuer'));
    m.add({
      name: 'requeuer',
      for: CONFIGMAPS,
      rateLimit: { baseDelayMs: 20 },
      reconcile: ({ name }) => {
        if (name !== 'backoff') return;
        runs.push(Date.now());
        return runs.length < 5 ? { requeue: true } : undefined;
      },
    });
    await m.start();
    try {
      await s.client().resource(CONFIGMAPS).create('default', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'backoff' } });
      for (let i = 0; i < 300 && runs.length < 5; i++) await new Promise((r) => setTimeout(r, 10));
      assert.equal(runs.length, 5);
      const gaps = runs.slice(1).map((t, i) => t - runs[i]);
      // 20, 40, 80, 160 ms: each wait at least the one before.
      assert.ok(gaps[3] >= 150 && gaps[2] >= 70, `gaps ${gaps.join(', ')}`);
      const metrics = await m.metrics.metrics();
      assert.match(metrics, /controller_runtime_reconcile_total\{controller="requeuer",result="requeue"\} 4/);
    } finally {
      await m.stop();
    }
  });

  it('waits, when stopped, for the reconciles under way, which still reach the server', async () => {
    const { Manager } = await import('kapi/sdk');
    const m = new Manager(s.client('stopper'));
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    let finished = false;
    m.add({
      name: 'stopper',
      for: CONFIGMAPS,
      reconcile: async ({ namespace, name }) => {
        if (name !== 'slow') return;
        started();
        await new Promise((r) => setTimeout(r, 300));
        await s.client('stopper').resource(CONFIGMAPS).patch(namespace!, name, { metadata: { labels: { reconciled: 'yes' } } });
        finished = true;
      },
    });
    await m.start();
    await s.client().resource(CONFIGMAPS).create('default', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'slow' } });
    await running;
    await m.stop();
    assert.equal(finished, true, 'stop() resolved before the reconcile under way had finished');
    assert.equal((await s.client().resource(CONFIGMAPS).get('default', 'slow')).metadata?.labels?.reconciled, 'yes');
  });

  it('keeps a leader-election standby waiting (its own process), and it takes over when the leader stops', async () => {
    const { Manager } = await import('kapi/sdk');
    const lease = { namespace: 'default', name: 'standby-test', leaseDurationSeconds: 2, retryPeriodMs: 200 };
    const leader = new Manager(s.client('leader'), { leaderElection: { ...lease, identity: 'first' } });
    await leader.start();
    // A controller manager of its own: nothing but the elector keeps it running while it waits.
    const dir = mkdtempSync(join(tmpdir(), 'kapi-standby-'));
    const script = join(dir, 'standby.mjs');
    writeFileSync(
      script,
      `import { connect, Manager } from ${JSON.stringify(import.meta.resolve('kapi/sdk'))};
const client = connect({ kubeconfig: ${JSON.stringify(s.kubeconfigPath)} });
const m = new Manager(client, { leaderElection: ${JSON.stringify({ ...lease, identity: 'second' })} });
m.add({ name: 'standby', for: { group: '', version: 'v1', resource: 'configmaps' }, reconcile: () => {} });
await m.start();
setInterval(() => { if (m.isLeader) { console.log('leading'); process.exit(0); } }, 50).unref();
`,
    );
    const child = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c));
    child.stderr.on('data', (c: Buffer) => (output += c));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    try {
      await new Promise((r) => setTimeout(r, 1500));
      assert.equal(child.exitCode, null, `the standby exited while the leader held the Lease: ${output}`);
      await leader.stop();
      const code = await Promise.race([exited, new Promise<string>((r) => setTimeout(() => r('timeout'), 10_000))]);
      assert.equal(code, 0, `the standby did not take over: ${output}`);
      assert.match(output, /leading/);
    } finally {
      child.kill();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('queues only the events that pass its predicates, and a watch\'s own', async () => {
    const { Manager, predicates } = await import('kapi/sdk');
    const m = new Manager(s.client('predicates'));
    const seen: string[] = [];
    const selected = (o: { metadata: { labels?: Record<string, string> } }) => o.metadata.labels?.pick === 'yes';
    m.add({
      name: 'picky',
      for: CONFIGMAPS,
      // Created with the label, or a change of the labels; never a deletion.
      predicates: [{ create: selected, update: predicates.labelsChanged.update, delete: () => false }],
      watches: [{ resource: { group: '', version: 'v1', resource: 'secrets' }, map: (o) => [{ namespace: o.metadata.namespace, name: `from-${o.metadata.name}` }], predicates: [{ create: (o) => o.metadata.name === 'pred-s' }] }],
      reconcile: ({ name }) => {
        if (name.startsWith('pred-') || name.startsWith('from-pred-')) seen.push(name);
      },
    });
    await m.start();
    try {
      const cms = s.client().resource(CONFIGMAPS);
      await cms.create('default', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'pred-a', labels: { pick: 'yes' } } });
      await cms.create('default', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'pred-b' } });
      await s.client().resource({ group: '', version: 'v1', resource: 'secrets' }).create('default', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'pred-s' } });
      await until('the created ones', async () => seen.includes('pred-a') && seen.includes('from-pred-s'));
      // Data only: filtered out. Labels: passes.
      await cms.patch('default', 'pred-b', { data: { a: 'b' } });
      await cms.patch('default', 'pred-b', { metadata: { labels: { x: 'y' } } });
      await until('the label change', async () => seen.includes('pred-b'));
      assert.equal(seen.filter((n) => n === 'pred-b').length, 1, seen.join());
      await cms.delete('default', 'pred-a');
      await new Promise((r) => setTimeout(r, 100));
      assert.deepEqual(seen.sort(), ['from-pred-s', 'pred-a', 'pred-b']);
    } finally {
      await m.stop();
    }
  });

  it('starts its runnables once the informers have listed, in order, and stops them in reverse; reconcileNow waits for a reconcile', async () => {
    const { Manager } = await import('kapi/sdk');
    const m = new Manager(s.client('runnables'));
    const log: string[] = [];
    let reconciled = 0;
    const informer = m.informer(CONFIGMAPS);
    const c = m.add({
      name: 'now',
      for: CONFIGMAPS,
      predicates: [{ create: () => false, update: () => false, delete: () => false }],
      reconcile: async () => {
        await new Promise((r) => setTimeout(r, 20));
        reconciled++;
      },
    });
    await m.addRunnable({ start: () => void log.push(`a starts, informer synced: ${informer.hasSynced}`), stop: () => void log.push('a stops') });
    await m.addRunnable({ start: async () => void log.push('b starts'), stop: () => void log.push('b stops') });
    assert.equal(log.length, 0, 'nothing starts before the manager');
    await m.start();
    try {
      assert.deepEqual(log, ['a starts, informer synced: true', 'b starts']);
      await m.addRunnable({ start: () => void log.push('c starts'), stop: () => void log.push('c stops') });
      assert.equal(log.at(-1), 'c starts', 'added to a running manager, it starts at once');
      await c.reconcileNow({ namespace: 'default', name: 'anything' });
      assert.equal(reconciled, 1, 'reconcileNow resolves once the reconcile has finished');
    } finally {
      await m.stop();
    }
    assert.deepEqual(log.slice(3), ['c stops', 'b stops', 'a stops']);
    await c.reconcileNow({ name: 'after-stop' });
    assert.equal(reconciled, 1, 'a stopped controller reconciles nothing');
  });

  it('types built-in objects from the Go model', async () => {
    const configMaps = s.client().resource<corev1.ConfigMap>(CONFIGMAPS);
    const made = await configMaps.create('default', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'typed', labels: { a: 'b' } }, data: { key: 'value' } });
    const data: Record<string, string> | undefined = made.data;
    assert.deepEqual(data, { key: 'value' });
    // @ts-expect-error: a ConfigMap's data holds strings (tsc refuses this line when the types are right).
    const wrong: corev1.ConfigMap = { data: { key: 1 } };
    assert.ok(wrong);
    // @ts-expect-error: a Deployment's kind is its own.
    const mislabelled: appsv1.Deployment = { kind: 'ConfigMap', spec: { selector: {}, template: {} } };
    assert.ok(mislabelled);
    const deployment: appsv1.Deployment = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'typed' }, spec: { replicas: 1, selector: { matchLabels: { app: 'x' } }, template: { metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'c', image: 'nginx', resources: { limits: { cpu: '100m', memory: 64 } } }] } } } };
    const created = await s.client().resource<appsv1.Deployment>({ group: 'apps', version: 'v1', resource: 'deployments' }).create('default', deployment);
    assert.equal(created.spec.template.spec?.containers?.[0].resources?.limits?.cpu, '100m');
  });

  it('records events, a repeat as a series', async () => {
    const recorder = new EventRecorder(s.client(), { controller: 'sdk.example.com/foo-controller' });
    const cm = await s.client().resource(CONFIGMAPS).create('default', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'evented' } });
    await recorder.record(cm, 'Normal', 'Synced', 'Reconcile', 'synced it');
    await recorder.record(cm, 'Normal', 'Synced', 'Reconcile', 'synced it');
    const events = (await s.client().resource({ group: 'events.k8s.io', version: 'v1', resource: 'events' }).list('default')).items.filter((e) => e.regarding?.name === 'evented');
    assert.equal(events.length, 1);
    assert.deepEqual([events[0].reason, events[0].note, events[0].reportingController, events[0].series?.count], ['Synced', 'synced it', 'sdk.example.com/foo-controller', 2]);
  });
});
