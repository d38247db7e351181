/**
 * Conversion strategy Webhook: a ConversionReview (v1, or v1beta1 when that is
 * the first version the CRD lists that kapi speaks) POSTed over HTTPS to the
 * webhook's URL or to the service it names (resolved through the Endpoints kapi
 * stores), all of a request's objects in one review. Failures carry upstream's
 * texts inside a 500 InternalError.
 */
import { randomUUID } from 'node:crypto';
import https from 'node:https';
import { parseJson, stringifyJson } from '../../machinery/json.js';
import { errors } from '../../machinery/status.js';
import type { KObject } from '../../registry/types.js';
import { checkConverted, ConversionRuleError } from './rules.js';
import type { CrConverter } from './types.js';

export interface ServiceReference {
  namespace: string;
  name: string;
  path?: string;
  port?: number;
}

/** Resolves a service reference to an address that serves it. */
export type ServiceResolver = (ref: ServiceReference) => Promise<{ host: string; port: number }>;

export interface WebhookConfig {
  group: string;
  kind: string;
  clientConfig: { url?: string; service?: ServiceReference; caBundle?: string };
  conversionReviewVersions: string[];
}

export function webhookConverter(config: WebhookConfig, resolveService: ServiceResolver, timeoutMs: number): CrConverter {
  const reviewVersion = config.conversionReviewVersions.find((v) => v === 'v1' || v === 'v1beta1') ?? 'v1';
  const ca = config.clientConfig.caBundle ? Buffer.from(config.clientConfig.caBundle, 'base64').toString('utf8') : undefined;
  return {
    trivial: false,
    async convert(objects, desiredApiVersion) {
      const toSend = objects.filter((o) => o.apiVersion !== desiredApiVersion);
      if (toSend.length === 0) return objects;
      const gvk = `${desiredApiVersion}, Kind=${config.kind}`;
      const fail = (why: string) => errors.internal(`conversion webhook for ${gvk} failed: ${why}`);
      const uid = randomUUID();
      const review = {
        kind: 'ConversionReview',
        apiVersion: `apiextensions.k8s.io/${reviewVersion}`,
        request: { uid, desiredAPIVersion: desiredApiVersion, objects: toSend },
      };
      let reply: { status: number; body: string };
      try {
        reply = await post(await target(config.clientConfig, resolveService), stringifyJson(review), ca, timeoutMs);
      } catch (err) {
        throw fail((err as Error).message);
      }
      if (reply.status !== 200) throw fail(`the server rejected our request (status ${reply.status})`);
      let parsed: any;
      try {
        parsed = parseJson(reply.body);
      } catch (err) {
        throw fail(`unable to decode the webhook response: ${(err as Error).message}`);
      }
      const response = parsed?.response;
      if (!response) throw fail('conversion webhook response was absent');
      if (response.uid !== uid) throw fail(`expected response.uid="${uid}", got "${response.uid}"`);
      if (response.result?.status && response.result.status !== 'Success') throw fail(response.result.message ?? 'conversion failed');
      const converted: unknown[] = Array.isArray(response.convertedObjects) ? response.convertedObjects : [];
      if (converted.length !== toSend.length) throw fail(`returned ${converted.length} objects, expected ${toSend.length}`);
      const byOriginal = new Map<KObject, KObject>();
      try {
        toSend.forEach((o, i) => byOriginal.set(o, checkConverted(o, converted[i], desiredApiVersion)));
      } catch (err) {
        if (err instanceof ConversionRuleError) throw fail(err.message);
        throw err;
      }
      return objects.map((o) => byOriginal.get(o) ?? o);
    },
  };
}

interface Target {
  url: URL;
  servername?: string;
}

async function target(clientConfig: WebhookConfig['clientConfig'], resolve: ServiceResolver): Promise<Target> {
  if (clientConfig.url) return { url: new URL(clientConfig.url) };
  const svc = clientConfig.service!;
  const addr = await resolve(svc);
  const host = addr.host.includes(':') ? `[${addr.host}]` : addr.host;
  return { url: new URL(`https://${host}:${addr.port}${svc.path ?? ''}`), servername: `${svc.name}.${svc.namespace}.svc` };
}

/**
 * The longest answer a webhook may give: twice what it was sent, and 3 MiB
 * more (a converted object may grow by its defaults, not without bound).
 */
export function maxResponseBytes(requestBytes: number): number {
  return 2 * requestBytes + 3 * 1024 * 1024;
}

/** POST the review; the timeout covers the whole exchange, a webhook that trickles its answer included. */
function post(t: Target, body: string, ca: string | undefined, timeoutMs: number): Promise<{ status: number; body: string }> {
  const limit = maxResponseBytes(Buffer.byteLength(body));
  return new Promise((resolveReply, rejectReply) => {
    const resolve = (r: { status: number; body: string }) => {
      clearTimeout(deadline);
      resolveReply(r);
    };
    const reject = (e: Error) => {
      clearTimeout(deadline);
      rejectReply(e);
    };
    const req = https.request(
      t.url,
      {
        method: 'POST',
        ca,
        servername: t.servername,
        headers: { 'Content-Type': 'application/json', Accept: 'application/json', 'Content-Length': Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > limit) req.destroy(new Error(`the response of ${t.url.href} is larger than ${limit} bytes`));
          else chunks.push(c);
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    const deadline = setTimeout(() => req.destroy(new Error(`Post "${t.url.href}": context deadline exceeded`)), timeoutMs);
    req.on('error', reject);
    req.end(body);
  });
}
