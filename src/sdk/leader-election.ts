/**
 * Leader election over a coordination.k8s.io/v1 Lease, as client-go's: the holder renews the lease every
 * `retryPeriod`, and steps down when it could not renew for `renewDeadline` (an attempt that hangs counts
 * as failed); another replica takes it over (compare-and-swap on the Lease) once it has seen the Lease
 * unchanged for `leaseDuration` by its own clock (never by the holder's timestamps, so clock skew cannot
 * make two leaders). The Lease is read and written through the API, each write a compare-and-swap on the
 * resourceVersion read.
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { toMicroTime } from '../machinery/time.js';
import type { KObject } from '../api/object.js';

/** What the elector needs of the API: the leases resource (a ResourceClient). */
export interface LeaseClient {
  get(namespace: string, name: string): Promise<KObject>;
  create(namespace: string, obj: KObject): Promise<KObject>;
  update(namespace: string, name: string, obj: KObject): Promise<KObject>;
}

/** Options of a LeaderElector, as client-go's LeaderElectionConfig. */
export interface LeaderElectionOptions {
  /** The Lease's namespace (default kube-system). */
  namespace?: string;
  /** The Lease's name (default kube-controller-manager). */
  name?: string;
  /** How long another replica waits, without seeing the Lease renewed, before taking it over (default 15). */
  leaseDurationSeconds?: number;
  /** How long a leader keeps leading without a renewal (default: two thirds of the lease duration, as client-go's 10 s of 15). */
  renewDeadlineMs?: number;
  /** How often the leader renews and the others try to acquire (default 2000 ms). */
  retryPeriodMs?: number;
  /** This replica's name as the Lease's holderIdentity (default `<host>_<pid>_<random>`). */
  identity?: string;
  /** This replica is the only one that can exist (an embedded store it holds locked): take the lease at once. */
  exclusive?: boolean;
}

/**
 * Leader election over a Lease, as client-go's leaderelection.LeaderElector: `onStartedLeading` is called
 * when this replica takes the Lease, `onStoppedLeading` when it loses it or `stop()` ends its leading.
 */
export class LeaderElector {
  /** This replica's holderIdentity. */
  readonly identity: string;
  private leading = false;
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private readonly namespace: string;
  private readonly name: string;
  private readonly duration: number;
  private readonly renewDeadlineMs: number;
  private readonly retryMs: number;
  /** The Lease record last seen (holder and renewal), and when this replica saw it change. */
  private observed = { record: '', at: 0 };
  private readonly exclusive: boolean;

  constructor(
    private readonly leases: LeaseClient,
    private readonly callbacks: { onStartedLeading(): Promise<void>; onStoppedLeading(): void },
    opts: LeaderElectionOptions = {},
  ) {
    this.namespace = opts.namespace ?? 'kube-system';
    this.name = opts.name ?? 'kube-controller-manager';
    this.duration = opts.leaseDurationSeconds ?? 15;
    this.retryMs = opts.retryPeriodMs ?? 2000;
    this.renewDeadlineMs = Math.min(opts.renewDeadlineMs ?? Math.floor((this.duration * 1000 * 2) / 3), this.duration * 1000);
    this.exclusive = opts.exclusive ?? false;
    this.identity = opts.identity ?? `${hostname()}_${process.pid}_${randomBytes(4).toString('hex')}`;
  }

  /** Whether this replica holds the Lease now. */
  get isLeader(): boolean {
    return this.leading;
  }

  /** Try once now (a lone replica leads before start returns), then keep trying. */
  async start(): Promise<void> {
    await this.tick();
    this.schedule();
  }

  /** Stops trying; a leader stops leading and releases the Lease, so that another replica takes it at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.leading) {
      await this.setLeading(false);
      // Hand over at once: an expired lease lets the next replica take it without waiting.
      try {
        const current = await this.leases.get(this.namespace, this.name);
        if (current.spec?.holderIdentity === this.identity) {
          await this.leases.update(this.namespace, this.name, { ...current, spec: { ...current.spec, renewTime: toMicroTime(new Date(0)), holderIdentity: '' } });
        }
      } catch {
        // gone, or taken meanwhile: nothing to hand over
      }
    }
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.tick().finally(() => this.schedule()), this.retryMs);
    // A standby waits for its turn as client-go's RunOrDie blocks: its timer keeps the process alive (a process
    // that ran nothing else exited while another replica led, and nothing took over when that one stopped). A
    // leader's work keeps its process alive; its timer does not.
    if (this.leading) this.timer.unref();
  }

  private async tick(): Promise<void> {
    let leading: boolean;
    let timer: NodeJS.Timeout | undefined;
    try {
      // An attempt may not outlast the renew deadline (nor, not leading, the retry period's worth of waiting).
      const limit = this.leading ? Math.max(1, this.lastRenew + this.renewDeadlineMs - Date.now()) : Math.max(this.retryMs, 1000);
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('leader election: the Lease did not answer in time')), limit);
      });
      leading = await Promise.race([this.tryAcquireOrRenew(), timeout]);
    } catch {
      // A leader that could not renew steps down once the renew deadline has passed.
      leading = this.leading && Date.now() - this.lastRenew < this.renewDeadlineMs;
    } finally {
      clearTimeout(timer);
    }
    await this.setLeading(leading);
  }

  private lastRenew = 0;

  private async tryAcquireOrRenew(): Promise<boolean> {
    const now = new Date();
    const spec = (transitions: number, acquire?: string): KObject => ({
      holderIdentity: this.identity,
      leaseDurationSeconds: this.duration,
      acquireTime: acquire ?? toMicroTime(now),
      renewTime: toMicroTime(now),
      leaseTransitions: transitions,
    });
    let current: KObject | undefined;
    try {
      current = await this.leases.get(this.namespace, this.name);
    } catch (err) {
      if ((err as { code?: number }).code !== 404) throw err;
    }
    if (!current) {
      await this.leases.create(this.namespace, { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: this.name, namespace: this.namespace }, spec: spec(0) });
      this.lastRenew = Date.now();
      return true;
    }
    const s = current.spec ?? {};
    const ours = s.holderIdentity === this.identity;
    const record = `${String(s.holderIdentity ?? '')}\0${String(s.renewTime ?? '')}\0${String(current.metadata?.resourceVersion ?? '')}`;
    if (record !== this.observed.record) this.observed = { record, at: now.getTime() };
    const expired = this.exclusive || !s.holderIdentity || this.observed.at + (s.leaseDurationSeconds ?? this.duration) * 1000 < now.getTime();
    if (!ours && !expired) return false;
    const next = structuredClone(current);
    next.spec = spec(ours ? (s.leaseTransitions ?? 0) : (s.leaseTransitions ?? 0) + 1, ours ? s.acquireTime : undefined);
    try {
      // The resourceVersion read above makes this a compare-and-swap: two replicas cannot both win.
      await this.leases.update(this.namespace, this.name, next);
    } catch (err) {
      if ((err as { code?: number }).code === 409) return false;
      throw err;
    }
    this.lastRenew = Date.now();
    return true;
  }

  private async setLeading(leading: boolean): Promise<void> {
    if (leading === this.leading) return;
    // A lease won by an attempt that was under way when stop() came is not taken up: nothing would stop its controllers.
    if (leading && this.stopped) return;
    this.leading = leading;
    if (leading) await this.callbacks.onStartedLeading();
    else this.callbacks.onStoppedLeading();
  }
}
