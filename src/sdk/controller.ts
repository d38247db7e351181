/**
 * The controller runtime, as controller-runtime's: a Manager holds shared informers (one per resource and
 * namespace) and runs controllers, each a level-based Reconciler fed by a rate-limited work queue of object
 * keys. A controller watches the objects it is `for`, the objects it `owns` (mapped to their controlling
 * owner) and any other objects through a map function; its reconciler gets only a key, never the object
 * that changed, and answers done, requeue, requeue after a delay, or an error (retried with per-key
 * exponential backoff within an overall rate limit). With leader election the controllers run only while
 * this process holds the Lease. Metrics carry controller-runtime's names.
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { KObject } from '../api/object.js';
import type { Client, GroupVersionResource, ResourceClient } from './client.js';
import { Informer, objectKey, type InformerHandlers } from './informer.js';
import { LeaderElector } from './leader-election.js';
import { WorkQueue } from './workqueue.js';
import { CachedResourceClient } from './cached-client.js';
import { listenWebhooks, type WebhookServerOptions } from './webhooks.js';
import type { Server } from 'node:http';
import { addressOf, checkName, listen, metricsHandler, parseBindAddress, probeHandler, type HealthChecker } from './probes.js';

/** What a reconciler is asked about: one object's key. */
export interface ReconcileRequest {
  /** Absent for a cluster-scoped object. */
  namespace?: string;
  name: string;
}

/** Done (nothing, or {}), again at once (`requeue`), or again after a while (`requeueAfterMs`). */
export type ReconcileResult = void | { requeue?: boolean; requeueAfterMs?: number };

/**
 * A level-based reconciler, as controller-runtime's reconcile.Reconciler: it reads the object's current state
 * (which may be gone) and makes the world match it. A rejection is logged and the key retried with backoff.
 */
export interface Reconciler {
  reconcile(request: ReconcileRequest): Promise<ReconcileResult> | ReconcileResult;
}

/**
 * A resource to watch: its group, version and resource (`kind` if known; `namespaced: false` for a
 * cluster-scoped one, which a namespace-limited manager then watches whole), or a defined resource.
 */
export type ResourceRef = (GroupVersionResource & { kind?: string; namespaced?: boolean }) | { gvr: GroupVersionResource; kind: string; scope?: 'Namespaced' | 'Cluster' };

/**
 * Which events of a watched resource reach the work queue, as controller-runtime's predicate.Funcs: an event
 * passes when the function for its type answers true, or when there is none.
 */
export interface Predicate {
  create?(obj: KObject): boolean;
  update?(obj: KObject, old: KObject): boolean;
  delete?(obj: KObject): boolean;
}

const changed = (read: (o: KObject) => unknown): Predicate => ({ update: (obj, old) => !sameJson(read(obj), read(old)) });
const sameJson = (a: unknown, b: unknown) => a === b || JSON.stringify(a ?? {}) === JSON.stringify(b ?? {});

/** controller-runtime's ready-made predicates, for ControllerOptions.predicates. */
export const predicates = {
  /** Updates that change metadata.generation (a spec change; status updates do not). */
  generationChanged: { update: (obj: KObject, old: KObject) => obj.metadata?.generation !== old.metadata?.generation } satisfies Predicate,
  /** Updates that change the labels. */
  labelsChanged: changed((o) => o.metadata?.labels),
  /** Updates that change the annotations. */
  annotationsChanged: changed((o) => o.metadata?.annotations),
  /** Updates to another resourceVersion (not an informer's resync). */
  resourceVersionChanged: { update: (obj: KObject, old: KObject) => obj.metadata?.resourceVersion !== old.metadata?.resourceVersion } satisfies Predicate,
  /** Any of these passes (predicate.Or). */
  or: (...any: Predicate[]): Predicate => ({
    create: (obj) => any.some((p) => passes(p, 'create', obj)),
    update: (obj, old) => any.some((p) => passes(p, 'update', obj, old)),
    delete: (obj) => any.some((p) => passes(p, 'delete', obj)),
  }),
};

function passes(p: Predicate, event: keyof Predicate, obj: KObject, old?: KObject): boolean {
  const f = p[event];
  return f === undefined || (event === 'update' ? f(obj, old!) : (f as (o: KObject) => boolean)(obj));
}

/** An informer's handlers calling `to` for the events that pass all `preds` (an update: the new object, and with `old` the one before too). */
function filtered(preds: Predicate[] = [], to: (obj: KObject) => void, old = false): InformerHandlers {
  const all = (event: keyof Predicate, obj: KObject, before?: KObject) => preds.every((p) => passes(p, event, obj, before));
  return {
    added: (obj) => {
      if (all('create', obj)) to(obj);
    },
    updated: (obj, before) => {
      if (!all('update', obj, before)) return;
      if (old) to(before);
      to(obj);
    },
    deleted: (obj) => {
      if (all('delete', obj)) to(obj);
    },
  };
}

/** A controller to add to a Manager, as controller-runtime's builder (`For`, `Owns`, `Watches`) and controller.Options. */
export interface ControllerOptions {
  /** Unique in the manager; names its metrics (`controller` label) and its log lines. */
  name: string;
  /** The objects reconciled. */
  for: ResourceRef;
  /** Objects whose controlling owner (ownerReferences with controller: true) is a `for` object: its key is reconciled. */
  owns?: ResourceRef[];
  /** Other objects, mapped to the keys to reconcile. */
  watches?: Array<{ resource: ResourceRef; map(obj: KObject): ReconcileRequest[]; predicates?: Predicate[] }>;
  /**
   * Events of the `for` and `owns` resources must pass all of these to queue a key (controller-runtime's
   * `WithPredicates` on For and Owns); see `predicates` for ready-made ones.
   */
  predicates?: Predicate[];
  /** The reconciler: a function of the key, or an object with a reconcile method. */
  reconcile: Reconciler | Reconciler['reconcile'];
  /** Workers (controller-runtime's MaxConcurrentReconciles; default 1). */
  maxConcurrentReconciles?: number;
  /** Retry backoff per key (default 5 ms doubling to 1000 s) within an overall rate (default 10 qps, burst 100). */
  rateLimit?: { baseDelayMs?: number; maxDelayMs?: number; qps?: number; burst?: number };
  /**
   * What the controller does beyond reading and writing its `for` objects (and their status and finalizers), its
   * `owns` objects and reading its `watches`, as RBAC rules (kubebuilder's `+kubebuilder:rbac` markers):
   * `kapi generate manifests` puts them in the manager's ClusterRole with those.
   */
  rbac?: ControllerPolicyRule[];
}

/** An RBAC rule a controller declares (rbac.authorization.k8s.io/v1 PolicyRule of resources). */
export interface ControllerPolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

/** Work a Manager starts and stops with its controllers (`Manager.addRunnable`), as controller-runtime's Runnable. */
export interface Runnable {
  /** Starts the work; the manager waits for it before starting the next runnable. */
  start(): Promise<void> | void;
  /** Stops the work (the manager stops, or loses its Lease). */
  stop(): Promise<void> | void;
}

/** Options of a Manager, as controller-runtime's manager.Options. */
export interface ManagerOptions {
  /** Only this namespace's objects (default: all). */
  namespace?: string;
  /**
   * Run the controllers only while holding this Lease. A manager that loses it does no more work and calls
   * `onLost` (default: exit the process, as controller-runtime does, so that it starts afresh).
   */
  leaderElection?: { namespace: string; name: string; identity?: string; leaseDurationSeconds?: number; renewDeadlineMs?: number; retryPeriodMs?: number; onLost?: () => void };
  /** Informers' resync period (ms; default none). */
  resyncMs?: number;
  /** Where metrics go (default: a registry of the manager's own, `manager.metrics`). */
  registry?: Registry;
  /** Reconcile errors and watch failures (default: stderr). */
  log?: (message: string) => void;
  /**
   * Where `/metrics` (the registry's Prometheus text) is served over HTTP, as controller-runtime's
   * Metrics.BindAddress: `host:port`, `:port` for every interface, `0` or absent for none.
   */
  metricsBindAddress?: string;
  /**
   * Where the health probes are served over HTTP (`/healthz`, `/readyz`, and `/healthz/<check>`), as
   * controller-runtime's HealthProbeBindAddress; `0` or absent for none. They answer from `start()` on, on a
   * standby too.
   */
  healthProbeBindAddress?: string;
  /**
   * Serve these resources' strategy hooks and conversions as admission and conversion webhooks over HTTPS
   * (controller-runtime's webhook server), for resources a cluster's own API server serves as CRDs (CRD mode).
   * From `start()` on, on a standby too.
   */
  webhookServer?: WebhookServerOptions;
}

export const refGvr = (r: ResourceRef): GroupVersionResource => ('gvr' in r ? r.gvr : { group: r.group, version: r.version, resource: r.resource });
/** Whether a resource is namespaced (undefined: not said). */
const refNamespaced = (r: ResourceRef): boolean | undefined => ('gvr' in r ? (r.scope === undefined ? undefined : r.scope !== 'Cluster') : r.namespaced);
const keyOf = (r: ReconcileRequest): string => (r.namespace ? `${r.namespace}/${r.name}` : r.name);
const requestOf = (key: string): ReconcileRequest => {
  const i = key.indexOf('/');
  return i < 0 ? { name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
};
const groupOf = (apiVersion: unknown): string => (typeof apiVersion === 'string' && apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '');

/** controller-runtime's and client-go's workqueue metrics, registered once per registry. */
class Metrics {
  readonly reconcileTotal: Counter<'controller' | 'result'>;
  readonly reconcileErrors: Counter<'controller'>;
  readonly reconcileTime: Histogram<'controller'>;
  readonly maxConcurrent: Gauge<'controller'>;
  readonly activeWorkers: Gauge<'controller'>;
  readonly depth: Gauge<'name' | 'controller'>;
  readonly adds: Counter<'name' | 'controller'>;
  readonly queueDuration: Histogram<'name' | 'controller'>;
  readonly workDuration: Histogram<'name' | 'controller'>;
  readonly retries: Counter<'name' | 'controller'>;

  constructor(readonly registry: Registry) {
    const registers = [registry];
    const buckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.25, 1.5, 1.75, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60];
    const wqBuckets = [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 0.01, 0.1, 1, 10, 100, 1000];
    this.reconcileTotal = new Counter({ name: 'controller_runtime_reconcile_total', help: 'Total number of reconciliations per controller', labelNames: ['controller', 'result'], registers });
    this.reconcileErrors = new Counter({ name: 'controller_runtime_reconcile_errors_total', help: 'Total number of reconciliation errors per controller', labelNames: ['controller'], registers });
    this.reconcileTime = new Histogram({ name: 'controller_runtime_reconcile_time_seconds', help: 'Length of time per reconciliation per controller', labelNames: ['controller'], buckets, registers });
    this.maxConcurrent = new Gauge({ name: 'controller_runtime_max_concurrent_reconciles', help: 'Maximum number of concurrent reconciles per controller', labelNames: ['controller'], registers });
    this.activeWorkers = new Gauge({ name: 'controller_runtime_active_workers', help: 'Number of currently used workers per controller', labelNames: ['controller'], registers });
    this.depth = new Gauge({ name: 'workqueue_depth', help: 'Current depth of workqueue', labelNames: ['name', 'controller'], registers });
    this.adds = new Counter({ name: 'workqueue_adds_total', help: 'Total number of adds handled by workqueue', labelNames: ['name', 'controller'], registers });
    this.queueDuration = new Histogram({ name: 'workqueue_queue_duration_seconds', help: 'How long in seconds an item stays in workqueue before being requested', labelNames: ['name', 'controller'], buckets: wqBuckets, registers });
    this.workDuration = new Histogram({ name: 'workqueue_work_duration_seconds', help: 'How long in seconds processing an item from workqueue takes.', labelNames: ['name', 'controller'], buckets: wqBuckets, registers });
    this.retries = new Counter({ name: 'workqueue_retries_total', help: 'Total number of retries handled by workqueue', labelNames: ['name', 'controller'], registers });
  }
}

const metricsByRegistry = new WeakMap<Registry, Metrics>();

/** How long Manager.stop waits for the reconciles under way (controller-runtime's GracefulShutdownTimeout default). */
const GRACEFUL_SHUTDOWN_MS = 30_000;

/**
 * A controller, as controller-runtime's: a work queue of object keys, fed by the manager's informers, and
 * workers running the reconciler on them. Made by `Manager.add`.
 */
export class Controller {
  /** ControllerOptions.name. */
  readonly name: string;
  private readonly queue: WorkQueue;
  private readonly reconcile: Reconciler['reconcile'];
  private forInformer?: Informer;
  private forKind = '';
  /** Connected to the informers (with leader election: this manager leads); keys before are dropped. */
  private ready = false;

  constructor(
    private readonly manager: Manager,
    private readonly opts: ControllerOptions,
    private readonly metrics: Metrics,
  ) {
    this.name = opts.name;
    const r = opts.reconcile;
    this.reconcile = typeof r === 'function' ? r : (req) => r.reconcile(req);
    const labels = { name: opts.name, controller: opts.name };
    const workers = opts.maxConcurrentReconciles ?? 1;
    metrics.maxConcurrent.set({ controller: opts.name }, workers);
    metrics.activeWorkers.set({ controller: opts.name }, 0);
    metrics.depth.set(labels, 0);
    this.queue = new WorkQueue((key) => this.run(key), {
      workers,
      baseDelayMs: opts.rateLimit?.baseDelayMs ?? 5,
      maxDelayMs: opts.rateLimit?.maxDelayMs ?? 1_000_000,
      qps: opts.rateLimit?.qps ?? 10,
      burst: opts.rateLimit?.burst ?? 100,
      observer: {
        added: () => {
          metrics.adds.inc(labels);
          metrics.depth.set(labels, this.queue.length + 1);
        },
        started: (_key, queuedMs) => {
          metrics.depth.set(labels, this.queue.length);
          metrics.queueDuration.observe(labels, queuedMs / 1000);
        },
        finished: (_key, workMs) => metrics.workDuration.observe(labels, workMs / 1000),
        retried: () => metrics.retries.inc(labels),
      },
    });
  }

  /** Queue a key (as a watch event would). */
  enqueue(request: ReconcileRequest): void {
    if (this.ready) this.queue.add(keyOf(request));
  }

  /** Queue a key after a delay (a key queued again meanwhile is reconciled once). */
  enqueueAfter(request: ReconcileRequest, delayMs: number): void {
    if (this.ready) this.queue.addAfter(keyOf(request), delayMs);
  }

  /**
   * Queues a key and resolves once a reconcile of it that started after this call has finished (its failure is
   * retried with backoff as any other, and does not reject); at once when the controller does not run.
   */
  reconcileNow(request: ReconcileRequest): Promise<void> {
    return this.ready ? this.queue.addAndWait(keyOf(request)) : Promise.resolve();
  }

  /** Resolves when nothing is queued or being reconciled (delayed requeues do not count). */
  idle(): Promise<void> {
    return this.queue.idle();
  }

  /** Connects the controller to the manager's informers (before they start). */
  setUp(): void {
    this.ready = true;
    const m = this.manager;
    const enqueueObj = (obj: KObject) => this.queue.add(objectKey(obj));
    this.forInformer = m.informer(this.opts.for);
    this.forKind = 'kind' in this.opts.for && this.opts.for.kind ? this.opts.for.kind : '';
    const forGroup = refGvr(this.opts.for).group;
    this.forInformer.addHandlers(filtered(this.opts.predicates, enqueueObj));
    const forNamespaced = refNamespaced(this.opts.for);
    const toOwner = (obj: KObject) => {
      const kind = this.forKind || this.forInformer?.kind;
      for (const ref of (obj.metadata?.ownerReferences ?? []) as KObject[]) {
        if (ref.controller !== true || ref.kind !== kind || groupOf(ref.apiVersion) !== forGroup) continue;
        // The owner is in the object's namespace, or (a cluster-scoped owner) in none; unsaid, the cache knows.
        const namespaced = { namespace: obj.metadata?.namespace, name: String(ref.name) };
        const cluster = { name: String(ref.name) };
        const owner = forNamespaced === false ? cluster : forNamespaced === true ? namespaced : this.forInformer?.get(keyOf(cluster)) && !this.forInformer.get(keyOf(namespaced)) ? cluster : namespaced;
        this.queue.add(keyOf(owner));
      }
    };
    for (const owned of this.opts.owns ?? []) m.informer(owned).addHandlers(filtered(this.opts.predicates, toOwner, true));
    for (const w of this.opts.watches ?? []) {
      const mapped = (obj: KObject) => {
        for (const r of w.map(obj)) this.queue.add(keyOf(r));
      };
      m.informer(w.resource).addHandlers(filtered(w.predicates, mapped));
    }
  }

  /** Stops taking keys (queued ones and pending retries are dropped); a reconcile under way finishes. */
  stop(): void {
    this.ready = false;
    this.queue.shutdown();
  }

  private async run(key: string): Promise<void | 'keep'> {
    const labels = { controller: this.name };
    const started = process.hrtime.bigint();
    this.metrics.activeWorkers.inc(labels);
    let result: ReconcileResult;
    try {
      result = await this.reconcile(requestOf(key));
    } catch (err) {
      this.metrics.reconcileTotal.inc({ ...labels, result: 'error' });
      this.metrics.reconcileErrors.inc(labels);
      this.manager.log(`controller ${this.name}: reconciling ${key}: ${(err as Error)?.message ?? String(err)}`);
      throw err;
    } finally {
      this.metrics.activeWorkers.dec(labels);
      this.metrics.reconcileTime.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
    }
    if (result?.requeueAfterMs && result.requeueAfterMs > 0) {
      this.metrics.reconcileTotal.inc({ ...labels, result: 'requeue_after' });
      this.queue.forget(key);
      this.queue.addAfter(key, result.requeueAfterMs);
    } else if (result?.requeue) {
      // Again after the key's backoff, which keeps growing (the queue does not forget it).
      this.metrics.reconcileTotal.inc({ ...labels, result: 'requeue' });
      this.queue.addRateLimited(key);
      return 'keep';
    } else {
      this.metrics.reconcileTotal.inc({ ...labels, result: 'success' });
    }
  }
}

/**
 * A controller manager, as controller-runtime's Manager: shared informers and controllers over one client,
 * with optional leader election and controller-runtime's metrics. Add controllers, then `start()`.
 */
export class Manager {
  /** The Prometheus registry of the controller and work-queue metrics (`await manager.metrics.metrics()` for the text). */
  readonly metrics: Registry;
  /** Where reconcile errors and informer failures are reported (ManagerOptions.log). */
  readonly log: (message: string) => void;
  private readonly informers = new Map<string, Informer>();
  /** Each informer's start, once. */
  private readonly starts = new Map<Informer, Promise<void>>();
  private readonly controllers: Controller[] = [];
  private readonly runnables: Runnable[] = [];
  /** The runnables started (with leader election: while leading). */
  private runnablesStarted = false;
  /** Controllers not connected to their informers yet (with leader election: until this process leads). */
  private readonly waiting: Controller[] = [];
  private readonly m: Metrics;
  private elector?: LeaderElector;
  private readonly healthz = new Map<string, HealthChecker>();
  private readonly readyz = new Map<string, HealthChecker>();
  private readonly servers: Server[] = [];
  /** Where `/metrics` is served once started (`host:port`, the port chosen when asked for port 0). */
  metricsAddress?: string;
  /** Where the health probes are served once started. */
  healthProbeAddress?: string;
  /** Where the webhooks are served once started. */
  webhookAddress?: string;
  private running = false;
  private started = false;
  private stopping = false;

  constructor(
    /** The client the informers, controllers and leader election use. */
    readonly client: Client,
    private readonly opts: ManagerOptions = {},
  ) {
    this.metrics = opts.registry ?? new Registry();
    this.log = opts.log ?? ((message) => process.stderr.write(`${message}\n`));
    let m = metricsByRegistry.get(this.metrics);
    if (!m) metricsByRegistry.set(this.metrics, (m = new Metrics(this.metrics)));
    this.m = m;
  }

  /** The shared informer of a resource (one per resource for the manager). */
  informer(ref: ResourceRef): Informer {
    const gvr = refGvr(ref);
    const key = `${gvr.group}/${gvr.version}/${gvr.resource}`;
    let informer = this.informers.get(key);
    if (!informer) {
      informer = new Informer(this.client.resource(gvr), {}, {
        namespace: refNamespaced(ref) === false ? undefined : this.opts.namespace,
        resyncMs: this.opts.resyncMs,
        onError: (err) => this.log(`informer ${key}: ${(err as Error)?.message ?? String(err)}`),
      });
      this.informers.set(key, informer);
      if (this.started) void this.startInformer(informer);
    }
    return informer;
  }

  private startInformer(informer: Informer): Promise<void> {
    let started = this.starts.get(informer);
    if (!started) this.starts.set(informer, (started = informer.start()));
    return started;
  }

  /**
   * The typed client of a resource, as controller-runtime's `GetClient()`: reads (`get`, `list`) come from the
   * manager's shared informer of it (started at the first read, which waits for its list), as copies; writes go
   * to the API server. Reads right after a write may not see it yet: `apiReader` reads from the server.
   */
  resource<T extends KObject = KObject, In extends KObject = T>(ref: ResourceRef): CachedResourceClient<T, In> {
    // The manager's namespace is all a namespaced resource's informer holds: other reads go to the server.
    const holds = refNamespaced(ref) === false ? undefined : this.opts.namespace;
    return new CachedResourceClient<T, In>(
      this.client,
      refGvr(ref),
      // The informer at the first read (a client that only writes watches nothing), as controller-runtime's cache.
      async () => {
        const informer = this.informer(ref);
        await this.startInformer(informer);
        return informer;
      },
      holds,
      // A stopped manager reads from the server: a read never starts an informer nobody would stop.
      () => !this.stopping,
    );
  }

  /** A client of a resource that reads from the API server (controller-runtime's `GetAPIReader()`). */
  apiReader<T extends KObject = KObject, In extends KObject = T>(ref: ResourceRef): ResourceClient<T, In> {
    return this.client.resource<T, In>(refGvr(ref));
  }

  /** Adds a controller (before or after start); throws when one of that name exists already. */
  add(opts: ControllerOptions): Controller {
    if (this.controllers.some((c) => c.name === opts.name)) throw new Error(`controller ${JSON.stringify(opts.name)} exists already`);
    const c = new Controller(this, opts, this.m);
    this.controllers.push(c);
    if (this.opts.leaderElection && !this.elector?.isLeader) this.waiting.push(c);
    else c.setUp();
    return c;
  }

  /**
   * Adds work that runs with the controllers (controller-runtime's `Manager.Add` of a leader-election runnable):
   * started once the informers have listed (with leader election: once leading), in the order added; stopped
   * when the manager stops or loses its Lease. Added after that, it starts at once.
   */
  async addRunnable(runnable: Runnable): Promise<void> {
    this.runnables.push(runnable);
    if (this.runnablesStarted) await runnable.start();
  }

  private async startRunnables(): Promise<void> {
    // Stopped (or the Lease lost) while the informers listed: nothing starts.
    if (!this.running || this.stopping) return;
    this.runnablesStarted = true;
    for (const r of this.runnables) {
      if (!this.runnablesStarted) return; // stopped between two starts (stopRunnables stopped those started)
      await r.start();
    }
  }

  private async stopRunnables(): Promise<void> {
    if (!this.runnablesStarted) return;
    this.runnablesStarted = false;
    for (const r of [...this.runnables].reverse()) await r.stop();
  }

  /** A liveness check, served at `/healthz` and `/healthz/<name>` (controller-runtime's AddHealthzCheck). */
  addHealthzCheck(name: string, check: HealthChecker): void {
    this.addCheck(this.healthz, name, check);
  }

  /** A readiness check, served at `/readyz` and `/readyz/<name>` (controller-runtime's AddReadyzCheck). */
  addReadyzCheck(name: string, check: HealthChecker): void {
    this.addCheck(this.readyz, name, check);
  }

  private addCheck(checks: Map<string, HealthChecker>, name: string, check: HealthChecker): void {
    if (checks.has(checkName(name))) throw new Error(`health check ${JSON.stringify(name)} exists already`);
    checks.set(name, check);
  }

  /** The probe and metrics servers, when asked for (before the informers: a standby answers its probes). */
  private async serve(): Promise<void> {
    const probes = parseBindAddress(this.opts.healthProbeBindAddress ?? '0');
    const metrics = parseBindAddress(this.opts.metricsBindAddress ?? '0');
    // The webhooks first: a manager whose probes answer is one whose webhooks do.
    if (this.opts.webhookServer) {
      const server = await listenWebhooks(this.opts.webhookServer, this.client);
      this.servers.push(server);
      this.webhookAddress = addressOf(server);
    }
    if (probes) {
      const server = await listen(probes, probeHandler(this.healthz, this.readyz));
      this.servers.push(server);
      this.healthProbeAddress = addressOf(server);
    }
    if (metrics) {
      const server = await listen(metrics, metricsHandler(this.metrics));
      this.servers.push(server);
      this.metricsAddress = addressOf(server);
    }
  }

  /**
   * Starts the probe and metrics servers (when asked for), the informers (waiting for their first lists), then the
   * controllers and runnables (once leading, with leader election).
   */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    this.running = true;
    try {
      await this.serve();
    } catch (err) {
      await this.closeServers();
      // Nothing started: start() may be called again.
      this.started = false;
      this.running = false;
      throw err;
    }
    await Promise.all([...this.informers.values()].map((i) => this.startInformer(i)));
    const le = this.opts.leaderElection;
    if (!le) return this.startRunnables();
    const leases = this.client.resource({ group: 'coordination.k8s.io', version: 'v1', resource: 'leases' });
    this.elector = new LeaderElector(
      {
        get: (ns, name) => leases.get(ns, name),
        create: (ns, obj) => leases.create(ns, obj),
        update: (ns, name, obj) => leases.update(ns, name, obj),
      },
      {
        // Leading: the controllers connect to their informers, which tell them of every object there is.
        onStartedLeading: async () => {
          const ready = this.waiting.splice(0);
          for (const c of ready) c.setUp();
          await Promise.all([...this.informers.values()].map((i) => this.startInformer(i)));
          await this.startRunnables();
        },
        // As controller-runtime, a manager that lost its Lease does no more work (and, by default, exits).
        onStoppedLeading: () => {
          if (this.stopping) return;
          this.log('manager: lost the leader Lease; controllers stopped');
          for (const c of this.controllers) c.stop();
          void this.stopRunnables().catch((err: unknown) => this.log(`manager: stopping: ${(err as Error)?.message ?? String(err)}`));
          (le.onLost ?? (() => process.exit(1)))();
        },
      },
      {
        namespace: le.namespace,
        name: le.name,
        identity: le.identity ?? `${hostname()}_${randomBytes(4).toString('hex')}`,
        leaseDurationSeconds: le.leaseDurationSeconds,
        renewDeadlineMs: le.renewDeadlineMs,
        retryPeriodMs: le.retryPeriodMs,
      },
    );
    await this.elector.start();
  }

  /** Whether this manager's controllers may run (always, without leader election). */
  get isLeader(): boolean {
    return this.elector ? this.elector.isLeader : this.running;
  }

  /** Resolves when every controller's queue is empty and no reconcile runs. */
  async idle(): Promise<void> {
    for (let round = 0; round < 3; round++) await Promise.all(this.controllers.map((c) => c.idle()));
  }

  /**
   * Stops the controllers (the reconciles under way finish first, for up to 30 s: controller-runtime's graceful
   * shutdown timeout), the runnables and informers, and gives up the Lease when leading.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    this.running = false;
    for (const c of this.controllers) c.stop();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(this.controllers.map((c) => c.idle())),
      new Promise((resolve) => (timer = setTimeout(resolve, GRACEFUL_SHUTDOWN_MS))),
    ]);
    clearTimeout(timer);
    await this.stopRunnables();
    for (const i of this.informers.values()) i.stop();
    await this.elector?.stop();
    await this.closeServers();
  }

  private async closeServers(): Promise<void> {
    await Promise.all(
      this.servers.splice(0).map((s) => {
        const closed = new Promise((resolve) => s.close(resolve));
        s.closeAllConnections();
        return closed;
      }),
    );
  }
}
