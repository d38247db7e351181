/**
 * Content negotiation: which representation a client accepts (JSON, YAML, or a
 * meta.k8s.io Table) and which request body media types a verb takes.
 */
import { errors } from '../machinery/status.js';

export type OutputFormat = 'json' | 'yaml' | 'table';

export interface Negotiated {
  format: OutputFormat;
  /** Table version asked for ('v1' or 'v1beta1') when format is table. */
  tableVersion?: string;
  /** includeObject query for tables. */
  pretty: boolean;
}

export const ACCEPTED_OUTPUT = ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf'];

interface MediaRange {
  type: string;
  params: Record<string, string>;
  q: number;
}

function parseAccept(header: string): MediaRange[] {
  const ranges: MediaRange[] = [];
  for (const part of header.split(',')) {
    const [type, ...paramParts] = part.split(';').map((s) => s.trim());
    if (!type) continue;
    const params: Record<string, string> = {};
    for (const p of paramParts) {
      const eq = p.indexOf('=');
      if (eq > 0) params[p.slice(0, eq).trim().toLowerCase()] = p.slice(eq + 1).trim().replace(/^"|"$/g, '');
    }
    const q = params.q !== undefined ? Number(params.q) : 1;
    ranges.push({ type: type.toLowerCase(), params, q: Number.isFinite(q) ? q : 1 });
  }
  return ranges.sort((a, b) => b.q - a.q);
}

/**
 * Pick the response format. `tables` says whether this endpoint can render a
 * Table; `yaml` whether YAML is allowed (not for watch streams).
 */
export function negotiateOutput(accept: string | undefined, opts: { tables: boolean; yaml?: boolean; pretty?: boolean }): Negotiated {
  const pretty = opts.pretty ?? false;
  if (!accept) return { format: 'json', pretty };
  for (const r of parseAccept(accept)) {
    if (r.q <= 0) continue;
    if (r.params.as === 'Table') {
      if (opts.tables && r.type === 'application/json' && r.params.g === 'meta.k8s.io' && (r.params.v === 'v1' || r.params.v === 'v1beta1')) {
        return { format: 'table', tableVersion: r.params.v, pretty };
      }
      continue;
    }
    if (r.params.as) continue; // PartialObjectMetadata and other conversions: not offered
    if (r.type === 'application/json' || r.type === 'application/*' || r.type === '*/*') return { format: 'json', pretty };
    if ((r.type === 'application/yaml' || r.type === 'text/yaml') && opts.yaml !== false) return { format: 'yaml', pretty };
  }
  throw errors.notAcceptable(opts.yaml === false ? ['application/json', 'application/json;stream=watch'] : ACCEPTED_OUTPUT);
}

export type BodyFormat = 'json' | 'yaml' | 'json-patch' | 'merge-patch' | 'strategic-merge-patch' | 'apply-yaml';

/** The media type of a request body, without parameters (empty means JSON, as upstream). */
export function bodyMediaType(contentType: string | undefined): string {
  const t = (contentType ?? '').split(';')[0].trim().toLowerCase();
  return t || 'application/json';
}

export const PATCH_TYPES: Record<string, BodyFormat> = {
  'application/json-patch+json': 'json-patch',
  'application/merge-patch+json': 'merge-patch',
  'application/strategic-merge-patch+json': 'strategic-merge-patch',
  'application/apply-patch+yaml': 'apply-yaml',
};

export function objectBodyFormat(contentType: string | undefined): BodyFormat {
  const t = bodyMediaType(contentType);
  if (t === 'application/json') return 'json';
  if (t === 'application/yaml' || t === 'text/yaml') return 'yaml';
  throw errors.unsupportedMediaType(['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf']);
}
