/**
 * Prometheus metrics under kube-apiserver's names: apiserver_request_total and
 * apiserver_request_duration_seconds by verb/group/version/resource/scope (and
 * code), apiserver_storage_objects per resource, apiserver_longrunning_requests
 * for open watches, and the process_* / nodejs_* defaults. Served at /metrics.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { ApiRegistry } from '../registry/registry.js';
import type { ResourceRequest } from './request-info.js';

const DURATION_BUCKETS = [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60];

export interface RequestLabels {
  verb: string;
  group: string;
  version: string;
  resource: string;
  subresource: string;
  scope: string;
  dry_run: string;
}

export class ApiMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<string>;
  private readonly duration: Histogram<string>;
  private readonly longRunning: Gauge<string>;

  constructor(apis: ApiRegistry) {
    collectDefaultMetrics({ register: this.registry });
    this.requests = new Counter({
      name: 'apiserver_request_total',
      help: 'Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.',
      labelNames: ['verb', 'dry_run', 'group', 'version', 'resource', 'subresource', 'scope', 'component', 'code'],
      registers: [this.registry],
    });
    this.duration = new Histogram({
      name: 'apiserver_request_duration_seconds',
      help: 'Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.',
      labelNames: ['verb', 'dry_run', 'group', 'version', 'resource', 'subresource', 'scope', 'component'],
      buckets: DURATION_BUCKETS,
      registers: [this.registry],
    });
    this.longRunning = new Gauge({
      name: 'apiserver_longrunning_requests',
      help: 'Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component.',
      labelNames: ['verb', 'group', 'version', 'resource', 'subresource', 'scope', 'component'],
      registers: [this.registry],
    });
    new Gauge({
      name: 'apiserver_storage_objects',
      help: 'Number of stored objects at the time of last check split by kind.',
      labelNames: ['resource'],
      registers: [this.registry],
      collect() {
        this.reset();
        const seen = new Set();
        for (const ep of apis.all()) {
          if (seen.has(ep.store)) continue;
          seen.add(ep.store);
          const gr = ep.group ? `${ep.names.resource}.${ep.group}` : ep.names.resource;
          this.set({ resource: gr }, ep.store.cache.size);
        }
      },
    });
  }

  /** Labels of a resource request, as upstream reports them. */
  labels(info: ResourceRequest, patchType: string | undefined, dryRun: boolean): RequestLabels {
    return {
      verb: reportedVerb(info, patchType),
      dry_run: dryRun ? 'All' : '',
      group: info.group,
      version: info.version,
      resource: info.resource,
      subresource: info.subresource ?? '',
      scope: info.name !== undefined ? 'resource' : info.namespace !== undefined ? 'namespace' : 'cluster',
    };
  }

  /** Label children cached by their values: prom-client hashes labels on every call otherwise. */
  private readonly counters = new Map<string, { inc(): void }>();
  private readonly histograms = new Map<string, { observe(v: number): void }>();

  observe(labels: RequestLabels, code: number, seconds: number): void {
    const key = `${labels.verb}|${labels.dry_run}|${labels.group}|${labels.version}|${labels.resource}|${labels.subresource}|${labels.scope}`;
    let h = this.histograms.get(key);
    if (!h) this.histograms.set(key, (h = this.duration.labels({ ...labels, component: 'apiserver' })));
    h.observe(seconds);
    const ckey = `${key}|${code}`;
    let c = this.counters.get(ckey);
    if (!c) this.counters.set(ckey, (c = this.requests.labels({ ...labels, component: 'apiserver', code: String(code) })));
    c.inc();
  }

  watchStarted(labels: RequestLabels): () => void {
    const l = { verb: 'WATCH', group: labels.group, version: labels.version, resource: labels.resource, subresource: labels.subresource, scope: labels.scope, component: 'apiserver' };
    this.longRunning.inc(l);
    return () => this.longRunning.dec(l);
  }

  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}

function reportedVerb(info: ResourceRequest, patchType: string | undefined): string {
  switch (info.verb) {
    case 'list':
      return 'LIST';
    case 'watch':
      return 'WATCH';
    case 'get':
      return 'GET';
    case 'create':
      return 'POST';
    case 'update':
      return 'PUT';
    case 'patch':
      return patchType === 'application/apply-patch+yaml' ? 'APPLY' : 'PATCH';
    default:
      return 'DELETE';
  }
}
