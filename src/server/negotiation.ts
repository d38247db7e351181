/**
 * Content negotiation as upstream's (endpoints/handlers/negotiation): which
 * serializer a response takes, whether it is converted on the way out (a
 * meta.k8s.io Table or PartialObjectMetadata), and which media types a
 * request body may have.
 */
import { errors } from '../machinery/status.js';
import { ACCEPTED_OUTPUT, ACCEPTED_STREAMS, SERIALIZERS, type Serializer } from './serializers.js';

export { ACCEPTED_OUTPUT };

export type ConversionKind = 'Table' | 'PartialObjectMetadata' | 'PartialObjectMetadataList';
export type MetaVersion = 'v1' | 'v1beta1';

export interface Negotiated {
  serializer: Serializer;
  /** `as=…;g=meta.k8s.io;v=…`: the response is converted to this kind first. */
  conversion?: { kind: ConversionKind; version: MetaVersion };
  pretty: boolean;
}

export const JSON_OUTPUT: Negotiated = { serializer: SERIALIZERS[0], pretty: false };

interface MediaRange {
  type: string;
  subtype: string;
  params: Record<string, string>;
  q: number;
}

/** goautoneg.ParseAccept: clauses by q, then concrete types before wildcards. */
function parseAccept(header: string): MediaRange[] {
  const ranges: MediaRange[] = [];
  for (const part of header.split(',')) {
    const [range, ...paramParts] = part.split(';').map((s) => s.trim());
    if (!range) continue;
    const slash = range.indexOf('/');
    let type: string;
    let subtype: string;
    if (slash < 0) {
      if (range !== '*') continue;
      type = subtype = '*';
    } else {
      type = range.slice(0, slash).toLowerCase();
      subtype = range.slice(slash + 1).toLowerCase();
    }
    const params: Record<string, string> = {};
    let q = 1;
    for (const p of paramParts) {
      const eq = p.indexOf('=');
      if (eq <= 0) continue;
      const k = p.slice(0, eq).trim();
      const v = p.slice(eq + 1).trim();
      if (k === 'q') q = Number(v);
      else params[k] = v;
    }
    ranges.push({ type, subtype, params, q: Number.isFinite(q) ? q : 0 });
  }
  const rank = (r: MediaRange) => (r.type === '*' ? 2 : r.subtype === '*' ? 1 : 0);
  return ranges.map((r, i) => ({ r, i })).sort((a, b) => b.r.q - a.r.q || rank(a.r) - rank(b.r) || a.i - b.i).map((x) => x.r);
}

export interface OutputRestrictions {
  /** The endpoint can render a Table (it has a table convertor). */
  tables: boolean;
  /** A watch: the serializer must have a stream form. */
  stream?: boolean;
  /** ?pretty=true. */
  pretty?: boolean;
  /**
   * The endpoint's objects have protobuf messages (built-in kinds). Otherwise protobuf carries only
   * PartialObjectMetadata(List), as for a custom resource (upstream would fail to encode the rest).
   */
  protobuf?: boolean;
}

/**
 * NegotiateOutputMediaType: the first Accept clause (by q) that a serializer
 * takes with parameters the endpoint allows. No Accept header means JSON; a
 * watch whose chosen format cannot stream is refused, as upstream does.
 */
export function negotiateOutput(accept: string | undefined, opts: OutputRestrictions): Negotiated {
  const pretty = opts.pretty ?? false;
  if (!accept) return pretty ? { ...JSON_OUTPUT, pretty } : JSON_OUTPUT;
  for (const clause of parseAccept(accept)) {
    if (clause.q <= 0) continue;
    for (const serializer of SERIALIZERS) {
      const [type, subtype] = serializer.mediaType.split('/');
      const matches = clause.type === '*' || (clause.type === type && (clause.subtype === '*' || clause.subtype === subtype));
      if (!matches) continue;
      const chosen = acceptOptions(clause.params, serializer, subtype, opts);
      if (!chosen) continue;
      if (opts.stream && !serializer.streamMediaType) throw errors.notAcceptable(ACCEPTED_STREAMS);
      if (pretty) chosen.pretty = true;
      return chosen;
    }
  }
  throw errors.notAcceptable(opts.stream ? ACCEPTED_STREAMS : ACCEPTED_OUTPUT);
}

/** How a discovery document goes out: the serializer, and aggregated discovery's version when that was asked for. */
export interface DiscoveryOutput {
  serializer: Serializer;
  aggregated?: 'v2' | 'v2beta1';
}

/**
 * Discovery's negotiation: the first Accept clause (by q) that names a serializer, either plainly (the
 * legacy documents) or as `as=APIGroupDiscoveryList;g=apidiscovery.k8s.io;v=v2|v2beta1` (aggregated
 * discovery; in protobuf only v2, whose message kapi knows). No clause fits: JSON, legacy.
 */
export function negotiateDiscovery(accept: string | undefined, aggregatable: boolean): DiscoveryOutput {
  if (accept) {
    for (const clause of parseAccept(accept)) {
      if (clause.q <= 0) continue;
      const { as, g, v } = clause.params;
      for (const serializer of SERIALIZERS) {
        const [type, subtype] = serializer.mediaType.split('/');
        if (!(clause.type === '*' || (clause.type === type && (clause.subtype === '*' || clause.subtype === subtype)))) continue;
        if (as === undefined && g === undefined && v === undefined) return { serializer };
        if (!aggregatable || as !== 'APIGroupDiscoveryList' || g !== 'apidiscovery.k8s.io') continue;
        if (v === 'v2' || (v === 'v2beta1' && serializer.name !== 'protobuf')) return { serializer, aggregated: v };
      }
    }
  }
  return { serializer: SERIALIZERS[0] };
}

/**
 * The serializer an error goes out in (ErrorNegotiated with DefaultEndpointRestrictions): the first
 * acceptable clause without a conversion, else JSON, as WriteRawJSON does when nothing fits.
 */
export function errorSerializer(accept: string | undefined): Serializer {
  if (accept) {
    for (const clause of parseAccept(accept)) {
      if (clause.q <= 0 || clause.params.as !== undefined || clause.params.g !== undefined || clause.params.v !== undefined) continue;
      for (const serializer of SERIALIZERS) {
        const [type, subtype] = serializer.mediaType.split('/');
        if (clause.type === '*' || (clause.type === type && (clause.subtype === '*' || clause.subtype === subtype))) return serializer;
      }
    }
  }
  return SERIALIZERS[0];
}

/** acceptMediaTypeOptions with the endpoint's AllowsMediaTypeTransform: undefined when the clause is not for this endpoint. */
function acceptOptions(params: Record<string, string>, serializer: Serializer, subtype: string, opts: OutputRestrictions): Negotiated | undefined {
  const out: Negotiated = { serializer, pretty: false };
  let as: string | undefined;
  let g: string | undefined;
  let v: string | undefined;
  for (const [k, value] of Object.entries(params)) {
    if (k === 'as') as = value;
    else if (k === 'g') g = value;
    else if (k === 'v') v = value;
    else if (k === 'stream') {
      if (value !== '' && (!serializer.streamMediaType || value !== 'watch')) return undefined;
    } else if (k === 'sv') {
      if (value !== '' && value !== 'v1') return undefined;
    } else if (k === 'pretty') out.pretty = value === '1';
  }
  const protobuf = serializer.name === 'protobuf';
  if (as === undefined && g === undefined && v === undefined) return protobuf && !opts.protobuf ? undefined : out;
  if (g !== 'meta.k8s.io' || (v !== 'v1' && v !== 'v1beta1')) return undefined;
  switch (as) {
    case 'Table':
      if (!opts.tables || (subtype !== 'json' && subtype !== 'yaml')) return undefined;
      break;
    case 'PartialObjectMetadata':
    case 'PartialObjectMetadataList':
      // meta.k8s.io/v1beta1's PartialObjectMetadata has no message kapi knows.
      if (protobuf && v !== 'v1') return undefined;
      break;
    default:
      return undefined;
  }
  out.conversion = { kind: as, version: v };
  return out;
}

export type BodyFormat = 'json' | 'yaml' | 'protobuf' | 'json-patch' | 'merge-patch' | 'strategic-merge-patch' | 'apply-yaml';

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

/** The format of a create or update body; protobuf only where the endpoint's kind has a message (`protobuf`). */
export function objectBodyFormat(contentType: string | undefined, protobuf = false): BodyFormat {
  const t = bodyMediaType(contentType);
  if (t === 'application/json') return 'json';
  if (t === 'application/yaml') return 'yaml';
  if (t === 'application/vnd.kubernetes.protobuf' && protobuf) return 'protobuf';
  throw errors.unsupportedMediaType(['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf']);
}
