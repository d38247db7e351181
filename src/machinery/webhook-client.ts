/**
 * The client side of kube-apiserver's webhooks (conversion, admission): where a webhook is (its URL, or a
 * Service resolved to an address that serves it, named for TLS as `<service>.<namespace>.svc`), and a
 * POST of a JSON review over HTTPS with the webhook's CA bundle, a deadline over the whole exchange and a
 * bound on the answer's size.
 */
import https from 'node:https';

export interface ServiceReference {
  namespace: string;
  name: string;
  path?: string;
  port?: number;
}

/** Resolves a service reference to an address that serves it. */
export type ServiceResolver = (ref: ServiceReference) => Promise<{ host: string; port: number }>;

export interface WebhookTarget {
  url: URL;
  servername?: string;
}

export async function webhookTarget(clientConfig: { url?: string; service?: ServiceReference }, resolve: ServiceResolver): Promise<WebhookTarget> {
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
export function postJson(t: WebhookTarget, body: string, ca: string | undefined, timeoutMs: number): Promise<{ status: number; body: string }> {
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
