/**
 * The built-in resources kapi serves, each group's rows (its `install.ts`) put together, with upstream's
 * names, scopes, short names, categories and verbs, so that generic tools and test frameworks find what
 * they expect; and the typed decoding every built-in gets from its Go types.
 */
import { goQuote } from '../machinery/go-text.js';
import { errors } from '../machinery/status.js';
import type { DecodeOptions, Strategy } from '../registry/types.js';
import type { KObject } from '../api/object.js';
import { findDuplicateFields } from '../schema/index.js';
import { checkTypedObject } from '../schema/builtin/typed-json.js';
import { runSteps, runStepsInTurns, type Steps } from '../util/turns.js';
import { shapeAsGo } from '../schema/builtin/go-shape.js';
import { builtinDefaulter } from './builtin-defaults.js';
import { CORE_ADMISSION, CORE_RESOURCES } from './core/install.js';
import { CORE_START_HOOKS } from './core/start.js';
import { APPS_RESOURCES } from './apps/install.js';
import { COORDINATION_RESOURCES } from './coordination/install.js';
import { EVENTS_RESOURCES } from './events/install.js';
import { RBAC_RESOURCES, RBAC_START_HOOKS } from './rbac/install.js';
import { BATCH_RESOURCES } from './batch/install.js';
import { AUTOSCALING_RESOURCES } from './autoscaling/install.js';
import { NETWORKING_RESOURCES } from './networking/install.js';
import { POLICY_RESOURCES } from './policy/install.js';
import { SCHEDULING_RESOURCES, SCHEDULING_START_HOOKS } from './scheduling/install.js';
import { DISCOVERY_RESOURCES } from './discovery/install.js';
import { STORAGE_RESOURCES } from './storage/install.js';
import { NODE_RESOURCES } from './node/install.js';
import { ADMISSIONREGISTRATION_ADMISSION, ADMISSIONREGISTRATION_RESOURCES } from './admissionregistration/install.js';
import { APIREGISTRATION_RESOURCES } from './apiregistration/install.js';
import { FLOWCONTROL_RESOURCES, FLOWCONTROL_START_HOOKS } from './flowcontrol/install.js';
import { CERTIFICATES_ADMISSION, CERTIFICATES_RESOURCES } from './certificates/install.js';
import type { BuiltinResource } from './resource-table.js';
import type { AdmissionPluginDefinition } from './admission-plugins.js';
import type { StartHook } from './start-hooks.js';
import { REMOVED_RESOURCES } from './removed-versions.js';
import { STORAGE_ADMISSION } from './storage/admission.js';
import { NETWORKING_ADMISSION } from './networking/admission.js';
import { NODE_ADMISSION } from './node/admission.js';

export type { BuiltinContext, BuiltinResource, StoredAs } from './resource-table.js';

/** Every built-in resource but namespaces (core/namespaces.ts), group by group; a resource served from another's store comes after it. */
export const BUILTIN_RESOURCES: BuiltinResource[] = [
  ...CORE_RESOURCES,
  ...APPS_RESOURCES,
  ...COORDINATION_RESOURCES,
  ...EVENTS_RESOURCES,
  ...RBAC_RESOURCES,
  ...BATCH_RESOURCES,
  ...AUTOSCALING_RESOURCES,
  ...NETWORKING_RESOURCES,
  ...POLICY_RESOURCES,
  ...SCHEDULING_RESOURCES,
  ...DISCOVERY_RESOURCES,
  ...STORAGE_RESOURCES,
  ...NODE_RESOURCES,
  ...ADMISSIONREGISTRATION_RESOURCES,
  ...APIREGISTRATION_RESOURCES,
  ...FLOWCONTROL_RESOURCES,
  ...CERTIFICATES_RESOURCES,
  ...REMOVED_RESOURCES,
];

/** The admission plugins the groups implement (apis/admission-plugins.ts runs those that are on, in upstream's order). */
export const BUILTIN_ADMISSION: AdmissionPluginDefinition[] = [...CORE_ADMISSION, ...STORAGE_ADMISSION, ...NETWORKING_ADMISSION, ...NODE_ADMISSION, ...CERTIFICATES_ADMISSION, ...ADMISSIONREGISTRATION_ADMISSION];

/** The groups' start hooks (upstream's post-start hooks), run together at start. */
export const BUILTIN_START_HOOKS: StartHook[] = [...CORE_START_HOOKS, ...SCHEDULING_START_HOOKS, ...FLOWCONTROL_START_HOOKS, ...RBAC_START_HOOKS];

/**
 * upstream's typed decoding of a request's object in its version (`structId`, the endpoint's struct), as the
 * handler runs it before managed fields and admission (an endpoint's decodeObject): a value of the wrong type
 * is the decoder's 400; undeclared fields are dropped, and they and duplicate fields fail, warn or pass as
 * fieldValidation says; then the Go structs' defaulters.
 */
export function typedDecoder(structId: string, kind: string): (obj: KObject, ctx: DecodeOptions) => void {
  return (obj, ctx) => decodeTyped(obj, ctx, structId, kind, []);
}

/** typedDecoder for a large request: the type check, the duplicate-field scan and the defaulting each take a turn. */
export function typedDecoderInTurns(structId: string, kind: string): (obj: KObject, ctx: DecodeOptions) => Promise<void> {
  return (obj, ctx) => runStepsInTurns(decodingTyped(obj, ctx, structId, kind, []));
}

function decodeTyped(obj: KObject, ctx: DecodeOptions, structId: string, kind: string, unknownBefore: string[]): void {
  runSteps(decodingTyped(obj, ctx, structId, kind, unknownBefore));
}

function* decodingTyped(obj: KObject, ctx: DecodeOptions, structId: string, kind: string, unknownBefore: string[]): Steps<void> {
  const checked = checkTypedObject(structId, obj);
  if (checked.error) throw errors.badRequest(`${kind} in version "${ctx.version}" cannot be handled as a ${kind}: ${checked.error}`);
  const mode = ctx.fieldValidation ?? 'Warn';
  if (mode !== 'Ignore') {
    const unknown = [...unknownBefore, ...checked.unknown];
    if (ctx.rawBody) yield;
    const problems = [...(ctx.rawBody ? findDuplicateFields(ctx.rawBody) : []), ...unknown.map((f) => `unknown field ${goQuote(f)}`)];
    if (problems.length > 0) {
      if (mode === 'Strict') throw errors.badRequest(`strict decoding error: ${problems.join(', ')}`);
      ctx.warnings?.push(...problems);
    }
  }
  yield;
  builtinDefaulter.apply(structId, obj);
  shapeAsGo(structId, obj);
}

/** Fields a request sent that the version it used does not have, found before it was converted to the stored form. */
const unknownInServedVersion = new WeakMap<KObject, string[]>();

/**
 * The typed decoding of a resource served from another's store (events.k8s.io Events, v1 HPAs): the
 * object is checked against its own version's struct before it is converted (which keeps only the
 * fields it knows); the fields found unknown are reported by the stored kind's strategy.
 */
export function typedConversion(structId: string, kind: string, version: string, toStorage: (obj: KObject) => KObject): (obj: KObject) => KObject {
  return (obj) => {
    const checked = checkTypedObject(structId, obj);
    if (checked.error) throw errors.badRequest(`${kind} in version "${version}" cannot be handled as a ${kind}: ${checked.error}`);
    const stored = toStorage(obj);
    if (checked.unknown.length > 0) unknownInServedVersion.set(stored, checked.unknown);
    return stored;
  };
}

/**
 * A built-in kind's strategy with its typed decoding first: a value of the wrong type is the decoder's
 * 400, undeclared (and duplicate) fields fail, warn or pass as fieldValidation says, as for custom
 * resources; then the defaulters of the Go structs (builtin-defaults.ts) and the kind's own.
 * `structId` names the kind's Go struct (go-types.ts).
 */
export function withTypedDecoding(strategy: Strategy, structId: string, kind: string): Strategy {
  return {
    ...strategy,
    defaulting(obj, ctx, asDecoded) {
      // An object the handler decoded (typedDecoder) and admission left alone is checked and defaulted already;
      // one converted since to the stored version takes that version's defaults (upstream's storage decoding gives them).
      if (!asDecoded) decodeTyped(obj, ctx, structId, kind, unknownInServedVersion.get(obj) ?? []);
      else if (obj.apiVersion !== (ctx.group ? `${ctx.group}/${ctx.version}` : ctx.version)) {
        builtinDefaulter.apply(structId, obj);
        shapeAsGo(structId, obj);
      }
      strategy.defaulting?.(obj, ctx);
    },
    // Stored objects are defaulted as they are decoded, as upstream's storage codec does: one written
    // before a default existed reads (and compares on update) as if it had been written with it.
    onRead(obj) {
      const changed = strategy.onRead?.(obj);
      builtinDefaulter.apply(structId, obj);
      shapeAsGo(structId, obj);
      return changed;
    },
  };
}
