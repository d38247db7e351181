/**
 * The checks of the /scale subresource paths on writes (customResourceValidator's
 * ValidateScaleSpec and ValidateScaleStatus): replicas must be non-negative int32
 * values, the label selector a string, with unstructured accessor error texts.
 */
import { fe, type FieldError } from './errors.js';
import { isObject, Kind, kindOf } from './values.js';

export interface ScaleSpec {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}

const GO_TYPES = ['<nil>', 'bool', 'int64', 'float64', 'string', '[]interface {}', 'map[string]interface {}'];

function goValue(v: unknown): string {
  if (v === null) return '<nil>';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** unstructured.NestedFieldNoCopy and a type check: the value, or the accessor error. */
function nested(obj: unknown, path: string, want: Kind.Int | Kind.String): { value?: unknown; error?: string } {
  const fields = path.replace(/^\./, '').split('.');
  const jsonPath = '.' + fields.join('.');
  let cur: unknown = obj;
  for (let i = 0; i < fields.length; i++) {
    if (!isObject(cur)) {
      return { error: `${'.' + fields.slice(0, i).join('.')} accessor error: ${goValue(cur)} is of the type ${GO_TYPES[kindOf(cur)]}, expected map[string]interface{}` };
    }
    if (!Object.prototype.hasOwnProperty.call(cur, fields[i])) return {};
    cur = cur[fields[i]];
  }
  if (kindOf(cur) !== want) {
    return { error: `${jsonPath} accessor error: ${goValue(cur)} is of the type ${GO_TYPES[kindOf(cur)]}, expected ${want === Kind.Int ? 'int64' : 'string'}` };
  }
  return { value: cur };
}

function replicas(obj: unknown, path: string): FieldError[] {
  const r = nested(obj, path, Kind.Int);
  if (r.error) return [fe.invalid(path, 0, r.error)];
  const n = r.value === undefined ? 0 : Number(r.value);
  if (n < 0) return [fe.invalid(path, r.value, 'should be a non-negative integer')];
  if (n > 2147483647) return [fe.invalid(path, r.value, 'should be less than or equal to 2147483647')];
  return [];
}

export function validateScaleSpec(obj: unknown, scale: ScaleSpec | undefined): FieldError[] {
  return scale ? replicas(obj, scale.specReplicasPath) : [];
}

export function validateScaleStatus(obj: unknown, scale: ScaleSpec | undefined): FieldError[] {
  if (!scale) return [];
  const errs = replicas(obj, scale.statusReplicasPath);
  if (scale.labelSelectorPath) {
    const r = nested(obj, scale.labelSelectorPath, Kind.String);
    if (r.error) errs.push(fe.invalid(scale.labelSelectorPath, '', r.error));
  }
  return errs;
}
