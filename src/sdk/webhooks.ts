/**
 * Resources defined in TypeScript, served as CRDs by a cluster's own API server (CRD mode): their strategy hooks
 * run in the manager as admission webhooks, their conversions as the CRD's conversion webhook, over HTTPS as
 * controller-runtime's webhook server serves them (port 9443, `tls.crt`/`tls.key` of a certificate directory).
 *
 * Paths, one per resource for all its versions (kubebuilder's, without the version):
 * `/mutate-<group with dashes>-<kind in lower case>`, `/validate-...`, and `/convert` for every resource.
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync, unwatchFile, watchFile } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { KObject } from '../api/object.js';
import { deepCloneMutable, MAX_JSON_DEPTH, parseJson, stringifyJson } from '../machinery/json.js';
import { errors, StatusError } from '../machinery/status.js';
import { certCoversHost, createCA, issueServingCert, normalizeHosts, rawSubject, type LoadedCA } from '../machinery/x509.js';
import { deepEqual } from '../util/deep-equal.js';
import { isRecord } from '../util/json-object.js';
import type { Client, ResourceClient } from './client.js';
import { listening } from './probes.js';
import { definedConverter, webhookMutate, webhookValidate, type ResourceDefinition } from './resource.js';

// Definitions of any internal form (the type is invariant in it), as ServerOptions.resources.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDefinition = ResourceDefinition<any>;

export interface WebhookServerOptions {
  /** The resources whose hooks and conversions are served. */
  resources: ReadonlyArray<AnyDefinition>;
  /** Default 9443 (controller-runtime's); 0 for any free port (see Manager.webhookAddress). */
  port?: number;
  /** Default: every interface. */
  host?: string;
  /** Where `tls.crt` and `tls.key` are (controller-runtime's default: /tmp/k8s-webhook-server/serving-certs). */
  certDir?: string;
  /** The serving certificate and key (PEM), instead of certDir. */
  certificate?: { certPem: string; keyPem: string };
  /**
   * Certificates made and kept by the manager instead (no cert-manager): a CA and a serving certificate for the
   * webhook Service (`<service>.<namespace>.svc`, `.svc.cluster.local`, and `hosts`), kept in a Secret that the
   * replicas share (made by the first; renewed there from the same CA when due, checked at start and hourly), and
   * the CA written as the caBundle of this server's webhooks in the named configurations and CRDs.
   */
  selfSigned?: SelfSignedWebhooks;
}

export interface SelfSignedWebhooks {
  service: { namespace: string; name: string };
  /** The Secret (kubernetes.io/tls, with ca.crt and ca.key) that holds them; default `<service>-cert` in its namespace. */
  secretName?: string;
  /** More names or addresses the certificate is for (e.g. 127.0.0.1 for a webhook called by URL). */
  hosts?: string[];
  mutatingWebhookConfigurations?: string[];
  validatingWebhookConfigurations?: string[];
  /** CRDs whose conversion webhook the manager serves. */
  conversionCrds?: string[];
}

/** A CA and a serving certificate signed by it for `hosts` (DNS names or IP addresses), P-256, valid a year. */
export function selfSignedCertificate(hosts: string[]): { caPem: string; certPem: string; keyPem: string } {
  const { caPem, certPem, keyPem } = makeCertificate(hosts, undefined);
  return { caPem, certPem, keyPem };
}

interface HeldCertificate {
  caPem: string;
  caKeyPem: string;
  certPem: string;
  keyPem: string;
}

const RENEW_BEFORE_MS = 30 * 24 * 3600 * 1000;

/** The CA of a Secret, when it is one and good for another 30 days (its key with it). */
function loadCA(caPem: string, caKeyPem: string): LoadedCA | undefined {
  try {
    const cert = new X509Certificate(caPem);
    const key = createPrivateKey(caKeyPem);
    if (!cert.ca || !cert.checkPrivateKey(key) || Date.parse(cert.validTo) - Date.now() < RENEW_BEFORE_MS) return undefined;
    return { cert, certPem: caPem, key, keyPem: caKeyPem, subject: rawSubject(cert.raw) };
  } catch {
    return undefined;
  }
}

/** A serving certificate for the hosts from `ca` (a new CA when there is none). */
function makeCertificate(hosts: string[], ca: LoadedCA | undefined): HeldCertificate {
  const now = Date.now();
  const issuer = ca ?? createCA(now, 'kapi-webhook-ca');
  const serving = issueServingCert(issuer, normalizeHosts(hosts), now, hosts[0] ?? 'kapi-webhook');
  return { caPem: issuer.certPem, caKeyPem: issuer.keyPem, ...serving };
}

/** Whether the serving certificate is the CA's, has its key, covers the hosts, and is good for another 30 days. */
function usable(held: HeldCertificate, ca: LoadedCA, hosts: string[]): boolean {
  try {
    const cert = new X509Certificate(held.certPem);
    if (!cert.checkPrivateKey(createPrivateKey(held.keyPem)) || !cert.checkIssued(ca.cert) || !cert.verify(ca.cert.publicKey)) return false;
    if (Date.parse(cert.validTo) - Date.now() < RENEW_BEFORE_MS) return false;
    return normalizeHosts(hosts).every((h) => certCoversHost(cert, h));
  } catch {
    return false;
  }
}

const b64 = (s: string) => Buffer.from(s).toString('base64');
const unb64 = (s: unknown) => (typeof s === 'string' ? Buffer.from(s, 'base64').toString('utf8') : '');

/**
 * The webhooks' certificate from its Secret, renewed there when it is due (a new serving certificate from the
 * same CA, so that the caBundle every replica's certificate answers to stays the same; a new CA only when the CA
 * itself is due). A replica that loses the race to write it reads the winner's.
 */
async function heldCertificate(client: Client, opts: SelfSignedWebhooks, hosts: string[]): Promise<HeldCertificate> {
  const { namespace, name: service } = opts.service;
  const secrets = client.resource({ group: '', version: 'v1', resource: 'secrets' });
  const secretName = opts.secretName ?? `${service}-cert`;
  for (let attempt = 0; attempt < 5; attempt++) {
    const current = await secrets.get(namespace, secretName).catch((err: unknown) => {
      if (err instanceof StatusError && err.code === 404) return undefined;
      throw err;
    });
    const data = (current?.data ?? {}) as Record<string, string>;
    const held: HeldCertificate = { caPem: unb64(data['ca.crt']), caKeyPem: unb64(data['ca.key']), certPem: unb64(data['tls.crt']), keyPem: unb64(data['tls.key']) };
    const ca = loadCA(held.caPem, held.caKeyPem);
    if (current && ca && usable(held, ca, hosts)) return held;
    const made = makeCertificate(hosts, ca);
    const data2 = { 'ca.crt': b64(made.caPem), 'ca.key': b64(made.caKeyPem), 'tls.crt': b64(made.certPem), 'tls.key': b64(made.keyPem) };
    try {
      if (current) {
        if (current.type !== 'kubernetes.io/tls') throw new Error(`Secret ${namespace}/${secretName} is of type ${JSON.stringify(current.type)}, not kubernetes.io/tls: remove it, or name another (selfSigned.secretName)`);
        await secrets.update(namespace, secretName, { ...current, data: data2 });
      } else {
        await secrets.create(namespace, { apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/tls', metadata: { name: secretName, namespace }, data: data2 });
      }
      return made;
    } catch (err) {
      // Another replica wrote it first: read theirs.
      if (!(err instanceof StatusError) || err.code !== 409) throw err;
    }
  }
  throw new Error(`the webhook certificate in Secret ${namespace}/${secretName} kept changing`);
}

/**
 * Reads a cluster-scoped object, lets `change` edit it (false: nothing to write) and updates it; read and changed
 * again when another writer came first (409), five times at most. Other errors (404 among them) are thrown.
 */
export async function updateOnConflict(r: ResourceClient, name: string, change: (o: KObject) => boolean): Promise<void> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const o = await r.get(undefined, name);
    if (!change(o)) return;
    try {
      await r.update(undefined, name, o);
      return;
    } catch (err) {
      if (!(err instanceof StatusError) || err.code !== 409) throw err;
    }
  }
}

/** Writes the CA as the caBundle of the named configurations' webhooks that call this server, and of the CRDs' conversion. */
async function injectCaBundle(client: Client, opts: SelfSignedWebhooks, caPem: string): Promise<void> {
  const caBundle = b64(caPem);
  const ours = (config: { service?: { namespace?: string; name?: string }; url?: string }) => {
    if (config.service) return config.service.namespace === opts.service.namespace && config.service.name === opts.service.name;
    try {
      const host = new URL(config.url ?? '').hostname.replace(/^\[|\]$/g, '');
      return (opts.hosts ?? []).includes(host);
    } catch {
      return false;
    }
  };
  const inject = (resource: { group: string; version: string; resource: string }, name: string, patch: (o: KObject) => boolean) => updateOnConflict(client.resource(resource), name, patch);
  const setHooks = (o: KObject) => {
    let changed = false;
    for (const w of (o.webhooks ?? []) as Array<{ clientConfig?: { caBundle?: string; service?: { namespace?: string; name?: string }; url?: string } }>) {
      if (w.clientConfig && ours(w.clientConfig) && w.clientConfig.caBundle !== caBundle) {
        w.clientConfig.caBundle = caBundle;
        changed = true;
      }
    }
    return changed;
  };
  const admission = (resource: string) => ({ group: 'admissionregistration.k8s.io', version: 'v1', resource });
  for (const n of opts.mutatingWebhookConfigurations ?? []) await inject(admission('mutatingwebhookconfigurations'), n, setHooks);
  for (const n of opts.validatingWebhookConfigurations ?? []) await inject(admission('validatingwebhookconfigurations'), n, setHooks);
  for (const n of opts.conversionCrds ?? []) {
    await inject({ group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions' }, n, (o) => {
      const config = (o.spec?.conversion?.webhook?.clientConfig ?? undefined) as { caBundle?: string; service?: { namespace?: string; name?: string }; url?: string } | undefined;
      if (!config || !ours(config) || config.caBundle === caBundle) return false;
      config.caBundle = caBundle;
      return true;
    });
  }
}

/** The self-signed certificate (SelfSignedWebhooks): from its Secret or made, then its CA written where it is trusted. */
export async function provisionWebhookCertificate(client: Client, opts: SelfSignedWebhooks): Promise<{ certPem: string; keyPem: string; caPem: string }> {
  const { namespace, name: service } = opts.service;
  const hosts = [`${service}.${namespace}.svc`, `${service}.${namespace}.svc.cluster.local`, ...(opts.hosts ?? [])];
  const held = await heldCertificate(client, opts, hosts);
  await injectCaBundle(client, opts, held.caPem);
  return { certPem: held.certPem, keyPem: held.keyPem, caPem: held.caPem };
}

/** controller-runtime's default certificate directory. */
export const DEFAULT_CERT_DIR = '/tmp/k8s-webhook-server/serving-certs';
/** An AdmissionReview or ConversionReview larger than this is refused (the API server's request limit, twice). */
const MAX_REVIEW_BYTES = 6 * 1024 * 1024;

const dashed = (def: AnyDefinition) => `${def.group.replaceAll('.', '-')}-${def.kind.toLowerCase()}`;
export const mutatePath = (def: AnyDefinition) => `/mutate-${dashed(def)}`;
export const validatePath = (def: AnyDefinition) => `/validate-${dashed(def)}`;
export const CONVERT_PATH = '/convert';

/** RFC 6901: a JSON pointer's reference token. */
const pointer = (key: string) => `/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;

type PatchOp = { op: 'add' | 'remove' | 'replace'; path: string; value?: unknown };

/**
 * A JSON patch (RFC 6902) from `before` to `after` as controller-runtime's webhooks answer (gomodules jsonpatch's
 * CreatePatch): members added, removed or replaced where they changed, maps and lists followed down (a list's
 * common elements compared by index, then the extra ones removed from the end or added), a value of another
 * type replaced whole. Without recursion: objects from the API server may be 10,000 levels deep.
 */
export function jsonPatch(before: unknown, after: unknown): PatchOp[] {
  const ops: PatchOp[] = [];
  const work: Array<[unknown, unknown, string]> = [[before, after, '']];
  for (let item = work.pop(); item; item = work.pop()) {
    const [a, b, path] = item;
    if (Array.isArray(a) && Array.isArray(b)) {
      const common = Math.min(a.length, b.length);
      for (let i = common - 1; i >= 0; i--) work.push([a[i], b[i], `${path}/${i}`]);
      for (let i = a.length - 1; i >= common; i--) ops.push({ op: 'remove', path: `${path}/${i}` });
      for (let i = common; i < b.length; i++) ops.push({ op: 'add', path: `${path}/${i}`, value: b[i] ?? null });
    } else if (isRecord(a) && isRecord(b)) {
      // A member set to undefined is no member (JSON leaves it out), as the hooks' result is sent.
      for (const k of Object.keys(a)) if (a[k] !== undefined && b[k] === undefined) ops.push({ op: 'remove', path: path + pointer(k) });
      const keys = Object.keys(b);
      for (let i = keys.length - 1; i >= 0; i--) {
        const k = keys[i];
        if (b[k] === undefined) continue;
        if (a[k] === undefined) ops.push({ op: 'add', path: path + pointer(k), value: b[k] });
        else work.push([a[k], b[k], path + pointer(k)]);
      }
    } else if (!deepEqual(a, b)) {
      // An undefined list element is null in JSON.
      ops.push({ op: 'replace', path, value: b ?? null });
    }
  }
  return ops;
}

interface AdmissionRequest {
  uid: string;
  operation: string;
  name?: string;
  subResource?: string;
  object?: KObject;
  oldObject?: KObject;
}

/** A hook that throws: the review's answer says so (500), as a webhook that fails to decide. */
function failure(err: unknown): { code: number; message: string } {
  if (err instanceof StatusError) return { code: err.code, message: err.message };
  return { code: 500, message: (err as Error)?.message ?? String(err) };
}

function admit(def: AnyDefinition, mutating: boolean, req: AdmissionRequest): Record<string, unknown> {
  const base = { uid: req.uid, allowed: true };
  const obj = req.object;
  // Subresource writes (status, scale) and deletes run no hooks, as where kapi serves the resource.
  if (req.subResource || !obj || (req.operation !== 'CREATE' && req.operation !== 'UPDATE')) return base;
  try {
    // Hooks run only on versions this code knows (a CRD newer than the manager is not guessed at).
    for (const o of [obj, req.oldObject]) {
      if (o && !def.versions.some((v: { name: string }) => o.apiVersion === `${def.group}/${v.name}`)) {
        throw new Error(`no kind "${def.kind}" is registered for version "${String(o.apiVersion)}"`);
      }
    }
    if (mutating) {
      const changed = deepCloneMutable(obj);
      webhookMutate(def, req.operation, changed, req.oldObject);
      const patch = jsonPatch(obj, changed);
      return patch.length === 0 ? base : { ...base, patchType: 'JSONPatch', patch: Buffer.from(stringifyJson(patch)).toString('base64') };
    }
    const errs = webhookValidate(def, req.operation, obj, req.oldObject);
    if (errs.length === 0) return base;
    const status = errors.invalid({ group: def.group, resource: def.kind }, obj.metadata?.name ?? req.name ?? '', errs).toStatus();
    return { uid: req.uid, allowed: false, status };
  } catch (err) {
    const { code, message } = failure(err);
    return { uid: req.uid, allowed: false, status: { metadata: {}, status: 'Failure', code, message } };
  }
}

function convert(defs: ReadonlyArray<AnyDefinition>, request: { uid: string; desiredAPIVersion: string; objects: KObject[] }): Record<string, unknown> {
  try {
    const converted = request.objects.map((o) => {
      const def = defs.find((d) => typeof o.apiVersion === 'string' && o.apiVersion.startsWith(`${d.group}/`) && o.kind === d.kind);
      if (!def) throw new Error(`no conversion for ${String(o.apiVersion)}, Kind=${String(o.kind)}`);
      // A version the definition does not have (a CRD newer or older than this manager) is refused, never relabelled.
      const known = (apiVersion: unknown) => def.versions.some((v: { name: string }) => apiVersion === `${def.group}/${v.name}`);
      if (!known(o.apiVersion)) throw new Error(`no kind "${def.kind}" is registered for version "${String(o.apiVersion)}"`);
      if (!known(request.desiredAPIVersion)) throw new Error(`no kind "${def.kind}" is registered for version "${request.desiredAPIVersion}"`);
      if (o.apiVersion === request.desiredAPIVersion) return o;
      const to = definedConverter(def);
      if (!to) throw new Error(`${def.kind}.${def.group} has one version`);
      return to(o, request.desiredAPIVersion);
    });
    return { uid: request.uid, convertedObjects: converted, result: { metadata: {}, status: 'Success' } };
  } catch (err) {
    return { uid: request.uid, convertedObjects: [], result: { metadata: {}, status: 'Failure', message: failure(err).message } };
  }
}

function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_REVIEW_BYTES) {
        resolve(undefined);
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function reply(res: ServerResponse, code: number, body: unknown): void {
  const text = typeof body === 'string' ? body : stringifyJson(body);
  res.writeHead(code, { 'Content-Type': typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

/** The webhook server's handler: AdmissionReview (admission.k8s.io/v1) and ConversionReview (apiextensions.k8s.io/v1). */
export function webhookHandler(defs: ReadonlyArray<AnyDefinition>) {
  const byPath = new Map<string, { def: AnyDefinition; mutating: boolean }>();
  for (const def of defs) {
    for (const [path, mutating] of [[mutatePath(def), true], [validatePath(def), false]] as const) {
      const other = byPath.get(path)?.def;
      if (other) throw new Error(`webhooks of ${def.kind}.${def.group} and ${other.kind}.${other.group} would share the path ${path}`);
      byPath.set(path, { def, mutating });
    }
  }
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = new URL(req.url ?? '/', 'https://webhook').pathname;
    const route = byPath.get(path);
    if (!route && path !== CONVERT_PATH) return reply(res, 404, '404 page not found\n');
    if (req.method !== 'POST') return reply(res, 405, 'method not allowed\n');
    const body = await readBody(req);
    if (!body) return reply(res, 413, 'request entity too large\n');
    let review: { apiVersion?: string; kind?: string; request?: Record<string, unknown> };
    try {
      // int64 beyond 2^53 kept exact (BigInt), and objects as deep as the API server lets them be.
      review = parseJson(body.toString('utf8'), MAX_JSON_DEPTH + 8) as typeof review;
    } catch (err) {
      return reply(res, 400, `unable to decode the request: ${(err as Error).message}\n`);
    }
    const request = review?.request;
    if (!request || typeof request.uid !== 'string') return reply(res, 400, 'the review has no request with a uid\n');
    if (route) {
      if (review.kind !== 'AdmissionReview') return reply(res, 400, `expected an AdmissionReview, got ${JSON.stringify(review.kind)}\n`);
      return reply(res, 200, { apiVersion: review.apiVersion ?? 'admission.k8s.io/v1', kind: 'AdmissionReview', response: admit(route.def, route.mutating, request as unknown as AdmissionRequest) });
    }
    if (review.kind !== 'ConversionReview' || !Array.isArray(request.objects) || typeof request.desiredAPIVersion !== 'string') {
      return reply(res, 400, 'expected a ConversionReview with objects and a desiredAPIVersion\n');
    }
    return reply(res, 200, { apiVersion: review.apiVersion ?? 'apiextensions.k8s.io/v1', kind: 'ConversionReview', response: convert(defs, request as { uid: string; desiredAPIVersion: string; objects: KObject[] }) });
  };
}

/** The HTTPS server of the webhooks, listening; its certificate from the options (`client` for selfSigned). */
export async function listenWebhooks(opts: WebhookServerOptions, client: Client): Promise<Server> {
  const dir = opts.certDir ?? DEFAULT_CERT_DIR;
  const cert =
    opts.certificate ??
    (opts.selfSigned ? await provisionWebhookCertificate(client, opts.selfSigned) : { certPem: readFileSync(join(dir, 'tls.crt'), 'utf8'), keyPem: readFileSync(join(dir, 'tls.key'), 'utf8') });
  const handle = webhookHandler(opts.resources);
  const server = createServer({ cert: cert.certPem, key: cert.keyPem, minVersion: 'TLSv1.2' }, (req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) reply(res, 500, `internal server error: ${(err as Error)?.message ?? String(err)}\n`);
      else res.destroy();
    });
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  await listening(server, opts.port ?? 9443, opts.host);
  // Renewed certificates are taken up while serving (controller-runtime's certwatcher): the Secret checked and
  // renewed hourly, a certDir's files when they change. What fails to load leaves the one in use.
  let current = cert.certPem;
  const use = (next: { certPem: string; keyPem: string }) => {
    if (next.certPem === current) return;
    server.setSecureContext({ cert: next.certPem, key: next.keyPem, minVersion: 'TLSv1.2' });
    current = next.certPem;
  };
  if (opts.selfSigned) {
    const selfSigned = opts.selfSigned;
    const recheck = async () => {
      try {
        use(await provisionWebhookCertificate(client, selfSigned));
      } catch {
        // The API server unreachable for now, or a pair that does not load: checked again in an hour.
      }
    };
    const timer = setInterval(() => void recheck(), RECHECK_MS);
    timer.unref();
    server.once('close', () => clearInterval(timer));
  } else if (!opts.certificate) {
    const file = join(dir, 'tls.crt');
    const reload = () => {
      try {
        use({ certPem: readFileSync(file, 'utf8'), keyPem: readFileSync(join(dir, 'tls.key'), 'utf8') });
      } catch {
        // A half-written pair (the key not yet renewed with it): the next change loads it.
      }
    };
    watchFile(file, { interval: 10_000, persistent: false }, reload);
    watchFile(join(dir, 'tls.key'), { interval: 10_000, persistent: false }, reload);
    server.once('close', () => {
      unwatchFile(file, reload);
      unwatchFile(join(dir, 'tls.key'), reload);
    });
  }
  return server;
}

/** How often a self-signed certificate's Secret is checked (and renewed there when due). */
const RECHECK_MS = 60 * 60 * 1000;
