/**
 * Resources defined in TypeScript, served as CRDs by a cluster's own API server (CRD mode): their strategy hooks
 * run in the manager as admission webhooks, their conversions as the CRD's conversion webhook, over HTTPS as
 * controller-runtime's webhook server serves them (port 9443, `tls.crt`/`tls.key` of a certificate directory).
 *
 * Paths, one per resource for all its versions (kubebuilder's, without the version):
 * `/mutate-<group with dashes>-<kind in lower case>`, `/validate-...`, and `/convert` for every resource.
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { KObject } from '../api/object.js';
import { deepCloneMutable } from '../machinery/json.js';
import { errors, StatusError } from '../machinery/status.js';
import { certCoversHost, createCA, issueServingCert, normalizeHosts } from '../machinery/x509.js';
import { deepEqual } from '../util/deep-equal.js';
import type { Client } from './client.js';
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
   * replicas share (made by the first), and the CA written as the caBundle of the named webhook configurations'
   * webhooks and CRDs' conversion webhooks at each start.
   */
  selfSigned?: SelfSignedWebhooks;
}

export interface SelfSignedWebhooks {
  service: { namespace: string; name: string };
  /** The Secret (type kubernetes.io/tls, with ca.crt) that holds them; default `<service>-cert` in its namespace. */
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
  const now = Date.now();
  const ca = createCA(now, 'kapi-webhook-ca');
  const serving = issueServingCert(ca, normalizeHosts(hosts), now, hosts[0] ?? 'kapi-webhook');
  return { caPem: ca.certPem, ...serving };
}

/** Whether a certificate and key are usable for the hosts for at least another 30 days. */
function usable(certPem: string, keyPem: string, hosts: string[]): boolean {
  try {
    const cert = new X509Certificate(certPem);
    if (!cert.checkPrivateKey(createPrivateKey(keyPem))) return false;
    if (Date.parse(cert.validTo) - Date.now() < 30 * 24 * 3600 * 1000) return false;
    return normalizeHosts(hosts).every((h) => certCoversHost(cert, h));
  } catch {
    return false;
  }
}

const b64 = (s: string) => Buffer.from(s).toString('base64');
const unb64 = (s: unknown) => (typeof s === 'string' ? Buffer.from(s, 'base64').toString('utf8') : '');

/**
 * The self-signed certificate of the webhooks, from its Secret or made and stored there (a replica that loses the
 * race to create it reads the winner's), then the CA as every named configuration's caBundle.
 */
export async function provisionWebhookCertificate(client: Client, opts: SelfSignedWebhooks): Promise<{ certPem: string; keyPem: string }> {
  const { namespace, name: service } = opts.service;
  const hosts = [`${service}.${namespace}.svc`, `${service}.${namespace}.svc.cluster.local`, ...(opts.hosts ?? [])];
  const secrets = client.resource({ group: '', version: 'v1', resource: 'secrets' });
  const secretName = opts.secretName ?? `${service}-cert`;
  let cert: { caPem: string; certPem: string; keyPem: string } | undefined;
  for (let attempt = 0; attempt < 5 && !cert; attempt++) {
    const current = await secrets.get(namespace, secretName).catch((err: unknown) => {
      if (err instanceof StatusError && err.code === 404) return undefined;
      throw err;
    });
    const data = (current?.data ?? {}) as Record<string, string>;
    const held = { caPem: unb64(data['ca.crt']), certPem: unb64(data['tls.crt']), keyPem: unb64(data['tls.key']) };
    if (current && usable(held.certPem, held.keyPem, hosts)) {
      cert = held;
      break;
    }
    const made = selfSignedCertificate(hosts);
    const secret = { apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/tls', metadata: { name: secretName, namespace }, data: { 'ca.crt': b64(made.caPem), 'tls.crt': b64(made.certPem), 'tls.key': b64(made.keyPem) } };
    try {
      if (current) await secrets.update(namespace, secretName, { ...secret, metadata: { ...secret.metadata, resourceVersion: current.metadata.resourceVersion } });
      else await secrets.create(namespace, secret);
      cert = made;
    } catch (err) {
      // Another replica wrote it first: read theirs.
      if (!(err instanceof StatusError) || (err.code !== 409 && err.code !== 422)) throw err;
    }
  }
  if (!cert) throw new Error(`the webhook certificate in Secret ${namespace}/${secretName} kept changing`);
  const caBundle = b64(cert.caPem);
  const inject = async (resource: { group: string; version: string; resource: string }, name: string, patch: (o: KObject) => boolean) => {
    const r = client.resource(resource);
    for (let attempt = 0; attempt < 5; attempt++) {
      const o = await r.get(undefined, name);
      if (!patch(o)) return;
      try {
        await r.update(undefined, name, o);
        return;
      } catch (err) {
        if (!(err instanceof StatusError) || err.code !== 409) throw err;
      }
    }
  };
  const setHooks = (o: KObject) => {
    let changed = false;
    for (const w of (o.webhooks ?? []) as Array<{ clientConfig?: { caBundle?: string } }>) {
      if (w.clientConfig && w.clientConfig.caBundle !== caBundle) {
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
      const config = (o.spec?.conversion?.webhook?.clientConfig ?? undefined) as { caBundle?: string } | undefined;
      if (!config || config.caBundle === caBundle) return false;
      config.caBundle = caBundle;
      return true;
    });
  }
  return { certPem: cert.certPem, keyPem: cert.keyPem };
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

/** A JSON patch from `before` to `after`, by their top-level members (each changed one replaced whole). */
export function topLevelPatch(before: KObject, after: KObject): Array<{ op: string; path: string; value?: unknown }> {
  const ops: Array<{ op: string; path: string; value?: unknown }> = [];
  for (const k of Object.keys(before)) if (!Object.hasOwn(after, k)) ops.push({ op: 'remove', path: pointer(k) });
  for (const k of Object.keys(after)) {
    if (!Object.hasOwn(before, k)) ops.push({ op: 'add', path: pointer(k), value: after[k] });
    else if (!deepEqual(before[k], after[k])) ops.push({ op: 'replace', path: pointer(k), value: after[k] });
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
    if (mutating) {
      const changed = deepCloneMutable(obj);
      webhookMutate(def, req.operation, changed, req.oldObject);
      const patch = topLevelPatch(obj, changed);
      return patch.length === 0 ? base : { ...base, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(patch)).toString('base64') };
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
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(code, { 'Content-Type': typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

/** The webhook server's handler: AdmissionReview (admission.k8s.io/v1) and ConversionReview (apiextensions.k8s.io/v1). */
export function webhookHandler(defs: ReadonlyArray<AnyDefinition>) {
  const byPath = new Map<string, { def: AnyDefinition; mutating: boolean }>();
  for (const def of defs) {
    byPath.set(mutatePath(def), { def, mutating: true });
    byPath.set(validatePath(def), { def, mutating: false });
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
      review = JSON.parse(body.toString('utf8')) as typeof review;
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
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 9443, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}
