/**
 * The strategy of custom resources: every write is pruned and defaulted as it is
 * decoded (before admission, which sees it so), pruned and defaulted again after
 * mutating admission, and validated against the structural schema of the version it is in (the request's:
 * the store converts to the storage version after the strategy, then prunes and
 * defaults in the storage version's schema; schemas are compiled once per CRD
 * version, on first use), objects read from storage are pruned and defaulted
 * with the schema of the version they are stored in (never written back), generation follows
 * changes outside metadata (and status, with a status subresource), updates must
 * name the resourceVersion they replace, and PUT never creates.
 */
import { errors } from '../machinery/status.js';
import { goQuote } from '../machinery/go-text.js';
import type { DecodeOptions, Strategy, WriteOptions } from '../registry/types.js';
import type { KObject } from '../api/object.js';
import { compileSchema, findDuplicateFields, type CompiledSchema } from '../schema/index.js';
import { validateScaleFields } from './scale.js';
import type { ScaleConfig } from '../api/serving.js';

export interface CustomResourceOptions {
  statusSubresource: boolean;
  scale?: ScaleConfig;
  group: string;
  kind: string;
  namespaced: boolean;
  storageVersion: string;
  preserveUnknownFields: boolean;
  /** openAPIV3Schema of each version. */
  schemas: Record<string, unknown>;
}

export function customResourceStrategy(opts: CustomResourceOptions): Strategy {
  const scale = opts.scale;
  const compiled = new Map<string, CompiledSchema>();
  const schemaOf = (version: string | undefined): CompiledSchema => {
    const v = version && version in opts.schemas ? version : opts.storageVersion;
    let cs = compiled.get(v);
    if (!cs) {
      cs = compileSchema(opts.schemas[v] as never, { namespaced: opts.namespaced, preserveUnknownFields: opts.preserveUnknownFields });
      compiled.set(v, cs);
    }
    return cs;
  };
  const scaleErrors = (obj: KObject) => (scale ? validateScaleFields(obj, scale) : []);
  // The schema of the version the object is in (the request's; a write through v1beta1 is checked against
  // v1beta1's schema, then converted). Checking an object against another version's schema prunes every
  // field a converter renames (a create through v1beta1 stored `spec: {}`, a label patch wiped the stored spec).
  const prefix = `${opts.group}/`;
  // Writes come in a few apiVersions: the version each names is remembered.
  const versionByApiVersion = new Map<string, string | undefined>();
  const schemaFor = (obj: KObject, ctx: WriteOptions): CompiledSchema => {
    const apiVersion = typeof obj.apiVersion === 'string' ? obj.apiVersion : '';
    let version = versionByApiVersion.get(apiVersion);
    if (version === undefined && !versionByApiVersion.has(apiVersion)) {
      const v = apiVersion.startsWith(prefix) ? apiVersion.slice(prefix.length) : '';
      version = Object.prototype.hasOwnProperty.call(opts.schemas, v) ? v : undefined;
      if (versionByApiVersion.size < 64) versionByApiVersion.set(apiVersion, version);
    }
    return schemaOf(version ?? ctx.version);
  };
  return {
    generation: 'spec',
    validatesMetadata: true,
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: false,
    resetFieldsOnMainEndpoint: opts.statusSubresource ? ['status'] : [],
    prepareForCreate(obj) {
      if (opts.statusSubresource) delete obj.status;
    },
    decode(obj, ctx) {
      admit(obj, ctx, schemaFor(obj, ctx), opts.kind);
    },
    defaultMutated(obj) {
      schemaFor(obj, { version: opts.storageVersion }).default(obj);
    },
    defaulting(obj, ctx, asDecoded) {
      // After mutating admission, which sees the decoded object: what it added outside the schema goes
      // (upstream prunes it on the way to storage or back), its defaults are filled (unknown fields were
      // reported when the request was decoded). An object as decoded is pruned and defaulted already.
      if (asDecoded) return;
      const result = schemaFor(obj, ctx).admit(obj);
      if (result.error) throw cannotBeHandled(opts.kind, ctx, result.error);
    },
    validate(obj, ctx) {
      return [...schemaFor(obj, ctx).validate(obj), ...scaleErrors(obj)];
    },
    validateUpdate(obj, old, ctx) {
      const cs = schemaFor(obj, ctx);
      const errs = ctx.subresource === 'status' ? cs.validateStatusUpdate(obj, old) : cs.validateUpdate(obj, old);
      return [...errs, ...scaleErrors(obj)];
    },
    onRead(obj) {
      // Defaulted in the schema of the version it was stored in (unstructuredDefaulter), which after a
      // storage version switch is not the current storage version: its defaults would show in old objects.
      return schemaFor(obj, { version: opts.storageVersion }).read(obj);
    },
    prepareForStorage(obj) {
      // Converted from the request's version: pruned and defaulted in the storage version's schema.
      schemaOf(opts.storageVersion).read(obj);
    },
  };
}

/** Prune and default a written object; unknown and duplicate fields fail (Strict), warn (Warn) or pass (Ignore). */
function admit(obj: KObject, ctx: DecodeOptions, cs: CompiledSchema, kind: string): void {
  const result = cs.admit(obj);
  if (result.error) throw cannotBeHandled(kind, ctx, result.error);
  const mode = ctx.fieldValidation ?? 'Warn';
  if (mode === 'Ignore') return;
  const problems = [...(ctx.rawBody ? findDuplicateFields(ctx.rawBody) : []), ...result.unknownFields.map((f) => `unknown field ${goQuote(f)}`)];
  if (problems.length === 0) return;
  if (mode === 'Strict') throw errors.badRequest(`strict decoding error: ${problems.join(', ')}`);
  ctx.warnings?.push(...problems);
}

function cannotBeHandled(kind: string, ctx: DecodeOptions, error: string) {
  return errors.badRequest(`${kind} in version "${ctx.version}" cannot be handled as a ${kind}: ${error}`);
}

/** The strategy options a CRD gives its resource. */
export function customResourceOptions(crd: KObject): CustomResourceOptions {
  const versions: KObject[] = crd.spec.versions ?? [];
  const ordered = [...versions.filter((v) => v.storage), ...versions.filter((v) => !v.storage)];
  return {
    statusSubresource: ordered.some((v) => v.subresources?.status),
    scale: ordered.find((v) => v.subresources?.scale)?.subresources.scale,
    group: crd.spec.group,
    kind: crd.spec.names.kind,
    namespaced: crd.spec.scope === 'Namespaced',
    storageVersion: ordered[0]?.name,
    preserveUnknownFields: Boolean(crd.spec.preserveUnknownFields),
    schemas: Object.fromEntries(versions.map((v) => [v.name, v.schema?.openAPIV3Schema])),
  };
}
