/**
 * Canonical wire form of CRD objects: what kube-apiserver would emit after decoding
 * a JSON body into its Go structs and encoding it again. Fields come in struct order,
 * unknown fields are dropped, `omitempty` zero values disappear, non-omitempty ones
 * appear as Go's zero values (`"plural": ""`, `"conditions": null`), map keys are sorted.
 * Comparing canonical forms gives apimachinery's Semantic.DeepEqual for these types.
 * Schemas nest as deep as a request may (10,000 levels): encoding is a tree operation.
 */
import { treeOperation } from '../../util/tree-operation.js';
import { clone, isObject, type JSONObject } from './json-util.js';

type Desc =
  | { k: 'string' }
  | { k: 'bool' }
  | { k: 'number' }
  | { k: 'raw' }
  | { k: 'ptr'; of: Desc }
  | { k: 'slice'; of: Desc }
  | { k: 'map'; of: Desc }
  | { k: 'struct'; fields: Field[] }
  | { k: 'lazy'; get: () => Desc }
  /** A type that depends on the value (a schema or a bool, a schema or a list): `pick` tells which, for non-null values. */
  | { k: 'choice'; pick: (v: unknown) => Desc }
  /** The value as it is. */
  | { k: 'same' }
  /** Always nil. */
  | { k: 'nil' };

interface Field {
  key: string;
  d: Desc;
  omit: boolean;
}

const S: Desc = { k: 'string' };
const B: Desc = { k: 'bool' };
const N: Desc = { k: 'number' };
const RAW: Desc = { k: 'raw' };
const ptr = (of: Desc): Desc => ({ k: 'ptr', of });
const slice = (of: Desc): Desc => ({ k: 'slice', of });
const map = (of: Desc): Desc => ({ k: 'map', of });
const lazy = (get: () => Desc): Desc => ({ k: 'lazy', get });

/** Struct from `key` (plain) and `key,omitempty` (suffix `?`) entries. */
function struct(entries: [string, Desc][]): Desc {
  return {
    k: 'struct',
    fields: entries.map(([key, d]) => (key.endsWith('?') ? { key: key.slice(0, -1), d, omit: true } : { key, d, omit: false })),
  };
}

const schemaRef = lazy(() => SCHEMA);
const SCHEMA_PTR = ptr(schemaRef);
const SCHEMA_LIST = slice(schemaRef);
const STRINGS = slice(S);
const SAME: Desc = { k: 'same' };
const NIL: Desc = { k: 'nil' };
const SCHEMA_OR_BOOL: Desc = { k: 'choice', pick: (v) => (typeof v === 'boolean' ? SAME : SCHEMA_PTR) };

const SCHEMA: Desc = struct([
  ['id?', S],
  ['$schema?', S],
  ['$ref?', ptr(S)],
  ['description?', S],
  ['type?', S],
  ['format?', S],
  ['title?', S],
  ['default?', ptr(RAW)],
  ['maximum?', ptr(N)],
  ['exclusiveMaximum?', B],
  ['minimum?', ptr(N)],
  ['exclusiveMinimum?', B],
  ['maxLength?', ptr(N)],
  ['minLength?', ptr(N)],
  ['pattern?', S],
  ['maxItems?', ptr(N)],
  ['minItems?', ptr(N)],
  ['uniqueItems?', B],
  ['multipleOf?', ptr(N)],
  ['enum?', slice(RAW)],
  ['maxProperties?', ptr(N)],
  ['minProperties?', ptr(N)],
  ['required?', slice(S)],
  ['items?', { k: 'choice', pick: (v) => (Array.isArray(v) ? (v.length ? SCHEMA_LIST : NIL) : SCHEMA_PTR) }],
  ['allOf?', slice(schemaRef)],
  ['oneOf?', slice(schemaRef)],
  ['anyOf?', slice(schemaRef)],
  ['not?', ptr(schemaRef)],
  ['properties?', map(schemaRef)],
  ['additionalProperties?', SCHEMA_OR_BOOL],
  ['patternProperties?', map(schemaRef)],
  ['dependencies?', map({ k: 'choice', pick: (v) => (Array.isArray(v) ? STRINGS : SCHEMA_PTR) })],
  ['additionalItems?', SCHEMA_OR_BOOL],
  ['definitions?', map(schemaRef)],
  ['externalDocs?', ptr(struct([['description?', S], ['url?', S]]))],
  ['example?', ptr(RAW)],
  ['nullable?', B],
  ['x-kubernetes-preserve-unknown-fields?', ptr(B)],
  ['x-kubernetes-embedded-resource?', B],
  ['x-kubernetes-int-or-string?', B],
  ['x-kubernetes-list-map-keys?', slice(S)],
  ['x-kubernetes-list-type?', ptr(S)],
  ['x-kubernetes-map-type?', ptr(S)],
  [
    'x-kubernetes-validations?',
    slice(struct([['rule', S], ['message?', S], ['messageExpression?', S], ['reason?', ptr(S)], ['fieldPath?', S], ['optionalOldSelf?', ptr(B)]])),
  ],
]);


const VALIDATION = struct([['openAPIV3Schema?', ptr(SCHEMA)]]);
const SUBRESOURCES = struct([
  ['status?', ptr(struct([]))],
  ['scale?', ptr(struct([['specReplicasPath', S], ['statusReplicasPath', S], ['labelSelectorPath?', ptr(S)]]))],
]);
const SELECTABLE = struct([['jsonPath', S]]);
const NAMES = struct([
  ['plural', S],
  ['singular?', S],
  ['shortNames?', slice(S)],
  ['kind', S],
  ['listKind?', S],
  ['categories?', slice(S)],
]);
const CLIENT_CONFIG = struct([
  ['url?', ptr(S)],
  ['service?', ptr(struct([['namespace', S], ['name', S], ['path?', ptr(S)], ['port?', ptr(N)]]))],
  ['caBundle?', S],
]);
const CONDITION = struct([['type', S], ['status', S], ['lastTransitionTime?', ptr(RAW)], ['reason?', S], ['message?', S]]);
const STATUS = struct([['conditions', slice(CONDITION)], ['acceptedNames', NAMES], ['storedVersions', slice(S)]]);

function column(pathKey: string): Desc {
  return struct([['name', S], ['type', S], ['format?', S], ['description?', S], ['priority?', N], [pathKey, S]]);
}

function version(pathKey: string): Desc {
  return struct([
    ['name', S],
    ['served', B],
    ['storage', B],
    ['deprecated?', B],
    ['deprecationWarning?', ptr(S)],
    ['schema?', ptr(VALIDATION)],
    ['subresources?', ptr(SUBRESOURCES)],
    ['additionalPrinterColumns?', slice(column(pathKey))],
    ['selectableFields?', slice(SELECTABLE)],
  ]);
}

const SPEC_V1 = struct([
  ['group', S],
  ['names', NAMES],
  ['scope', S],
  ['versions', slice(version('jsonPath'))],
  ['conversion?', ptr(struct([['strategy', S], ['webhook?', ptr(struct([['clientConfig?', ptr(CLIENT_CONFIG)], ['conversionReviewVersions', slice(S)]]))]]))],
  ['preserveUnknownFields?', B],
]);

const SPEC_V1BETA1 = struct([
  ['group', S],
  ['version?', S],
  ['names', NAMES],
  ['scope', S],
  ['validation?', ptr(VALIDATION)],
  ['subresources?', ptr(SUBRESOURCES)],
  ['versions?', slice(version('JSONPath'))],
  ['additionalPrinterColumns?', slice(column('JSONPath'))],
  ['selectableFields?', slice(SELECTABLE)],
  ['conversion?', ptr(struct([['strategy', S], ['webhookClientConfig?', ptr(CLIENT_CONFIG)], ['conversionReviewVersions?', slice(S)]]))],
  ['preserveUnknownFields?', ptr(B)],
]);

function crd(spec: Desc): Desc {
  return struct([
    ['kind?', S],
    ['apiVersion?', S],
    ['metadata?', ptr(RAW)],
    ['spec', spec],
    ['status?', STATUS],
  ]);
}

export const DESCRIPTORS = {
  schema: SCHEMA,
  crdV1: crd(SPEC_V1),
  crdV1beta1: crd(SPEC_V1BETA1),
  specV1beta1: SPEC_V1BETA1,
  status: STATUS,
  names: NAMES,
};

/**
 * Encodes `v` as Go would; `undefined` stands for nil. Values of the wrong JSON type
 * (which Go's decoder would reject) become nil or the zero value, so that
 * everything downstream can rely on the declared types.
 */
function encode(v: unknown, d: Desc): unknown {
  return encodeValue(v, d, undefined);
}

const encodeValue = treeOperation<unknown, Desc, undefined, unknown>((v, desc, _, sub, depth) => {
  let d = desc;
  // Descriptors that stand for another one for this value.
  for (;;) {
    if (d.k === 'lazy') d = d.get();
    else if (d.k === 'ptr') {
      if (v === undefined || v === null || !hasType(v, d.of)) return undefined;
      d = d.of;
    } else if (d.k === 'choice') {
      if (v === undefined || v === null) return undefined;
      d = d.pick(v);
    } else break;
  }
  switch (d.k) {
    case 'same':
      return v;
    case 'nil':
      return undefined;
    case 'string':
      return typeof v === 'string' ? v : '';
    case 'bool':
      return typeof v === 'boolean' ? v : false;
    case 'number':
      return typeof v === 'number' || typeof v === 'bigint' ? v : 0;
    case 'raw':
      return v === undefined ? undefined : clone(v);
    case 'slice': {
      const of = d.of;
      return Array.isArray(v) ? v.map((x) => nilToNull(sub(x, of, undefined, depth + 1))) : undefined;
    }
    case 'map': {
      if (!isObject(v)) return undefined;
      const o = v as JSONObject;
      const out: JSONObject = {};
      for (const k of Object.keys(o).sort()) out[k] = nilToNull(sub(o[k], d.of, undefined, depth + 1));
      return out;
    }
    case 'struct': {
      const src: JSONObject = isObject(v) ? (v as JSONObject) : {};
      const out: JSONObject = {};
      for (const f of d.fields) {
        const x = sub(src[f.key], f.d, undefined, depth + 1);
        if (f.omit && (x === undefined || isEmpty(x, f.d))) continue;
        out[f.key] = nilToNull(x);
      }
      return out;
    }
  }
  return undefined;
}, undefined);

/** Whether a non-null JSON value can decode into `d`. */
function hasType(v: unknown, d: Desc): boolean {
  switch (d.k) {
    case 'lazy':
      return hasType(v, d.get());
    case 'string':
      return typeof v === 'string';
    case 'bool':
      return typeof v === 'boolean';
    case 'number':
      return typeof v === 'number' || typeof v === 'bigint';
    case 'slice':
      return Array.isArray(v);
    case 'map':
    case 'struct':
      return isObject(v);
    default:
      return true;
  }
}

function nilToNull(x: unknown): unknown {
  return x === undefined ? null : x;
}

/** Go's isEmptyValue for an encoded value of descriptor `d`. */
function isEmpty(x: unknown, d: Desc): boolean {
  if (d.k === 'lazy') return isEmpty(x, d.get());
  switch (d.k) {
    case 'string':
      return x === '';
    case 'bool':
      return x === false;
    case 'number':
      return x === 0 || x === 0n;
    case 'slice':
      return Array.isArray(x) && x.length === 0;
    case 'map':
      return isObject(x) && Object.keys(x).length === 0;
    default:
      return false;
  }
}

export function canonicalize<T>(v: unknown, d: Desc): T {
  return encode(v, d) as T;
}
