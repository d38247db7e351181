/** A minimal client for kapi's own commands: reads a kubeconfig (server, CA, token) and sends JSON over HTTPS. */
import { readFileSync } from 'node:fs';
import https from 'node:https';
import { parseJson } from '../machinery/json.js';
import { parseYaml } from '../machinery/yaml.js';
import type { KObject } from '../api/object.js';

export interface KubeClient {
  request(method: string, path: string, body?: unknown, contentType?: string): Promise<{ status: number; json: KObject }>;
}

export function clientFromKubeconfig(path: string): KubeClient {
  const config = parseYaml(readFileSync(path, 'utf8')) as KObject;
  const contextName = config['current-context'];
  const context = (config.contexts ?? []).find((c: KObject) => c.name === contextName)?.context ?? config.contexts?.[0]?.context;
  const cluster = (config.clusters ?? []).find((c: KObject) => c.name === context?.cluster)?.cluster ?? config.clusters?.[0]?.cluster;
  const user = (config.users ?? []).find((u: KObject) => u.name === context?.user)?.user ?? config.users?.[0]?.user ?? {};
  if (!cluster?.server) throw new Error(`${path}: no cluster server found`);
  const ca = cluster['certificate-authority-data'] ? Buffer.from(cluster['certificate-authority-data'], 'base64').toString('utf8') : undefined;
  const agent = new https.Agent({ ca, keepAlive: true });
  return {
    request(method, p, body, contentType = 'application/json') {
      const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
      const headers: Record<string, string> = { Accept: 'application/json' };
      if (user.token) headers.Authorization = `Bearer ${user.token}`;
      if (payload) {
        headers['Content-Type'] = contentType;
        headers['Content-Length'] = String(payload.length);
      }
      return new Promise((resolve, reject) => {
        const req = https.request(new URL(p, cluster.server), { method, agent, headers, timeout: 30_000 }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let json: unknown;
            try {
              json = parseJson(text);
            } catch {
              json = { message: text };
            }
            resolve({ status: res.statusCode ?? 0, json: json as KObject });
          });
        });
        req.on('timeout', () => req.destroy(new Error(`${method} ${p}: timed out`)));
        req.on('error', reject);
        req.end(payload);
      });
    },
  };
}
