/**
 * Resources defined in TypeScript, served as CRDs by a cluster's own API server (CRD mode): their strategy hooks
 * run in the manager as admission webhooks, their conversions as the CRD's conversion webhook, over HTTPS as
 * controller-runtime's webhook server serves them (port 9443, `tls.crt`/`tls.key` of a certificate directory).
 *
 * Paths, one per resource for all its versions (kubebuilder's, without the version):
 * `/mutate-<group with dashes>-<kind in lower case>`, `/validate-...`, and `/convert` for every resource.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { KObject } from '../api/object.js';
import { deepCloneMutable } from '../machinery/json.js';
import { errors, StatusError } from '../machinery/status.js';
import { deepEqual } from '../util/deep-equal.js';
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

/** The HTTPS server of the webhooks, listening; its certificate from the options. */
export async function listenWebhooks(opts: WebhookServerOptions): Promise<Server> {
  const dir = opts.certDir ?? DEFAULT_CERT_DIR;
  const cert = opts.certificate ?? { certPem: readFileSync(join(dir, 'tls.crt'), 'utf8'), keyPem: readFileSync(join(dir, 'tls.key'), 'utf8') };
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
