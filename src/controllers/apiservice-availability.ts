/**
 * The aggregator's availability controller, as kube-aggregator's: every APIService that names a Service is
 * checked when it changes and every `intervalMs` — the Service exists (else `ServiceNotFound`), an endpoint
 * serves its port (else `MissingEndpoints`), and the backend answers its group-version's discovery over TLS
 * with the front proxy's certificate (else `FailedDiscoveryCheck`) — and its `Available` condition says so
 * (`Passed`: all checks passed). The resources the backend lists are served here as proxied endpoints, so
 * discovery shows them and their requests go to the backend; while it is not available they answer 503.
 * Every replica checks (each needs its own routes); the status is written only when it changes.
 */
import { unstructuredScope } from '../registry/request-scope.js';
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import type { CacheEvent, CacheEventType, CacheWatcher } from '../cache/watch-cache.js';
import type { ApiRegistry, ProxiedEndpoint } from '../registry/registry.js';
import type { RestStore } from '../registry/store.js';
import type { KObject } from '../api/object.js';
import { backendPart, v3FromBackendPart, type AggregatedShare } from '../openapi/index.js';
import type { AggregatedGroupVersion } from '../discovery/documents.js';
import type { Client, ResourceClient } from '../sdk/client.js';
import { Informer } from '../sdk/informer.js';
import { logQuote } from '../server/filters.js';
import type { ProxyClientCertificate } from '../server/proxy.js';
import type { ProxyTarget } from '../api/serving.js';
import { isRecord, records } from '../util/json-object.js';

const DISCOVERY_TIMEOUT_MS = 5000;
const MAX_DISCOVERY_BYTES = 4 * 1024 * 1024;
/** A backend's whole /openapi/v2 document may be large (every type it serves); past this it is not taken. */
const MAX_OPENAPI_BYTES = 32 * 1024 * 1024;
const LOCAL_ETAG = 'kapi-local-';

interface Check {
  status: 'True' | 'False';
  reason: string;
  message: string;
  target?: ProxyTarget;
  resources?: KObject[];
}

export interface AvailabilityOptions {
  services: RestStore;
  endpoints: RestStore;
  proxyClient?: ProxyClientCertificate;
  /** Where available backends' OpenAPI shares are published (the aggregator's /openapi/v2 and /openapi/v3). */
  openapi?: { setAggregated(name: string, share: AggregatedShare | undefined): void };
  /** How often each APIService is checked again (default 30 s, as upstream). */
  intervalMs?: number;
  log: (message: string) => void;
}

export class APIServiceAvailability {
  private readonly informer: Informer;
  private readonly apiServices: ResourceClient;
  /** Per APIService name: its routes (registered endpoints) and the state they share. */
  private readonly served = new Map<string, { keys: string[]; signature?: string; state: { available: boolean; target?: ProxyTarget } }>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly running = new Set<string>();
  /** Names asked to be checked while their check was running. */
  private readonly again = new Set<string>();
  /** Per APIService name: the OpenAPI share published, and the ETag of the v2 document it was taken from. */
  private readonly openapi = new Map<string, { etag?: string; share: AggregatedShare }>();
  private readonly watchers: CacheWatcher[] = [];
  private stopped = false;

  constructor(client: Client, private readonly registry: ApiRegistry, private readonly opts: AvailabilityOptions) {
    this.apiServices = client.resource({ group: 'apiregistration.k8s.io', version: 'v1', resource: 'apiservices' });
    // Discovery lists every aggregated group-version: a change to the set is a change of discovery.
    const changed = (obj: KObject, old?: KObject) => {
      if (isRecord(obj.spec?.service) || isRecord(old?.spec?.service)) this.registry.touch();
      this.schedule(obj.metadata.name, 0);
    };
    // A status write (this replica's or another's) changes no spec: it is not checked again for it.
    const updated = (obj: KObject, old: KObject) => {
      if (obj.metadata.generation !== old.metadata.generation) changed(obj, old);
    };
    const deleted = (obj: KObject) => {
      this.forget(obj.metadata.name);
      if (isRecord(obj.spec?.service)) this.registry.touch();
    };
    this.informer = new Informer(this.apiServices, { added: changed, updated, deleted }, { onError: (err) => opts.log(`kapi: apiservice availability: ${(err as Error).message}`) });
  }

  async start(): Promise<void> {
    // A Service or its Endpoints changing: the APIServices that name it are checked again at once, as upstream.
    for (const store of [this.opts.services, this.opts.endpoints]) {
      await store.start();
      this.watchers.push(
        store.cache.watch(
          { afterRevision: store.cache.currentRevision },
          {
            onEvent: (_type: CacheEventType, event: CacheEvent<KObject>) => {
              const ns = event.object?.metadata?.namespace;
              const name = event.object?.metadata?.name;
              for (const a of this.informer.list()) {
                if (a.spec?.service?.namespace === ns && a.spec?.service?.name === name) this.schedule(a.metadata.name, 0);
              }
              return true;
            },
            onClose: () => {},
          },
        ),
      );
    }
    await this.informer.start();
  }

  stop(): void {
    this.stopped = true;
    for (const w of this.watchers.splice(0)) w.close();
    this.informer.stop();
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    for (const name of [...this.served.keys()]) this.forget(name);
  }

  /**
   * The backend of a group-version an APIService with a service names: where to send its requests, or null while
   * it is not available (503); undefined: no such APIService (a local group-version, or none).
   */
  backendOf(group: string, version: string): ProxyTarget | null | undefined {
    const apiService = this.informer.get(`${version}.${group}`);
    if (!apiService || !isRecord(apiService.spec?.service)) return undefined;
    const state = this.served.get(apiService.metadata.name)?.state;
    return state?.available && state.target ? state.target : null;
  }

  /** The group-versions of the APIServices with a service, reached or not (discovery lists them all). */
  groupVersions(): AggregatedGroupVersion[] {
    return this.informer
      .list()
      .filter((a) => isRecord(a.spec?.service) && typeof a.spec.group === 'string' && typeof a.spec.version === 'string')
      .map((a) => ({
        group: a.spec.group,
        version: a.spec.version,
        groupPriority: typeof a.spec.groupPriorityMinimum === 'number' ? a.spec.groupPriorityMinimum : undefined,
        versionPriority: typeof a.spec.versionPriority === 'number' ? a.spec.versionPriority : undefined,
        available: this.served.get(a.metadata.name)?.state.available === true,
      }));
  }

  /** Checks an APIService again now (tests, and a Service or its Endpoints that changed). */
  recheck(name: string): Promise<void> {
    return this.run(name);
  }

  private schedule(name: string, delayMs: number): void {
    if (this.stopped) return;
    clearTimeout(this.timers.get(name));
    const timer = setTimeout(() => {
      this.timers.delete(name);
      // Checked again later only while it exists (one deleted during its check is forgotten for good).
      void this.run(name).finally(() => {
        if (this.informer.get(name)) this.schedule(name, this.opts.intervalMs ?? 30_000);
      });
    }, delayMs);
    timer.unref();
    this.timers.set(name, timer);
  }

  private forget(name: string): void {
    clearTimeout(this.timers.get(name));
    this.timers.delete(name);
    this.withdrawOpenApi(name);
    const served = this.served.get(name);
    if (!served) return;
    for (const key of served.keys) {
      const [group, version, resource] = key.split('/');
      this.registry.remove(group, version, resource);
    }
    this.served.delete(name);
  }

  private async run(name: string): Promise<void> {
    if (this.stopped) return;
    // Asked for while a check runs (its spec changed meanwhile): checked again as soon as that one is over.
    if (this.running.has(name)) return void this.again.add(name);
    this.running.add(name);
    try {
      const apiService = this.informer.get(name);
      if (!apiService || !isRecord(apiService.spec?.service)) return this.forget(name);
      const result = await this.check(apiService);
      // Deleted (its routes are gone and stay gone) or changed while it was checked: this result is not its.
      if (this.stopped || !this.current(apiService)) return;
      this.route(apiService, result);
      await this.writeStatus(apiService, result);
      if (result.status !== 'True' || !result.target) this.withdrawOpenApi(name);
      // The backend's documents may make the message (a parse error quotes them): quoted and bounded in the log.
      else await this.publishOpenApi(apiService, result.target).catch((err: Error) => this.opts.log(`kapi: apiservice openapi: ${name}: ${logQuote(err.message)}`));
    } catch (err) {
      this.opts.log(`kapi: apiservice availability: ${name}: ${logQuote((err as Error).message)}`);
    } finally {
      this.running.delete(name);
      if (this.again.delete(name)) this.schedule(name, 0);
    }
  }

  /** Whether the APIService is still as it was when its check began (same object, same spec). */
  private current(apiService: KObject): boolean {
    const now = this.informer.get(apiService.metadata.name);
    return now?.metadata.uid === apiService.metadata.uid && now?.metadata.generation === apiService.metadata.generation;
  }

  private async check(apiService: KObject): Promise<Check> {
    const spec = apiService.spec;
    const ref = spec.service;
    const ns = String(ref.namespace ?? '');
    const name = String(ref.name ?? '');
    const port = typeof ref.port === 'number' ? ref.port : 443;
    const svc = this.opts.services.cache.get(this.opts.services.key(ns, name))?.object;
    if (!svc) return { status: 'False', reason: 'ServiceNotFound', message: `service/${name} in "${ns}" is not present` };
    const svcPort = records(svc.spec?.ports).find((p) => p.port === port);
    if (!svcPort) return { status: 'False', reason: 'ServicePortError', message: `service/${name} in "${ns}" is not listening on port ${port}` };
    const portName = String(svcPort.name ?? '');
    const eps = this.opts.endpoints.cache.get(this.opts.endpoints.key(ns, name))?.object;
    if (!eps) return { status: 'False', reason: 'EndpointsNotFound', message: `cannot find endpoints for service/${name} in "${ns}"` };
    let address: { ip: string; port: number } | undefined;
    for (const subset of records(eps.subsets)) {
      // Only addresses a Pod could have: never link-local (metadata services), multicast or unspecified ones.
      const ip = records(subset.addresses).map((a) => a.ip).find((a) => typeof a === 'string' && usableAddress(a));
      const ports = records(subset.ports);
      const epPort = ports.length === 1 && !portName ? ports[0] : ports.find((p) => String(p.name ?? '') === portName);
      if (typeof ip === 'string' && typeof epPort?.port === 'number') {
        address = { ip, port: epPort.port };
        break;
      }
    }
    if (!address) return { status: 'False', reason: 'MissingEndpoints', message: `endpoints for service/${name} in "${ns}" have no addresses with port name "${portName}"` };
    const host = address.ip.includes(':') ? `[${address.ip}]` : address.ip;
    const target: ProxyTarget = {
      url: new URL(`https://${host}:${address.port}`),
      servername: `${name}.${ns}.svc`,
      ca: typeof spec.caBundle === 'string' && spec.caBundle ? Buffer.from(spec.caBundle, 'base64').toString('utf8') : undefined,
      insecureSkipTLSVerify: spec.insecureSkipTLSVerify === true,
    };
    const path = `/apis/${spec.group}/${spec.version}`;
    const url = `${target.url.origin}${path}`;
    try {
      const list = await this.discover(target, path);
      return { status: 'True', reason: 'Passed', message: 'all checks passed', target, resources: records(list.resources) };
    } catch (err) {
      return { status: 'False', reason: 'FailedDiscoveryCheck', message: `failing or missing response from ${url}: ${(err as Error).message}`, target };
    }
  }

  /** The backend's APIResourceList of the group-version. */
  private async discover(target: ProxyTarget, path: string): Promise<KObject> {
    // As upstream: the check is made as system:kube-aggregator in system:masters, which may always read discovery.
    const res = await this.fetch(target, path, { accept: 'application/json', 'x-remote-user': 'system:kube-aggregator', 'x-remote-group': 'system:masters' }, MAX_DISCOVERY_BYTES);
    if (res.status < 200 || res.status > 299) throw new Error(`bad status from ${target.url.origin}${path}: ${res.status}`);
    const body = JSON.parse(res.body.toString('utf8'));
    if (!isRecord(body)) throw new Error('not an APIResourceList');
    return body as KObject;
  }

  /**
   * The backend's OpenAPI documents, fetched as upstream's downloader does (as system:aggregator, the v2 one again
   * only when its ETag changed): its share of /openapi/v2, and where its v3 document of the group-version is.
   */
  private async publishOpenApi(apiService: KObject, target: ProxyTarget): Promise<void> {
    const publisher = this.opts.openapi;
    if (!publisher) return;
    const name = apiService.metadata.name as string;
    const group = String(apiService.spec.group);
    const version = String(apiService.spec.version);
    const known = this.openapi.get(name);
    const user = { accept: 'application/json', 'x-remote-user': 'system:aggregator' };
    // A backend that sends no ETag: the document's own hash, compared here and never sent back (as upstream).
    const sent = known?.etag && !known.etag.startsWith(LOCAL_ETAG) ? { ...user, 'if-none-match': known.etag } : user;
    const v2 = await this.fetch(target, '/openapi/v2', sent, MAX_OPENAPI_BYTES);
    let part = known?.share.v2;
    let etag = known?.etag;
    if (v2.status === 200) {
      const header = v2.headers.etag;
      etag = typeof header === 'string' && header.length <= 256 ? header : LOCAL_ETAG + createHash('sha256').update(v2.body).digest('hex');
      if (etag !== known?.etag) part = backendPart(JSON.parse(v2.body.toString('utf8')), group, version);
    } else if (v2.status !== 304) [part, etag] = [undefined, undefined];
    const v3 = await this.fetch(target, '/openapi/v3', user, MAX_DISCOVERY_BYTES);
    let v3URL: string | undefined;
    if (v3.status === 200) {
      const doc = JSON.parse(v3.body.toString('utf8')) as unknown;
      const entry = isRecord(doc) && isRecord(doc.paths) && Object.hasOwn(doc.paths, `apis/${group}/${version}`) ? doc.paths[`apis/${group}/${version}`] : undefined;
      const url = isRecord(entry) ? entry.serverRelativeURL : undefined;
      // Only a URL of this group-version's document, which the aggregator sends to this backend.
      if (typeof url === 'string' && url.length <= 1024 && (url === `/openapi/v3/apis/${group}/${version}` || url.startsWith(`/openapi/v3/apis/${group}/${version}?`))) v3URL = url;
    }
    // A backend that publishes no v3 at all: its document is made here from its v2 share, as upstream converts it.
    let v3Converted: Buffer | undefined;
    if (v3.status === 404 && part) {
      v3Converted = known?.share.v2 === part && known.share.v3Converted ? known.share.v3Converted : Buffer.from(JSON.stringify(v3FromBackendPart(part)));
    }
    const priority: [number, number] = [Number(apiService.spec.groupPriorityMinimum) || 0, Number(apiService.spec.versionPriority) || 0];
    // Gone, changed or stopped while the documents were fetched: nothing to publish.
    if (this.stopped || !this.current(apiService)) return;
    if (known && known.etag === etag && known.share.v2 === part && known.share.v3URL === v3URL && known.share.v3Converted === v3Converted && String(known.share.priority) === String(priority)) return;
    const share = { groupVersion: `apis/${group}/${version}`, v2: part, v3URL, v3Converted, priority };
    this.openapi.set(name, { etag, share });
    publisher.setAggregated(name, share);
  }

  private withdrawOpenApi(name: string): void {
    if (this.openapi.delete(name)) this.opts.openapi?.setAggregated(name, undefined);
  }

  /** One exchange with a backend (TLS as the proxy's, the front proxy's certificate), its answer bounded in size and time. */
  private fetch(target: ProxyTarget, path: string, headers: Record<string, string>, maxBytes: number): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> {
    return new Promise((resolve, reject) => {
      const req = https.request(
        {
          hostname: target.url.hostname.replace(/^\[|\]$/g, ''),
          port: target.url.port,
          path,
          method: 'GET',
          headers,
          servername: target.servername,
          ca: target.ca,
          rejectUnauthorized: !target.insecureSkipTLSVerify,
          ...(target.insecureSkipTLSVerify ? { checkServerIdentity: () => undefined } : {}),
          cert: this.opts.proxyClient?.cert,
          key: this.opts.proxyClient?.key,
          agent: false,
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (c: Buffer) => {
            size += c.length;
            if (size > maxBytes) req.destroy(new Error(`the answer to ${path} is larger than ${maxBytes} bytes`));
            else chunks.push(c);
          });
          res.on('end', () => {
            clearTimeout(deadline);
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) });
          });
          res.on('error', reject);
        },
      );
      // A deadline over the whole exchange (a backend that trickles its answer does not hold the check).
      const deadline = setTimeout(() => req.destroy(new Error(`Get "${target.url.origin}${path}": context deadline exceeded`)), DISCOVERY_TIMEOUT_MS);
      req.on('error', (err) => {
        clearTimeout(deadline);
        reject(err);
      });
      req.end();
    });
  }

  /** The backend's resources as routes here (kept when it becomes unavailable: they answer 503). */
  private route(apiService: KObject, result: Check): void {
    const name = apiService.metadata.name as string;
    let served = this.served.get(name);
    if (!served) this.served.set(name, (served = { keys: [], state: { available: false } }));
    const was = served.state.available;
    served.state.available = result.status === 'True';
    // Aggregated discovery marks the version Stale while its backend is not available (one that listed no
    // resources too): its document, and so its ETag, change.
    if (was !== served.state.available) this.registry.touch();
    if (result.target) served.state.target = result.target;
    if (!result.resources) return;
    const group = String(apiService.spec.group);
    const version = String(apiService.spec.version);
    const state = served.state;
    const top = result.resources.filter((r) => typeof r.name === 'string' && !r.name.includes('/'));
    // The same list as last time: nothing to change (discovery is not rebuilt on every check).
    const signature = JSON.stringify([apiService.spec.groupPriorityMinimum, apiService.spec.versionPriority, result.resources]);
    if (served.signature === signature) return;
    served.signature = signature;
    const keys: string[] = [];
    for (const r of top) {
      const subs = result.resources.filter((s) => typeof s.name === 'string' && s.name.startsWith(`${r.name}/`));
      const names = {
        group,
        resource: r.name,
        singular: String(r.singularName ?? ''),
        kind: String(r.kind ?? ''),
        listKind: `${String(r.kind ?? '')}List`,
        namespaced: r.namespaced === true,
        shortNames: Array.isArray(r.shortNames) ? r.shortNames.map(String) : undefined,
        categories: Array.isArray(r.categories) ? r.categories.map(String) : undefined,
      };
      const endpoint: ProxiedEndpoint = {
        virtual: true,
        proxied: true,
        group,
        version,
        names,
        verbs: Array.isArray(r.verbs) ? r.verbs.map(String) : [],
        custom: true,
        // (Its requests are the backend's: the scope is never asked.)
        scope: unstructuredScope(group, version, names),
        groupPriority: typeof apiService.spec.groupPriorityMinimum === 'number' ? apiService.spec.groupPriorityMinimum : undefined,
        versionPriority: typeof apiService.spec.versionPriority === 'number' ? apiService.spec.versionPriority : undefined,
        subresources: {
          status: subs.some((s) => s.name === `${r.name}/status`),
          others: subs
            .filter((s) => s.name !== `${r.name}/status`)
            .map((s) => ({ name: String(s.name).slice(String(r.name).length + 1), verbs: Array.isArray(s.verbs) ? s.verbs.map(String) : [], kind: String(s.kind ?? '') })),
        },
        backend: () => (state.available ? state.target : undefined),
      };
      // kapi's own resources (a CRD's, a built-in) keep their routes: an APIService does not take them over.
      const held = this.registry.route(group, version, String(r.name));
      if (held && !held.proxied) continue;
      this.registry.add(endpoint);
      keys.push(`${group}/${version}/${r.name}`);
    }
    for (const key of served.keys) {
      if (keys.includes(key)) continue;
      const [g, v, res] = key.split('/');
      this.registry.remove(g, v, res);
    }
    served.keys = keys;
  }

  private async writeStatus(apiService: KObject, result: Check): Promise<void> {
    const conditions: KObject[] = records(apiService.status?.conditions);
    const current = conditions.find((c) => c.type === 'Available');
    if (current && current.status === result.status && current.reason === result.reason && current.message === result.message) return;
    const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    const available = {
      type: 'Available',
      status: result.status,
      lastTransitionTime: current && current.status === result.status ? current.lastTransitionTime : now,
      reason: result.reason,
      message: result.message,
    };
    const status = { ...(apiService.status ?? {}), conditions: [...conditions.filter((c) => c.type !== 'Available'), available] };
    await this.apiServices.update(undefined, apiService.metadata.name, { ...apiService, status }, 'status').catch((err: { code?: number }) => {
      // Another replica wrote it first, or it went: the next check sees it.
      if (err.code !== 409 && err.code !== 404) throw err;
    });
  }
}

/** An endpoint address kapi may send its front-proxy certificate to (upstream's endpoint IP validation). */
function usableAddress(ip: string): boolean {
  const v = isIP(ip);
  if (v === 4) {
    const [a, b] = ip.split('.').map(Number);
    return !(a === 0 || (a === 169 && b === 254) || a >= 224);
  }
  if (v === 6) {
    const x = ip.toLowerCase();
    return !(x === '::' || x.startsWith('fe8') || x.startsWith('fe9') || x.startsWith('fea') || x.startsWith('feb') || x.startsWith('ff'));
  }
  return false;
}
