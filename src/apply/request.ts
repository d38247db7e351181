/**
 * Request-level rules of server-side apply and field management: the
 * fieldManager and force query parameters (ValidatePatchOptions:
 * `PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is
 * required for apply patch`), the manager name taken from the User-Agent
 * when a write names none, and reading an apply patch body.
 */
import { field, type FieldError } from '../machinery/field-errors.js';
import { byteLength, isGoPrint } from '../machinery/go-text.js';
import { validateFieldManager } from '../machinery/object-meta.js';
import { errors } from '../machinery/status.js';
import { parseYaml, YamlSyntaxError } from '../machinery/yaml.js';
import { JsonSyntaxError } from '../machinery/json.js';
import { isMap, type JsonMap } from './value.js';

export const FIELD_MANAGER_MAX_LENGTH = 128;

export type PatchKind = 'apply' | 'json' | 'merge' | 'strategic';

export interface PatchOptionsInput {
  /** ?fieldManager (undefined or '' when absent). */
  fieldManager?: string;
  /** ?force as parsed by parseForceParam: undefined when the parameter is absent. */
  force?: boolean;
}

/**
 * The query parameter ?force as the apiserver decodes a *bool: absent → undefined,
 * `false` (any case) or `0` → false, anything else (even empty) → true.
 */
export function parseForceParam(value: string | null | undefined): boolean | undefined {
  if (value === null || value === undefined) return undefined;
  return !(value === '0' || value.toLowerCase() === 'false');
}

/** ValidatePatchOptions' checks of fieldManager and force (dryRun and fieldValidation are checked elsewhere). */
export function patchOptionsErrors(opts: PatchOptionsInput, kind: PatchKind): FieldError[] {
  const errs: FieldError[] = [];
  if (kind === 'apply') {
    if (!opts.fieldManager) errs.push(field.required('fieldManager', 'is required for apply patch'));
  } else if (opts.force !== undefined) {
    errs.push(field.forbidden('force', 'may not be specified for non-apply patch'));
  }
  errs.push(...validateFieldManager(opts.fieldManager ?? '', 'fieldManager'));
  return errs;
}

/** Throws 422 `PatchOptions.meta.k8s.io "" is invalid: ...` for these errors and `more` (e.g. dryRun's). */
export function validatePatchOptions(opts: PatchOptionsInput, kind: PatchKind, more: FieldError[] = []): void {
  const errs = [...patchOptionsErrors(opts, kind), ...more];
  if (errs.length) throw errors.invalid({ group: 'meta.k8s.io', resource: 'PatchOptions' }, '', errs);
}

/** ValidateCreateOptions / ValidateUpdateOptions' fieldManager checks: 422 `<Kind>Options.meta.k8s.io "" is invalid`. */
export function validateWriteOptions(kind: 'CreateOptions' | 'UpdateOptions', fieldManager: string | undefined, more: FieldError[] = []): void {
  const errs = [...validateFieldManager(fieldManager ?? '', 'fieldManager'), ...more];
  if (errs.length) throw errors.invalid({ group: 'meta.k8s.io', resource: kind }, '', errs);
}

/** Printable ASCII that fits a field manager name as it is. */
const PLAIN_ASCII = /^[\x20-\x7e]{0,128}$/;

/**
 * prefixFromUserAgent: the User-Agent before its first `/`, without non-printable
 * characters, cut to at most 128 bytes (`kubectl/v1.30.0 (linux/amd64)` → `kubectl`).
 */
export function prefixFromUserAgent(userAgent: string): string {
  // A client sends the same User-Agent on every request: remember the last answer.
  if (userAgent === lastUserAgent) return lastPrefix;
  lastPrefix = prefixOf(userAgent);
  lastUserAgent = userAgent;
  return lastPrefix;
}
let lastUserAgent = '';
let lastPrefix = '';

function prefixOf(userAgent: string): string {
  const slash = userAgent.indexOf('/');
  const head = slash < 0 ? userAgent : userAgent.slice(0, slash);
  if (PLAIN_ASCII.test(head)) return head; // the usual case: nothing to drop or cut
  let out = '';
  let bytes = 0;
  for (const ch of head) {
    const cp = ch.codePointAt(0) ?? 0;
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    if (!isGoPrint(cp)) continue;
    const n = byteLength(ch);
    if (bytes + n > FIELD_MANAGER_MAX_LENGTH) break;
    out += ch;
    bytes += n;
  }
  return out;
}

/** managerOrUserAgent: the manager of a create, update or non-apply patch. */
export function managerOrUserAgent(fieldManager: string | undefined, userAgent: string | undefined): string {
  return fieldManager ? fieldManager : prefixFromUserAgent(userAgent ?? '');
}

/**
 * The applied configuration of an `application/apply-patch+yaml` body (YAML or JSON),
 * with the apiserver's 400s. A body that reads as null gives an empty object, which the
 * apply then refuses as `invalid object type: /, Kind=`.
 */
export function parseApplyBody(text: string): JsonMap {
  let v: unknown;
  try {
    v = parseYaml(text);
  } catch (e) {
    throw applyBodyError(e, text);
  }
  return checkApplyBody(v);
}

/**
 * A YAML syntax error in an apply body as upstream answers it (400); other errors as they are.
 * The handler turns YAML into JSON first (util/yaml.ToJSON, "error encoding patch"), but passes a
 * body that starts with `{` on as it is, to fail in sigs.k8s.io/yaml.Unmarshal ("error decoding patch").
 */
export function applyBodyError(e: unknown, text: string): unknown {
  // YAML that turns into JSON nested deeper than JSON may: its JSON, read as YAML again
  // (sigs.k8s.io/yaml.Unmarshal), has too many flow levels.
  if (e instanceof JsonSyntaxError && /exceeded max depth/.test(e.message)) {
    return errors.badRequest('error decoding patch: error converting YAML to JSON: yaml: exceeded max depth of 10000');
  }
  if (!(e instanceof YamlSyntaxError)) return e;
  const jsonPrefix = text.trimStart().startsWith('{');
  return errors.badRequest(jsonPrefix ? `error decoding patch: error converting YAML to JSON: ${e.message}` : `error encoding patch: ${e.message}`);
}

/** An apply body's value (null: empty), which must be an object. */
export function checkApplyBody(v: unknown): JsonMap {
  if (v === null || v === undefined) return {};
  if (!isMap(v)) {
    const what = Array.isArray(v) ? 'array' : typeof v === 'string' ? 'string' : typeof v === 'boolean' ? 'bool' : 'number';
    throw errors.badRequest(`error decoding patch: json: cannot unmarshal ${what} into Go value of type map[string]interface {}`);
  }
  return v;
}
