/**
 * MutatingAdmissionPolicy, as kube-apiserver's plugin: the bindings that match a write (policy-bindings.ts),
 * once their matchConditions hold, apply their policy's mutations in order to the object, each seeing the
 * object as the ones before left it:
 * - `ApplyConfiguration`: a CEL expression constructing an `Object{...}` (nested types named by their field
 *   path, `Object.spec{...}`), merged into the object as server-side apply merges (maps by key, associative
 *   lists by their keys); it may not set atomic lists, maps or structs;
 * - `JSONPatch`: a CEL expression giving a list of `JSONPatch{op, path, from, value}`, applied in order (a
 *   failing `test` leaves the object as it was).
 * What goes wrong (an expression's error, a patch that cannot be applied, a binding without its params) refuses
 * the write as upstream words it, `policy 'p' with binding 'b' denied request: ...`, unless failurePolicy
 * is Ignore. A policy with reinvocationPolicy IfNeeded is applied again when a later plugin (a webhook)
 * changed the object.
 */
import { atomOf, merge, MergeError, type TypeInfo } from '../../apply/index.js';
import { applyJsonPatch, decodeJsonPatch, JsonPatchError } from '../../machinery/json-patch.js';
import { deepCloneMutable } from '../../machinery/json.js';
import { errors, StatusError, type StatusReason } from '../../machinery/status.js';
import type { AdmissionAttributes, AdmissionPlugin } from '../../registry/admission.js';
import type { KObject } from '../../api/object.js';
import { deepEqual } from '../../util/deep-equal.js';
import { isRecord, records, type JsonRecord } from '../../util/json-object.js';
import { ConstructedObject, constructedType, jsonOf } from './cel-objects.js';
import { evaluateExpression, replaceContents } from './matching.js';
import { policyBindings, writeName, type PolicyStores } from './policy-bindings.js';

/** A mutation that could not be applied (the policy's failure, as failurePolicy says). */
class MutationError extends Error {}

export function mutatingPolicyAdmission(opts: PolicyStores): AdmissionPlugin {
  const bindings = policyBindings(opts);
  /**
   * Per write, as upstream's reinvocation context: the object as this plugin left it; the IfNeeded invocations
   * a later one changed the object after (applied again in any case); and the others, applied again if a
   * later plugin changes the object.
   */
  const reinvocable = new WeakMap<AdmissionAttributes, { output: KObject; changedAfter: Set<string>; invoked: Set<string> }>();

  return {
    name: 'MutatingAdmissionPolicy',
    reportsChanges: true,
    admit(a) {
      if (a.object && bindings.active(a)) return mutate(a);
    },
    reinvoke(a) {
      const state = reinvocable.get(a);
      if (!state || !a.object) return;
      const keys = new Set(state.changedAfter);
      if (state.invoked.size > 0 && !deepEqual(a.object, state.output)) for (const k of state.invoked) keys.add(k);
      if (keys.size > 0) return mutate(a, keys);
    },
  };

  async function mutate(a: AdmissionAttributes, only?: Set<string>): Promise<void> {
    const failures: Array<{ message: string; reason: StatusReason }> = [];
    // IfNeeded invocations so far, and those a later invocation changed the object after.
    const invoked = new Set<string>();
    const changedAfter = new Set<string>();
    const session = bindings.session();
    // Evaluated again while `authorizer` checks are being answered (at once with a synchronous authorizer).
    const settled = <R>(evaluate: () => R): R | Promise<R> => (session ? session.settle(evaluate) : evaluate());
    for (const inv of await bindings.invocations(a)) {
      const fail = (message: string, reason: StatusReason) => {
        if (inv.failurePolicy === 'Fail') failures.push({ message: `policy '${inv.policyName}' with binding '${inv.bindingName}' denied request: ${message}`, reason });
      };
      if (inv.configError !== undefined) {
        if (!only) fail(inv.configError, '' as StatusReason);
        continue;
      }
      const va = inv.params.length > 0 ? await bindings.versioned(a, inv) : undefined;
      let changed = false;
      for (const param of inv.params) {
        if (!va?.object) break;
        const key = `${inv.policyName}\0${inv.bindingName}\0${param?.metadata.namespace ?? ''}\0${param?.metadata.name ?? ''}`;
        if (only && !only.has(key)) continue;
        const held = await settled(() => bindings.conditions(inv.spec, bindings.context(va, inv.spec, param, session, true).ctx));
        if (held === false) continue;
        if (held !== true) {
          fail(held, 'Invalid');
          continue;
        }
        let changedHere = false;
        for (const mutation of records(inv.spec.mutations)) {
          const object = va.object;
          try {
            const patched = await settled(() => applyMutation(mutation, bindings.context(va, inv.spec, param, session, true).ctx, object));
            if (patched && !deepEqual(patched, object)) {
              replaceContents(va.object, patched);
              // As upstream's dispatcher: each mutation's result is defaulted before the next sees it.
              a.defaulter?.(va.object);
              changed = changedHere = true;
            }
          } catch (err) {
            if (!(err instanceof MutationError)) throw err;
            fail(err.message, 'Invalid');
          }
        }
        if (changedHere) {
          for (const k of invoked) changedAfter.add(k);
          invoked.clear();
        }
        if (inv.spec.reinvocationPolicy === 'IfNeeded') invoked.add(key);
      }
      // A policy that matched another version mutated a converted copy: back to the write's version.
      if (changed && va?.object && a.object && va.object !== a.object) replaceContents(a.object, await va.toWrite(va.object));
    }
    // Recorded on the first pass only: a reinvocation is the last.
    if (!only && (invoked.size > 0 || changedAfter.size > 0) && a.object) reinvocable.set(a, { output: deepCloneMutable(a.object), changedAfter, invoked });
    if (failures.length > 0) {
      const forbidden = errors.forbidden({ group: a.resource.group, resource: a.resource.resource }, writeName(a), 'admission request denied by policy');
      throw new StatusError(403, failures[0].reason || 'Forbidden', failures[0].message, { ...(forbidden.details ?? {}), causes: failures.map((f) => ({ message: f.message })) } as never);
    }
  }

  /** The object after one mutation (undefined: unchanged). */
  function applyMutation(mutation: JsonRecord, ctx: Record<string, unknown>, object: KObject): KObject | undefined {
    if (mutation.patchType === 'JSONPatch') {
      const r = evaluateExpression(String((mutation.jsonPatch as JsonRecord | undefined)?.expression ?? ''), ctx, true);
      if (r.error !== undefined) throw new MutationError(r.error);
      if (!Array.isArray(r.value)) throw new MutationError('type mismatch: JSONPatchType.expression should evaluate to array');
      const ops = r.value.map((op) => {
        if (!(op instanceof ConstructedObject) || op.typeName !== 'JSONPatch') throw new MutationError('type mismatch: JSONPatchType.expression should evaluate to array of JSONPatch');
        const { op: kind, path, from, value } = op.fields;
        // An object given as the value: its nested types named from its own type, as upstream checks.
        const mismatches: string[] = [];
        const json = value instanceof ConstructedObject ? jsonOf(value, [value.typeName], mismatches) : jsonOf(value);
        if (mismatches.length > 0) throw new MutationError(`type mismatch: ${mismatches.join('\n')}`);
        return { op: kind, path, ...(typeof from === 'string' && from ? { from } : {}), ...(value !== undefined ? { value: json } : {}) };
      });
      const patched = deepCloneMutable(object);
      try {
        applyJsonPatch(patched as never, decodeJsonPatch(ops));
      } catch (err) {
        if (err instanceof JsonPatchError && err.message === 'test failed') return undefined;
        throw new MutationError(`JSON Patch: ${(err as Error).message}`);
      }
      return sameKind(patched, object);
    }
    if (mutation.patchType === 'ApplyConfiguration') {
      const r = evaluateExpression(String((mutation.applyConfiguration as JsonRecord | undefined)?.expression ?? ''), ctx, true);
      if (r.error !== undefined) throw new MutationError(r.error);
      const type = constructedType(r.value);
      if (type !== 'Object') throw new MutationError(`unsupported return type from ApplyConfiguration expression: ${type ?? celTypeName(r.value)}`);
      const mismatches: string[] = [];
      const patch = jsonOf(r.value, ['Object'], mismatches) as JsonRecord;
      if (mismatches.length > 0) throw new MutationError(`type mismatch: ${mismatches.join('\n')}`);
      const [group, version] = object.apiVersion.includes('/') ? object.apiVersion.split('/', 2) : ['', object.apiVersion];
      const schema = bindings.endpoint(group, version, object.kind)?.applyType?.();
      if (!schema) {
        throw new MutationError(`Resource kind ${group}/${version}, Kind=${object.kind} not found. There can be a delay between when CustomResourceDefinitions are created and when they are available.`);
      }
      const atomics: string[] = [];
      findAtomics('', schema, patch, atomics);
      if (atomics.length > 0) throw new MutationError(`error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: ${atomics.join(', ')}`);
      let merged: unknown;
      try {
        merged = merge(object, { ...patch, apiVersion: object.apiVersion, kind: object.kind }, schema);
      } catch (err) {
        if (!(err instanceof MergeError)) throw err;
        throw new MutationError(`error applying patch: failed to merge patch: ${err.message}`);
      }
      return sameKind(merged as KObject, object);
    }
    throw new MutationError(`unsupported patch type ${JSON.stringify(String(mutation.patchType ?? ''))}`);
  }
}

/** The mutated object, which must still be an object of the same kind and version, with its metadata. */
function sameKind(patched: KObject, object: KObject): KObject {
  if (!isRecord(patched) || !isRecord(patched.metadata) || patched.apiVersion !== object.apiVersion || patched.kind !== object.kind) {
    throw new MutationError('the mutation changed the object\'s kind, apiVersion or metadata into something it cannot be');
  }
  return patched;
}

/**
 * structured-merge-diff's findAtomics: where an apply configuration sets an atomic list, map or struct.
 * Depth first, in order, with a stack of its own (lists nest in lists as deep as values may).
 */
function findAtomics(rootPath: string, rootType: TypeInfo, root: unknown, out: string[]): void {
  const stack: { path: string; type: TypeInfo; value: unknown }[] = [{ path: rootPath, type: rootType, value: root }];
  while (stack.length > 0) {
    const { path, type, value } = stack.pop() as (typeof stack)[number];
    const atom = atomOf(type, value);
    const below: (typeof stack)[number][] = [];
    if (isRecord(value) && atom.kind === 'map') {
      if (atom.atomic) out.push(path);
      for (const [key, v] of Object.entries(value)) {
        const field = atom.fields?.get(key);
        if (field) below.push({ path: `${path}.${key}`, type: field, value: v });
      }
    } else if (Array.isArray(value) && atom.kind === 'list') {
      if (atom.listType === 'atomic') out.push(path);
      value.forEach((v, i) => below.push({ path: `${path}[${i}]`, type: atom.elements, value: v }));
    }
    for (let i = below.length - 1; i >= 0; i--) stack.push(below[i]);
  }
}

function celTypeName(v: unknown): string {
  if (v === null) return 'null_type';
  if (typeof v === 'bigint') return 'int';
  if (typeof v === 'number') return 'double';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  if (Array.isArray(v)) return 'list';
  return 'map';
}
