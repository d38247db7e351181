/**
 * NewStructural: converts a CRD's openAPIV3Schema (JSONSchemaProps) into the
 * structural form, failing with upstream's texts for constructs that validation
 * should have rejected before ($ref, items as an array, ...). Also measures schemas
 * (depth, node count) so that absurd ones are refused before anything recurses.
 */
import { HAS_DEFAULT, HAS_EMBEDDED, HAS_LIST_TYPE, type Extensions, type Generic, type JSONSchemaProps, type NestedValueValidation, type Structural, type ValidationRule, type ValueValidation } from './types.js';
import { isObject } from './values.js';

export class StructuralError extends Error {}

/** Deeper schemas are refused: every layer of code walking a schema recurses. */
export const MAX_SCHEMA_DEPTH = 200;
/** More schema nodes than a 3 MiB CRD can sensibly hold are refused. */
export const MAX_SCHEMA_NODES = 200_000;

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : undefined);
const has = (v: unknown): boolean => v !== undefined && v !== null;

function validateUnsupportedFields(s: JSONSchemaProps): void {
  if (str(s.id)) throw new StructuralError("OpenAPIV3Schema 'id' is not supported");
  if (str(s.$schema)) throw new StructuralError("OpenAPIV3Schema 'schema' is not supported");
  if (str(s.$ref)) throw new StructuralError("OpenAPIV3Schema '$ref' is not supported");
  if (isObject(s.patternProperties) && Object.keys(s.patternProperties).length) throw new StructuralError("OpenAPIV3Schema 'patternProperties' is not supported");
  if (isObject(s.dependencies) && Object.keys(s.dependencies).length) throw new StructuralError("OpenAPIV3Schema 'dependencies' is not supported");
  if (has(s.additionalItems)) throw new StructuralError("OpenAPIV3Schema 'additionalItems' is not supported");
  if (isObject(s.definitions) && Object.keys(s.definitions).length) throw new StructuralError("OpenAPIV3Schema 'definitions' is not supported");
}

function generics(s: JSONSchemaProps): Generic {
  return {
    description: str(s.description),
    type: str(s.type),
    title: str(s.title),
    hasDefault: has(s.default),
    default: has(s.default) ? s.default : undefined,
    nullable: s.nullable === true,
    hasExternalDocs: isObject(s.externalDocs),
    hasExample: has(s.example),
  };
}

function extensions(s: JSONSchemaProps): Extensions {
  const pu = s['x-kubernetes-preserve-unknown-fields'];
  if (pu === false) throw new StructuralError("internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined");
  const keys = s['x-kubernetes-list-map-keys'];
  const lt = s['x-kubernetes-list-type'];
  const mt = s['x-kubernetes-map-type'];
  return {
    preserveUnknownFields: pu === true,
    embeddedResource: s['x-kubernetes-embedded-resource'] === true,
    intOrString: s['x-kubernetes-int-or-string'] === true,
    listMapKeys: Array.isArray(keys) ? keys.map(String) : undefined,
    listType: typeof lt === 'string' ? lt : undefined,
    mapType: typeof mt === 'string' ? mt : undefined,
  };
}

const rules = (s: JSONSchemaProps): ValidationRule[] | undefined => (Array.isArray(s['x-kubernetes-validations']) ? s['x-kubernetes-validations'] : undefined);

function schemaList(v: unknown): JSONSchemaProps[] {
  return Array.isArray(v) ? v.filter(isObject) : [];
}

function valueValidation(s: JSONSchemaProps, depth: number): ValueValidation {
  const list = (v: unknown): NestedValueValidation[] | undefined => {
    const l = schemaList(v);
    return l.length ? l.map((x) => nested(x, depth + 1)) : undefined;
  };
  return {
    format: str(s.format),
    maximum: num(s.maximum),
    exclusiveMaximum: s.exclusiveMaximum === true,
    minimum: num(s.minimum),
    exclusiveMinimum: s.exclusiveMinimum === true,
    maxLength: num(s.maxLength),
    minLength: num(s.minLength),
    pattern: str(s.pattern),
    maxItems: num(s.maxItems),
    minItems: num(s.minItems),
    uniqueItems: s.uniqueItems === true,
    multipleOf: num(s.multipleOf),
    enum: Array.isArray(s.enum) && s.enum.length ? s.enum : undefined,
    maxProperties: num(s.maxProperties),
    minProperties: num(s.minProperties),
    required: Array.isArray(s.required) ? s.required.map(String) : undefined,
    allOf: list(s.allOf),
    oneOf: list(s.oneOf),
    anyOf: list(s.anyOf),
    not: isObject(s.not) ? nested(s.not, depth + 1) : undefined,
  };
}

function itemsSchema(s: JSONSchemaProps): JSONSchemaProps | undefined {
  const items = s.items as unknown;
  if (Array.isArray(items)) {
    if (items.length) throw new StructuralError("OpenAPIV3Schema 'items' must be a schema, but is an array");
    return undefined;
  }
  return isObject(items) ? (items as JSONSchemaProps) : undefined;
}

function checkDepth(depth: number): void {
  if (depth > MAX_SCHEMA_DEPTH) throw new StructuralError(`schema nests more than ${MAX_SCHEMA_DEPTH} levels deep`);
}

function nested(s: JSONSchemaProps, depth: number): NestedValueValidation {
  checkDepth(depth);
  validateUnsupportedFields(s);
  const v: NestedValueValidation = {
    raw: s,
    valueValidation: valueValidation(s, depth),
    xValidations: rules(s),
    forbiddenGenerics: generics(s),
    forbiddenExtensions: extensions(s),
  };
  const items = itemsSchema(s);
  if (items) v.items = nested(items, depth + 1);
  if (isObject(s.properties)) {
    v.properties = new Map();
    for (const [k, x] of Object.entries(s.properties)) if (isObject(x)) v.properties.set(k, nested(x, depth + 1));
  }
  const ap = s.additionalProperties as unknown;
  if (isObject(ap)) v.additionalProperties = nested(ap, depth + 1);
  else if (ap === true) v.additionalProperties = emptyNested();
  return v;
}

function emptyNested(): NestedValueValidation {
  return nested({}, 0);
}

/** NewStructural; throws StructuralError with upstream's message. */
export function toStructural(s: JSONSchemaProps, depth = 0): Structural {
  checkDepth(depth);
  validateUnsupportedFields(s);
  const out: Structural = {
    raw: s,
    subtree: 0,
    ...generics(s),
    ...extensions(s),
    xValidations: rules(s),
    valueValidation: valueValidation(s, depth),
  };
  const items = itemsSchema(s);
  if (items) out.items = toStructural(items, depth + 1);
  if (isObject(s.properties) && Object.keys(s.properties).length) {
    out.properties = new Map();
    for (const [k, x] of Object.entries(s.properties)) out.properties.set(k, toStructural(isObject(x) ? x : {}, depth + 1));
  }
  const ap = s.additionalProperties as unknown;
  if (isObject(ap)) out.additionalProperties = { schema: toStructural(ap, depth + 1), allows: true };
  else if (typeof ap === 'boolean') out.additionalProperties = { allows: ap };
  out.subtree = subtreeFlags(out);
  return out;
}

export function subtreeFlags(s: Structural): number {
  let f = (s.hasDefault ? HAS_DEFAULT : 0) | (s.embeddedResource ? HAS_EMBEDDED : 0) | (s.listType === 'set' || s.listType === 'map' ? HAS_LIST_TYPE : 0);
  if (s.items) f |= s.items.subtree;
  if (s.additionalProperties?.schema) f |= s.additionalProperties.schema.subtree;
  for (const p of s.properties?.values() ?? []) f |= p.subtree;
  return f;
}

/** Whether pred holds for some schema node, searched iteratively (like upstream's SchemaHas). */
export function someSchemaNode(root: unknown, pred: (s: JSONSchemaProps) => boolean): boolean {
  let found = false;
  measureSchema(root, (s) => {
    if (!found && pred(s)) found = true;
  });
  return found;
}

/** Schema size measures, iteratively (the raw schema may be arbitrarily deep). */
export function measureSchema(root: unknown, visit?: (s: JSONSchemaProps) => void): { depth: number; nodes: number } {
  let depth = 0;
  let nodes = 0;
  const stack: [unknown, number][] = [[root, 0]];
  while (stack.length) {
    const [s, d] = stack.pop() as [unknown, number];
    if (!isObject(s)) continue;
    nodes++;
    visit?.(s as JSONSchemaProps);
    if (d > depth) depth = d;
    if (nodes > MAX_SCHEMA_NODES || depth > MAX_SCHEMA_DEPTH) break;
    const push = (x: unknown): void => {
      if (isObject(x)) stack.push([x, d + 1]);
    };
    push(s.items);
    if (Array.isArray(s.items)) s.items.forEach(push);
    push(s.not);
    push(s.additionalProperties);
    for (const k of ['allOf', 'anyOf', 'oneOf']) if (Array.isArray(s[k])) (s[k] as unknown[]).forEach(push);
    for (const k of ['properties', 'patternProperties', 'definitions', 'dependencies']) if (isObject(s[k])) Object.values(s[k] as object).forEach(push);
  }
  return { depth, nodes };
}

/** A structural node with nothing set but its type (and the raw schema it stands for). */
export function blankStructural(type: string, raw: Structural['raw']): Structural {
  return {
    raw,
    subtree: 0,
    description: '',
    type,
    title: '',
    hasDefault: false,
    default: undefined,
    nullable: false,
    hasExternalDocs: false,
    hasExample: false,
    preserveUnknownFields: false,
    embeddedResource: false,
    intOrString: false,
    listMapKeys: undefined,
    listType: undefined,
    mapType: undefined,
    xValidations: undefined,
    valueValidation: { format: '', exclusiveMaximum: false, exclusiveMinimum: false, pattern: '', uniqueItems: false },
  };
}
