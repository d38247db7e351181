/**
 * Prometheus metrics under kube-apiserver's names: apiserver_request_total and
 * apiserver_request_duration_seconds by verb/group/version/resource/scope (and
 * code), apiserver_storage_objects per resource, apiserver_longrunning_requests
 * for open watches, and the process_* / nodejs_* defaults. Served at /metrics.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { ApiRegistry, Endpoint } from '../registry/registry.js';
import type { ResourceRequest } from './request-info.js';
import type { Exchange, Filter } from './filters.js';

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

let processMetrics: Registry | undefined;

/**
 * The process_* and nodejs_* metrics, one set per process: prom-client's default collectors keep their registry (a
 * GC observer, an event-loop delay monitor) for the life of the process, so a registry per server leaked every
 * server an embedder (a test suite) started and stopped.
 */
function processRegistry(): Registry {
  if (!processMetrics) {
    processMetrics = new Registry();
    collectDefaultMetrics({ register: processMetrics });
  }
  return processMetrics;
}

export class ApiMetrics {
  readonly registry = new Registry();
  private readonly requests = new LabelledSeries('apiserver_request_total', 'counter', 'Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.');
  private readonly duration = new LabelledSeries('apiserver_request_duration_seconds', 'histogram', 'Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.');
  private readonly longRunning: Gauge<string>;

  constructor(apis: ApiRegistry) {
    this.registry.registerMetric(this.requests as never);
    this.registry.registerMetric(this.duration as never);
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

  /**
   * Labels of a resource request, as upstream reports them; undefined for a
   * request that no route serves (an unknown verb or subresource, extra path
   * segments), which upstream does not count either. Every label comes from a
   * known value: the endpoint's group, version, resource and subresources.
   */
  labels(info: ResourceRequest, endpoint: Pick<Endpoint, 'subresources'>, contentType: string | undefined, dryRun: boolean): RequestLabels | undefined {
    const verb = reportedVerb(info, contentType);
    if (verb === undefined || info.extraParts) return undefined;
    const sub = info.subresource;
    if (sub !== undefined && !((sub === 'status' || sub === 'scale' || sub === 'finalize') && endpoint.subresources[sub])) return undefined;
    return {
      verb,
      dry_run: dryRun ? 'All' : '',
      group: info.group,
      version: info.version,
      resource: info.resource,
      subresource: info.subresource ?? '',
      scope: info.name !== undefined ? 'resource' : info.namespace !== undefined ? 'namespace' : 'cluster',
    };
  }

  observe(labels: RequestLabels, code: number, seconds: number): void {
    const key = `${labels.verb}|${labels.dry_run}|${labels.group}|${labels.version}|${labels.resource}|${labels.subresource}|${labels.scope}`;
    this.duration.series(key, () => ({ ...labels, component: 'apiserver' })).observe(seconds);
    this.requests.series(`${key}|${code}`, () => ({ ...labels, component: 'apiserver', code: String(code) })).observe(1);
  }

  watchStarted(labels: RequestLabels): () => void {
    const l = { verb: 'WATCH', group: labels.group, version: labels.version, resource: labels.resource, subresource: labels.subresource, scope: labels.scope, component: 'apiserver' };
    this.longRunning.inc(l);
    return () => this.longRunning.dec(l);
  }

  private readonly eventLoopDelay = new Histogram({
    name: 'kapi_event_loop_delay_seconds',
    help: 'How late the event loop ran a timer due every 20 ms: the time one step of some request (or of the server) held every other request.',
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  /** One measurement of the event loop's delay (loop-monitor.ts). */
  loopDelay(seconds: number): void {
    this.eventLoopDelay.observe(seconds);
  }

  private admissionDuration?: Histogram;
  private admissionRequests?: Counter;
  private admissionRejections?: Counter;

  /**
   * One webhook call, as upstream's admission metrics count it: its latency, its outcome (the HTTP-like
   * code: 200 allowed, the denial's code, 500 a failure to call it), and a rejection's kind.
   */
  webhookCalled(name: string, type: 'admit' | 'validating', operation: string, seconds: number, outcome: { rejected: boolean; code: number; error?: 'calling_webhook_error' | 'no_error' }): void {
    this.admissionDuration ??= new Histogram({
      name: 'apiserver_admission_webhook_admission_duration_seconds',
      help: 'Admission webhook latency histogram in seconds, identified by name and broken out for each operation and API resource and type (validate or admit).',
      labelNames: ['name', 'operation', 'rejected', 'type'],
      buckets: [0.005, 0.025, 0.1, 0.5, 1, 2.5, 10, 25],
      registers: [this.registry],
    });
    this.admissionRequests ??= new Counter({
      name: 'apiserver_admission_webhook_request_total',
      help: 'Admission webhook request total, identified by name and broken out for each admission type (validating or mutating) and operation. Additional labels specify whether the request was rejected or not and an HTTP status code. Codes greater than 600 are truncated to 600, to keep the metrics cardinality bounded.',
      labelNames: ['code', 'name', 'operation', 'rejected', 'type'],
      registers: [this.registry],
    });
    this.admissionRejections ??= new Counter({
      name: 'apiserver_admission_webhook_rejection_count',
      help: 'Admission webhook rejection count, identified by name and broken out for each admission type (validating or admit) and operation. Additional labels specify an error type (calling_webhook_error or apiserver_internal_error if an error occurred; no_error otherwise) and optionally a non-zero rejection code if the webhook rejects the request with an HTTP status code (honored by the apiserver when the code is greater or equal to 400). Codes greater than 600 are truncated to 600, to keep the metrics cardinality bounded.',
      labelNames: ['error_type', 'name', 'operation', 'rejection_code', 'type'],
      registers: [this.registry],
    });
    const rejected = String(outcome.rejected);
    const code = String(Math.min(outcome.code, 600));
    this.admissionDuration.observe({ name, operation, rejected, type }, seconds);
    this.admissionRequests.inc({ code, name, operation, rejected, type });
    if (outcome.rejected) this.admissionRejections.inc({ error_type: outcome.error ?? 'no_error', name, operation, rejection_code: code, type });
  }

  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: (await processRegistry().metrics()) + (await this.registry.metrics()) };
  }
}

function reportedVerb(info: ResourceRequest, contentType: string | undefined): string | undefined {
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
      return contentType?.startsWith('application/apply-patch+yaml') ? 'APPLY' : 'PATCH';
    case 'delete':
    case 'deletecollection':
      return 'DELETE';
    default:
      return undefined;
  }
}

interface SeriesValue {
  metricName?: string;
  value: number;
  labels: Record<string, string | number>;
}

/** One labelled series: a counter's total, or a histogram's bucket counts, sum and count. */
class Series {
  readonly buckets: number[];
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Record<string, string>,
    histogram: boolean,
  ) {
    this.buckets = histogram ? new Array<number>(DURATION_BUCKETS.length).fill(0) : [];
  }

  observe(v: number): void {
    this.sum += v;
    this.count++;
    const b = this.buckets;
    for (let i = 0; i < b.length; i++) {
      if (v <= DURATION_BUCKETS[i]) {
        b[i]++;
        break;
      }
    }
  }
}

/**
 * A request counter or duration histogram that costs a map lookup and a few
 * additions per request (prom-client's hashes the label object on every call,
 * a few percent of a GET); the registry formats it on scrape through `get()`.
 */
class LabelledSeries {
  readonly aggregator = 'sum';
  private readonly byKey = new Map<string, Series>();

  constructor(
    readonly name: string,
    readonly type: 'counter' | 'histogram',
    readonly help: string,
  ) {}

  series(key: string, labels: () => Record<string, string>): Series {
    let s = this.byKey.get(key);
    if (!s) this.byKey.set(key, (s = new Series(labels(), this.type === 'histogram')));
    return s;
  }

  get(): { name: string; help: string; type: string; aggregator: string; values: SeriesValue[] } {
    const values: SeriesValue[] = [];
    for (const s of this.byKey.values()) {
      if (this.type === 'counter') {
        values.push({ value: s.count, labels: s.labels });
        continue;
      }
      let cumulative = 0;
      DURATION_BUCKETS.forEach((le, i) => {
        cumulative += s.buckets[i];
        values.push({ metricName: `${this.name}_bucket`, value: cumulative, labels: { le, ...s.labels } });
      });
      values.push({ metricName: `${this.name}_bucket`, value: s.count, labels: { le: '+Inf', ...s.labels } });
      values.push({ metricName: `${this.name}_sum`, value: s.sum, labels: s.labels });
      values.push({ metricName: `${this.name}_count`, value: s.count, labels: s.labels });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }
}

/**
 * The metrics filter: every resource request counted and timed under its labels
 * (once it is answered: a watch when it ends), watches counted while open.
 */
export function requestMetrics(metrics: ApiMetrics, registry: ApiRegistry): Filter {
  return async (x, next) => {
    const info = x.info;
    const endpoint = info?.kind === 'resource' ? registry.route(info.group, info.version, info.resource) : undefined;
    if (info?.kind !== 'resource' || !endpoint) return next(x);
    const labels = metrics.labels(info, endpoint, x.req.headers['content-type'], x.query.has('dryRun'));
    if (!labels) return next(x);
    if (info.verb === 'watch') {
      // A watch is open for long: a reaction to its end, not a suspended frame, holds what it needs meanwhile.
      const watchDone = metrics.watchStarted(labels);
      return next(x).finally(() => {
        watchDone();
        observeRequest(metrics, labels, x);
      });
    }
    try {
      await next(x);
    } finally {
      observeRequest(metrics, labels, x);
    }
  };
}

/** A request's status and latency, under its labels, once it is answered. */
function observeRequest(metrics: ApiMetrics, labels: NonNullable<ReturnType<ApiMetrics['labels']>>, x: Exchange): void {
  metrics.observe(labels, x.timedOut ? 504 : x.status?.code ?? x.res.statusCode, Number(process.hrtime.bigint() - x.started) / 1e9);
}
