/**
 * ConfigMaps and Secrets as upstream validates them: keys are config keys (IsConfigMapKey), the data
 * together is at most 1 MiB, a Secret's type asks for the keys it needs and cannot change, and an
 * `immutable` object keeps its data (and stays immutable).
 */
import { field, type FieldError } from '../../machinery/field-errors.js';
import { maxLenError, regexError } from '../../machinery/validation.js';
import type { Strategy } from '../../registry/types.js';
import type { KObject } from '../../api/object.js';
import { isRecord as isObject } from '../../util/json-object.js';
import { deepEqual } from '../../util/deep-equal.js';

/** The keys of a map (none when it is not one). A data map can hold 100,000 keys: no entry arrays. */
const keysOf = (v: unknown): string[] => (isObject(v) ? Object.keys(v) : []);

/** core.MaxSecretSize, the limit of a ConfigMap's and a Secret's data. */
export const MAX_DATA_SIZE = 1024 * 1024;

const CONFIG_KEY_FMT = '[-._a-zA-Z0-9]+';
const CONFIG_KEY_RE = /^[-._a-zA-Z0-9]+$/;

/** validation.IsConfigMapKey. */
export function isConfigMapKey(key: string): string[] {
  const errs: string[] = [];
  if (key.length > 253) errs.push(maxLenError(253));
  if (!CONFIG_KEY_RE.test(key)) errs.push(regexError("a valid config key must consist of alphanumeric characters, '-', '_' or '.'", CONFIG_KEY_FMT, 'key.name', 'KEY_NAME', 'key-name'));
  if (key === '.') errs.push("must not be '.'");
  else if (key === '..') errs.push("must not be '..'");
  else if (key.startsWith('..')) errs.push("must not start with '..'");
  return errs;
}

/** The bytes a base64 value decodes to. */
const decodedLength = (v: unknown) => (typeof v === 'string' ? Buffer.byteLength(v, 'base64') : 0);

/** Keys that are config keys need no more checks (the common case, one test each). */
function keyErrors(errs: FieldError[], bag: string, key: string): void {
  if (key.length <= 253 && CONFIG_KEY_RE.test(key) && !key.startsWith('..') && key !== '.') return;
  for (const msg of isConfigMapKey(key)) errs.push(field.invalid(`${bag}[${key}]`, key, msg));
}

/** An `immutable` object's data and immutability cannot change. */
function immutableErrors(obj: KObject, old: KObject, bags: string[]): FieldError[] {
  if (old.immutable !== true) return [];
  const errs: FieldError[] = [];
  const msg = 'field is immutable when `immutable` is set';
  if (obj.immutable !== true) errs.push(field.forbidden('immutable', msg));
  for (const bag of bags) if (!deepEqual(obj[bag] ?? {}, old[bag] ?? {})) errs.push(field.forbidden(bag, msg));
  return errs;
}

function validateConfigMap(cm: KObject): FieldError[] {
  const errs: FieldError[] = [];
  const data = isObject(cm.data) ? cm.data : {};
  const binary = isObject(cm.binaryData) ? cm.binaryData : {};
  let size = 0;
  for (const key of keysOf(cm.data)) {
    keyErrors(errs, 'data', key);
    if (Object.hasOwn(binary, key)) errs.push(field.invalid(`data[${key}]`, key, 'duplicate of key present in binaryData'));
    const value = data[key];
    size += typeof value === 'string' ? Buffer.byteLength(value, 'utf8') : 0;
  }
  for (const key of keysOf(cm.binaryData)) {
    keyErrors(errs, 'binaryData', key);
    size += decodedLength(binary[key]);
  }
  // The path "" names the whole object; Go prints it as "[]".
  if (size > MAX_DATA_SIZE) errs.push(field.tooLong('[]', cm, MAX_DATA_SIZE));
  return errs;
}

/** The keys each Secret type needs in data. */
const REQUIRED_KEYS: Record<string, string[]> = {
  'kubernetes.io/dockercfg': ['.dockercfg'],
  'kubernetes.io/dockerconfigjson': ['.dockerconfigjson'],
  'kubernetes.io/ssh-auth': ['ssh-privatekey'],
  'kubernetes.io/tls': ['tls.crt', 'tls.key'],
};

function validateSecret(secret: KObject): FieldError[] {
  const errs: FieldError[] = [];
  const data = isObject(secret.data) ? secret.data : {};
  let size = 0;
  for (const key of keysOf(secret.data)) {
    keyErrors(errs, 'data', key);
    size += decodedLength(data[key]);
  }
  if (size > MAX_DATA_SIZE) errs.push(field.tooLong('data', '', MAX_DATA_SIZE));
  const type = typeof secret.type === 'string' ? secret.type : '';
  for (const key of REQUIRED_KEYS[type] ?? []) if (!Object.hasOwn(data, key) || data[key] === '') errs.push(field.required(`data[${key}]`, ''));
  for (const key of ['.dockercfg', '.dockerconfigjson']) {
    if (REQUIRED_KEYS[type]?.[0] !== key || typeof data[key] !== 'string' || data[key] === '') continue;
    try {
      JSON.parse(Buffer.from(data[key] as string, 'base64').toString('utf8'));
    } catch (err) {
      errs.push(field.invalid(`data[${key}]`, '<secret contents redacted>', (err as Error).message));
    }
  }
  if (type === 'kubernetes.io/service-account-token') {
    const annotations = isObject(secret.metadata?.annotations) ? secret.metadata.annotations : {};
    if (!annotations['kubernetes.io/service-account.name']) errs.push(field.required('metadata.annotations[kubernetes.io/service-account.name]', ''));
  }
  if (type === 'kubernetes.io/basic-auth' && !Object.hasOwn(data, 'username') && !Object.hasOwn(data, 'password')) {
    errs.push(field.required('data[username]', ''), field.required('data[password]', ''));
  }
  return errs;
}

export function configMapStrategy(base: Strategy): Strategy {
  return {
    ...base,
    validate: (cm, ctx) => [...validateConfigMap(cm), ...(base.validate?.(cm, ctx) ?? [])],
    validateUpdate: (cm, old, ctx) => [...validateConfigMap(cm), ...immutableErrors(cm, old, ['data', 'binaryData']), ...(base.validateUpdate?.(cm, old, ctx) ?? [])],
  };
}

export function secretStrategy(base: Strategy): Strategy {
  return {
    ...base,
    validate: (s, ctx) => [...validateSecret(s), ...(base.validate?.(s, ctx) ?? [])],
    validateUpdate(s, old, ctx) {
      const errs = [...validateSecret(s), ...immutableErrors(s, old, ['data'])];
      if ((old.type ?? '') !== (s.type ?? '')) errs.push(field.invalid('type', s.type, 'field is immutable'));
      return [...errs, ...(base.validateUpdate?.(s, old, ctx) ?? [])];
    },
  };
}
