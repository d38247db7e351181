/**
 * How an endpoint's requests are decoded, converted and answered (apiserver's RequestScope): kube-apiserver
 * serves a built-in through its Go type (the legacy scheme's typed codec, routes installed by go-restful,
 * conversion to the internal type in the handler) and a custom resource through apiextensions-apiserver's
 * own handler (the unstructured codec, conversion in its storage). An endpoint carries its scope; handlers
 * ask it what to do and never which kind of endpoint they serve.
 */
import { structOfKind } from '../api/go-type-expr.js';
import { errors } from '../machinery/status.js';
import { field, type FieldError } from '../machinery/field-errors.js';
import type { KObject } from '../api/object.js';
import type { ResourceNames } from './types.js';

export interface RequestScope {
  /** Objects are typed (a Go struct of api/go-types.ts): the codec may also be protobuf. */
  readonly protobuf: boolean;
  /**
   * A decoded body without a kind: the typed decoder fills in the endpoint's, the unstructured one
   * refuses it (`data` is the decoded text the error shows).
   */
  missingKind(o: KObject, data: () => string): void;
  /** A decoded body's kind and apiVersion (the endpoint's when it had none), checked as the decoder does. */
  checkKind(o: KObject): void;
  /** A patched object before its kind is checked: the typed decoder fills in a missing or empty kind and apiVersion. */
  fillTypeMeta(o: KObject): void;
  /** A patched object's kind and apiVersion; `patchError(why)` is the error on the field `patch`. */
  checkPatchedKind(o: KObject, patchError: (why: (patched: string) => string) => Error): void;
  /** An object as the codec writes it: typed structs have kind and apiVersion first. */
  order(o: KObject): KObject;
  /** The Go type upstream names in its 406 texts (`%T` of the object it was given). */
  goType(list: boolean): string;
  /** A list's items go without their own apiVersion and kind (Go's nested TypeMeta is empty). */
  readonly bareListItems: boolean;
  /** A list's `metadata.continue` is written even when empty (unstructured lists). */
  readonly emptyContinue: boolean;
  /** The PATCH media types accepted (custom resources have no strategic merge patch). */
  readonly patchTypes: readonly string[];
  /** A method without a verb (OPTIONS, ...) is go-restful's 405; the CRD handler refuses it as any other verb. */
  readonly methodNotAllowed: boolean;
  /** The scale subresource validates the Scale it is sent (ValidateScale); a custom resource's own validation does. */
  readonly validatesScale: boolean;
  /**
   * The handler converts to the internal form (the storage version) before the store's strategy and back
   * after; false: the store converts (a custom resource's strategy works in the request's version).
   */
  readonly convertsInHandler: boolean;
}

const ALL_PATCHES = ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json', 'application/apply-patch+yaml'];
const UNSTRUCTURED_PATCHES = ALL_PATCHES.filter((t) => t !== 'application/strategic-merge-patch+json');

const groupVersion = (group: string, version: string) => (group ? `${group}/${version}` : version);

/** The Go package of a group's internal types (events.k8s.io's Events are core's). */
function internalPackage(group: string): string {
  if (group === '' || group === 'events.k8s.io') return 'core';
  if (group === 'rbac.authorization.k8s.io') return 'rbac';
  return group.split('.')[0];
}

/** A built-in's scope: its Go type decodes, converts in the handler and answers. */
export function typedScope(group: string, version: string, names: ResourceNames): RequestScope {
  const kind = names.kind;
  const expected = groupVersion(group, version);
  return {
    protobuf: true,
    missingKind(o) {
      // Typed decoding fills a missing kind from the endpoint (gvkWithDefaults).
      o.kind = kind;
    },
    checkKind(o) {
      if (o.kind === kind && o.apiVersion === expected) return;
      // Another kind or version: a kind the scheme does not know is UseOrCreateObject's error; a known one
      // decodes, and then fails to convert into the internal type (another version of this kind passes on).
      const apiVersion = String(o.apiVersion);
      const slash = apiVersion.lastIndexOf('/');
      const [g, v] = slash < 0 ? ['', apiVersion] : [apiVersion.slice(0, slash), apiVersion.slice(slash + 1)];
      const prefix = `${o.kind} in version "${v}" cannot be handled as a ${kind}`;
      if (!structOfKind(g, v, String(o.kind))) {
        throw errors.badRequest(`${prefix}: no kind "${o.kind}" is registered for version "${apiVersion}" in scheme "k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30"`);
      }
      if (o.kind !== kind) throw errors.badRequest(`${prefix}: converting (${v}.${o.kind}) to (${internalPackage(group)}.${kind}): unknown conversion`);
    },
    fillTypeMeta(o) {
      if (!o.kind) o.kind = kind;
      if (!o.apiVersion) o.apiVersion = expected;
    },
    checkPatchedKind(o, patchError) {
      if (o.kind !== kind || o.apiVersion !== expected) {
        throw patchError(() => `no kind "${String(o.kind)}" is registered for version "${String(o.apiVersion)}" in scheme "k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30"`);
      }
    },
    order(o) {
      let i = 0;
      for (const k in o) {
        if (k !== (i === 0 ? 'kind' : 'apiVersion')) return { kind: o.kind, apiVersion: o.apiVersion, ...o };
        if (++i === 2) break;
      }
      return o;
    },
    goType: (list) => `*${internalPackage(group)}.${list ? names.listKind : kind}`,
    bareListItems: true,
    emptyContinue: false,
    patchTypes: ALL_PATCHES,
    methodNotAllowed: true,
    validatesScale: true,
    convertsInHandler: true,
  };
}

/** A custom resource's scope: unstructured objects, converted by the store. */
export function unstructuredScope(group: string, version: string, names: ResourceNames): RequestScope {
  const kind = names.kind;
  const expected = groupVersion(group, version);
  return {
    protobuf: false,
    missingKind(_o, data) {
      throw errors.badRequest(`${kind} in version "${version}" cannot be handled as a ${kind}: Object 'Kind' is missing in '${data()}'`);
    },
    checkKind() {},
    fillTypeMeta() {},
    checkPatchedKind(o) {
      // The strategy's ValidateTypeMeta (422).
      const errs: FieldError[] = [];
      if (o.kind !== kind) errs.push(field.invalid('kind', o.kind, `must be ${kind}`));
      if (o.apiVersion !== expected) errs.push(field.invalid('apiVersion', o.apiVersion, `must be ${expected}`));
      if (errs.length) throw errors.invalid({ group, resource: kind }, o.metadata?.name ?? '', errs);
    },
    order: (o) => o,
    goType: (list) => (list ? '*unstructured.UnstructuredList' : '*unstructured.Unstructured'),
    bareListItems: false,
    emptyContinue: true,
    patchTypes: UNSTRUCTURED_PATCHES,
    methodNotAllowed: false,
    validatesScale: false,
    convertsInHandler: false,
  };
}
