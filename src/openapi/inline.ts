/**
 * A built-in kind's schema with its refs inlined, as a CRD schema is written: what CEL type checking of
 * admission policies declares `object` as (upstream resolves the same definitions through its schema
 * resolver). Recursive definitions (JSONSchemaProps) stop at a depth, as any value.
 */
import { structOfKind } from '../api/go-type-expr.js';
import { toStructural } from '../schema/structural.js';
import type { JSONSchemaProps, Structural } from '../schema/types.js';
import { builtinDefinition } from './fragments.js';
import { goDefinitionName } from './go-definitions.js';
import { V2_PREFIX, type Schema } from './schema-types.js';

const MAX_DEPTH = 24;
/** Nodes one kind's schema may inline; past it, any value. */
const MAX_NODES = 20_000;
const ANY: JSONSchemaProps = { 'x-kubernetes-preserve-unknown-fields': true };
const cache = new Map<string, Structural | null>();

/** `s` with its refs inlined; a ref already being inlined above (a recursive type) is any value. */
function inline(s: Schema, depth: number, path: Set<string>, budget: { nodes: number }): JSONSchemaProps {
  if (depth > MAX_DEPTH || --budget.nodes < 0) return ANY;
  let node = s;
  const target = typeof s.$ref === 'string' ? s.$ref : Array.isArray(s.allOf) && s.allOf.length === 1 && typeof s.allOf[0]?.$ref === 'string' ? s.allOf[0].$ref : undefined;
  if (target) {
    const name = target.replace(V2_PREFIX, '');
    const def = path.has(name) ? undefined : builtinDefinition(name);
    if (!def) return ANY;
    node = def;
    path = new Set(path).add(name);
  }
  if (node.format === 'int-or-string') return { 'x-kubernetes-int-or-string': true };
  const out: JSONSchemaProps = {};
  for (const key of ['type', 'format', 'enum', 'nullable', 'x-kubernetes-list-type', 'x-kubernetes-list-map-keys', 'x-kubernetes-map-type', 'x-kubernetes-preserve-unknown-fields', 'x-kubernetes-int-or-string']) {
    if (node[key] !== undefined) (out as Schema)[key] = node[key];
  }
  if (node.properties && typeof node.properties === 'object') {
    out.properties = {};
    for (const [k, v] of Object.entries(node.properties as Record<string, Schema>)) out.properties[k] = inline(v, depth + 1, path, budget);
  }
  if (node.items && typeof node.items === 'object' && !Array.isArray(node.items)) out.items = inline(node.items as Schema, depth + 1, path, budget);
  if (node.additionalProperties && typeof node.additionalProperties === 'object') out.additionalProperties = inline(node.additionalProperties as Schema, depth + 1, path, budget);
  if (out.type === undefined && !out.properties && !out['x-kubernetes-int-or-string']) out['x-kubernetes-preserve-unknown-fields'] = true;
  return out;
}

/** The structural schema of a built-in kind's objects (undefined: no Go type describes it). */
export function builtinStructural(group: string, version: string, kind: string): Structural | undefined {
  const key = `${group}/${version}/${kind}`;
  if (!cache.has(key)) {
    const struct = structOfKind(group, version, kind);
    let s: Structural | null = null;
    if (struct) {
      try {
        s = toStructural(inline({ $ref: V2_PREFIX + goDefinitionName(struct) }, 0, new Set(), { nodes: MAX_NODES }));
      } catch {
        s = null;
      }
    }
    cache.set(key, s);
  }
  return cache.get(key) ?? undefined;
}
