/**
 * The pieces of the published documents that one source contributes: a CRD
 * (every served version: its kind and list definitions and its paths) or the
 * built-in resources (meta types, built-in kinds, their paths). Each fragment
 * holds the v2 definitions and paths and, per group-version, the v3 schemas and
 * paths; the publisher assembles documents from fragments.
 */
import { selectableFieldLabels } from '../api/apiextensions.js';
import type { CustomResourceDefinitionV1 } from '../api/apiextensions.js';
import { structOfKind } from '../api/go-type-expr.js';
import { META_DEFINITIONS } from './builtin-definitions.js';
import { goDefinition, goDefinitionName, SPECIAL_DEFINITIONS } from './go-definitions.js';
import { definitionName, kindSchema, listSchema } from './crd-schema.js';
import { resourceRoutes, v2PathItems, v3Paths, type ResourceInfo, type RouteOptions } from './routes.js';
import {
  DELETE_OPTIONS,
  GVK_EXTENSION,
  gvkExtension,
  LIST_META,
  OBJECT_META,
  PATCH,
  refClosure,
  SCALE,
  STATUS,
  toV3Schema,
  type GroupVersionKind,
  type Schema,
} from './schema-types.js';
import type { SharedParameters } from './shared-parameters.js';
import { runSteps, type Steps } from '../util/turns.js';

export interface V3Part {
  schemas: Map<string, Schema>;
  paths: Map<string, Schema>;
}

export interface Fragment {
  v2Definitions: Map<string, Schema>;
  v2Paths: Map<string, Schema>;
  /** Keyed by the group-version's discovery path: `apis/<group>/<version>` or `api/v1`. */
  v3: Map<string, V3Part>;
}

/** A built-in resource to publish, as discovery lists it. */
export interface BuiltinResource {
  group: string;
  version: string;
  kind: string;
  /** The plural resource name. */
  resource: string;
  namespaced: boolean;
  verbs?: readonly string[];
  /** Subresources served, e.g. ['status']. */
  subresources?: readonly string[];
}

export const gvKey = (group: string, version: string): string => (group ? `apis/${group}/${version}` : `api/${version}`);

function emptyFragment(): Fragment {
  return { v2Definitions: new Map(), v2Paths: new Map(), v3: new Map() };
}

function v3Part(f: Fragment, key: string): V3Part {
  let part = f.v3.get(key);
  if (!part) {
    part = { schemas: new Map(), paths: new Map() };
    f.v3.set(key, part);
  }
  return part;
}

const conditionTrue = (crd: CustomResourceDefinitionV1, type: string) => (crd.status?.conditions ?? []).some((c) => c.type === type && c.status === 'True');

/**
 * A CRD's contribution. Like the CRD OpenAPI controllers, only established CRDs are
 * published, and a CRD whose schema is not structural publishes its kinds as plain objects.
 * With `only`, the parts of that document (v2 or v3) alone: a form serialized makes only what it writes.
 */
export function crdFragment(crd: CustomResourceDefinitionV1, shared: SharedParameters, opts: RouteOptions = {}, only?: 'v2' | 'v3'): Fragment {
  const f = emptyFragment();
  const spec = crd.spec;
  if (!spec?.group || !spec.names?.kind || !spec.names.plural || !conditionTrue(crd, 'Established')) return f;
  const nonStructural = conditionTrue(crd, 'NonStructuralSchema');
  const kind = spec.names.kind;
  const listKind = spec.names.listKind || `${kind}List`;
  for (const v of spec.versions ?? []) {
    if (!v.served || !v.name) continue;
    const gvk: GroupVersionKind = { group: spec.group, version: v.name, kind };
    const kindDef = definitionName(spec.group, v.name, kind);
    const listDef = definitionName(spec.group, v.name, listKind);
    const input = {
      gvk,
      schema: nonStructural ? undefined : v.schema?.openAPIV3Schema,
      preserveUnknownFields: spec.preserveUnknownFields === true,
      selectableFields: selectableFieldLabels(v),
    };
    const list = listSchema(gvk, listKind, spec.names.plural, kindDef);
    const info: ResourceInfo = {
      ...gvk,
      plural: spec.names.plural,
      namespaced: spec.scope !== 'Cluster',
      kindDefinition: kindDef,
      listDefinition: listDef,
      status: v.subresources?.status !== undefined && v.subresources?.status !== null,
      scale: !!v.subresources?.scale,
    };
    const routes = resourceRoutes(info, opts);
    if (only !== 'v3') {
      f.v2Definitions.set(kindDef, kindSchema(input, { v2: true }));
      f.v2Definitions.set(listDef, list);
      for (const [p, item] of v2PathItems(routes, shared.refFor)) f.v2Paths.set(p, item);
    }
    if (only !== 'v2') {
      const part = v3Part(f, gvKey(spec.group, v.name));
      part.schemas.set(kindDef, toV3Schema(kindSchema(input, { v2: false })));
      part.schemas.set(listDef, toV3Schema(list));
      for (const [p, item] of v3Paths(routes, shared.refFor)) part.paths.set(p, item);
    }
  }
  return f;
}

/**
 * Every definition of the built-in data (the meta types and apiextensions as kept by hand, the rest
 * from the Go types), for resolving refs; v3: with the defaults of the v3 form.
 */
export function builtinDefinition(name: string, v3 = false): Schema | undefined {
  return META_DEFINITIONS[name] ?? SPECIAL_DEFINITIONS[name] ?? goDefinition(name, v3);
}

const v3Definition = (name: string) => builtinDefinition(name, true);

/** The built-in resources' contribution: meta types, Scale, each resource's kind and list, and their paths. */
export function builtinFragment(resources: readonly BuiltinResource[], shared: SharedParameters, opts: RouteOptions = {}): Fragment {
  return runSteps(buildingBuiltinFragment(resources, shared, opts));
}

/** builtinFragment in steps (util/turns.ts): a pause after each resource and each group-version's v3 schemas. */
export function* buildingBuiltinFragment(resources: readonly BuiltinResource[], shared: SharedParameters, opts: RouteOptions = {}): Steps<Fragment> {
  const f = emptyFragment();
  const defs = new Map<string, Schema>();
  const v3Roots = new Map<string, Set<string>>();
  for (const name of [...Object.keys(META_DEFINITIONS), ...refClosure([SCALE], builtinDefinition)]) defs.set(name, builtinDefinition(name) as Schema);
  for (const r of resources) {
    const gvk = { group: r.group, version: r.version, kind: r.kind };
    const struct = structOfKind(r.group, r.version, r.kind);
    let kindDef: string;
    if (struct) {
      kindDef = goDefinitionName(struct);
      for (const n of refClosure([kindDef], builtinDefinition)) defs.set(n, builtinDefinition(n) as Schema);
    } else {
      // A kind without a Go type: an object of any content, known by its group-version-kind.
      kindDef = `io.k8s.api.${r.group ? r.group.split('.')[0] : 'core'}.${r.version}.${r.kind}`;
      defs.set(kindDef, { type: 'object', [GVK_EXTENSION]: gvkExtension(gvk) });
    }
    const listDef = `${kindDef}List`;
    if (!defs.has(listDef)) defs.set(listDef, builtinDefinition(listDef) ?? listSchema(gvk, `${r.kind}List`, r.resource, kindDef));
    for (const n of refClosure([listDef], builtinDefinition)) defs.set(n, builtinDefinition(n) as Schema);
    const routes = resourceRoutes(
      {
        ...gvk,
        plural: r.resource,
        namespaced: r.namespaced,
        kindDefinition: kindDef,
        listDefinition: listDef,
        verbs: r.verbs,
        status: r.subresources?.includes('status'),
        scale: r.subresources?.includes('scale'),
        strategicMergePatch: true,
      },
      opts,
    );
    for (const [p, item] of v2PathItems(routes, shared.refFor)) f.v2Paths.set(p, item);
    const part = v3Part(f, gvKey(r.group, r.version));
    for (const [p, item] of v3Paths(routes, shared.refFor)) part.paths.set(p, item);
    const roots = v3Roots.get(gvKey(r.group, r.version)) ?? new Set<string>();
    roots.add(kindDef).add(listDef);
    v3Roots.set(gvKey(r.group, r.version), roots);
    yield;
  }
  f.v2Definitions = defs;
  // The v3 form of each definition: the built-in data's, or (a list without a Go type, a kind of any content) the v2 one.
  const lookup = (n: string) => (defs.has(n) ? v3Definition(n) ?? defs.get(n) : undefined);
  for (const [key, roots] of v3Roots) {
    const part = v3Part(f, key);
    for (const n of refClosure([...roots, ...routeRefs()], lookup)) part.schemas.set(n, toV3Schema(lookup(n) as Schema));
    yield;
  }
  return f;
}

/** Definitions every resource's operations refer to. */
function routeRefs(): string[] {
  return [STATUS, DELETE_OPTIONS, PATCH, SCALE];
}

/** The built-in definitions a v3 document of custom resources refers to: the meta types and Scale. */
export function crdSupportSchemas(): Map<string, Schema> {
  const out = new Map<string, Schema>();
  for (const n of refClosure([OBJECT_META, LIST_META, ...routeRefs()], v3Definition)) out.set(n, toV3Schema(v3Definition(n) as Schema));
  return out;
}
