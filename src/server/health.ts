/** /healthz, /livez, /readyz (with ?verbose and per-check paths) and /version. */
import type { Response } from './exchange.js';
import { KUBERNETES_VERSION } from '../api/version.js';

const CHECKS = [
  'ping',
  'log',
  'etcd',
  'poststarthook/start-apiextensions-informers',
  'poststarthook/start-apiextensions-controllers',
  'poststarthook/crd-informer-synced',
];

export function isHealthPath(path: string): boolean {
  return /^\/(healthz|livez|readyz)(\/.*)?$/.test(path);
}

export function serveHealth(path: string, query: URLSearchParams, res: Response, ready: boolean): void {
  const [, endpoint, check] = /^\/(healthz|livez|readyz)(?:\/(.*))?$/.exec(path)!;
  const checks = endpoint === 'readyz' ? [...CHECKS, 'shutdown'] : CHECKS;
  const ok = endpoint !== 'readyz' || ready;
  if (check) {
    if (!checks.includes(check)) return text(res, 404, '404 page not found\n');
    return text(res, ok ? 200 : 500, ok ? 'ok' : `[-]${check} failed: reason withheld\n`);
  }
  if (query.has('verbose')) {
    const lines = checks.map((c) => (ok || c !== 'shutdown' ? `[+]${c} ok` : `[-]${c} failed: reason withheld`));
    return text(res, ok ? 200 : 500, `${lines.join('\n')}\n${endpoint} check ${ok ? 'passed' : 'failed'}\n`);
  }
  text(res, ok ? 200 : 500, ok ? 'ok' : `${endpoint} check failed\n`);
}

export function versionInfo(): Record<string, string> {
  return {
    ...KUBERNETES_VERSION,
    gitCommit: '0000000000000000000000000000000000000000',
    gitTreeState: 'clean',
    buildDate: '2026-11-21T00:00:00Z',
    goVersion: `node${process.versions.node}`,
    compiler: 'tsc',
    platform: `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}`,
  };
}

function text(res: Response, code: number, body: string): void {
  res.writeHead(code, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}
