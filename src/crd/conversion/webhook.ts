/**
 * Conversion strategy Webhook: a ConversionReview (v1, or v1beta1 when that is
 * the first version the CRD lists that kapi speaks) POSTed over HTTPS to the
 * webhook's URL or to the service it names (resolved through the Endpoints kapi
 * stores), all of a request's objects in one review. Failures carry upstream's
 * texts inside a 500 InternalError.
 */
import { randomUUID } from 'node:crypto';
import { parseJson, stringifyJson } from '../../machinery/json.js';
import { errors } from '../../machinery/status.js';
import type { KObject } from '../../api/object.js';
import { checkConverted, ConversionRuleError } from './rules.js';
import { postJson, webhookTarget, type ServiceReference, type ServiceResolver } from '../../machinery/webhook-client.js';

export type { ServiceReference, ServiceResolver };
import type { CrConverter } from './types.js';

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
        reply = await postJson(await webhookTarget(config.clientConfig, resolveService), stringifyJson(review), ca, timeoutMs);
      } catch (err) {
        throw fail((err as Error).message);
      }
      if (reply.status !== 200) throw fail(`the server rejected our request (status ${reply.status})`);
      let parsed: KObject;
      try {
        parsed = parseJson(reply.body) as KObject;
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

