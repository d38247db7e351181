/**
 * apimachinery's string validators (util/validation, api/validate/content,
 * api/validation/path, api/validation/generic.go) with their exact messages.
 * Each returns the list of problems; an empty list means valid.
 */
import { byteLength } from './go-text.js';

export const DNS1123_LABEL_MAX_LENGTH = 63;
export const DNS1123_SUBDOMAIN_MAX_LENGTH = 253;
export const DNS1035_LABEL_MAX_LENGTH = 63;
export const LABEL_VALUE_MAX_LENGTH = 63;
const LABEL_KEY_NAME_MAX_LENGTH = 63;

/** util/validation.MaxLenError (DNS names count "characters"). */
export function maxLenError(length: number): string {
  return `must be no more than ${length} characters`;
}

/** content.MaxLenError (label keys and values count "bytes"). */
function maxBytesError(length: number): string {
  return `must be no more than ${length} bytes`;
}

export function emptyError(): string {
  return 'must be non-empty';
}

export function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  return `${msg} (e.g. ${examples.map((e) => `'${e}', `).join(' or ')}regex used for validation is '${fmt}')`;
}

export function inclusiveRangeError(lo: number, hi: number): string {
  return `must be between ${lo} and ${hi}, inclusive`;
}

const dns1123LabelFmt = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const dns1123LabelErrMsg =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const dns1123LabelRe = new RegExp(`^${dns1123LabelFmt}$`);

const dns1123SubdomainFmt = `${dns1123LabelFmt}(\\.${dns1123LabelFmt})*`;
const dns1123SubdomainErrMsg =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const dns1123SubdomainRe = new RegExp(`^${dns1123SubdomainFmt}$`);

const dns1035LabelFmt = '[a-z]([-a-z0-9]*[a-z0-9])?';
const dns1035LabelErrMsg =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
const dns1035LabelRe = new RegExp(`^${dns1035LabelFmt}$`);

export function isDNS1123Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_LABEL_MAX_LENGTH) errs.push(maxLenError(DNS1123_LABEL_MAX_LENGTH));
  if (!dns1123LabelRe.test(value)) {
    // A valid subdomain that is not a valid label (length was checked above) must contain dots.
    if (dns1123SubdomainRe.test(value)) errs.push('must not contain dots');
    else errs.push(regexError(dns1123LabelErrMsg, dns1123LabelFmt, 'my-name', '123-abc'));
  }
  return errs;
}

export function isDNS1123Subdomain(value: string): string[] {
  return dns1123Subdomain(value, maxLenError);
}

function dns1123Subdomain(value: string, lenError: (n: number) => string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_SUBDOMAIN_MAX_LENGTH) errs.push(lenError(DNS1123_SUBDOMAIN_MAX_LENGTH));
  if (!dns1123SubdomainRe.test(value)) errs.push(regexError(dns1123SubdomainErrMsg, dns1123SubdomainFmt, 'example.com'));
  return errs;
}

export function isDNS1035Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1035_LABEL_MAX_LENGTH) errs.push(maxLenError(DNS1035_LABEL_MAX_LENGTH));
  if (!dns1035LabelRe.test(value)) errs.push(regexError(dns1035LabelErrMsg, dns1035LabelFmt, 'my-name', 'abc-123'));
  return errs;
}

const labelKeyFmt = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const labelKeyErrMsg = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const labelKeyRe = new RegExp(`^${labelKeyFmt}$`);

/**
 * A check of strings with the values found valid remembered (label keys and values,
 * annotation keys: every write of an object checks them again, and they repeat
 * across objects). Bounded: emptied when full.
 */
function rememberingValid(check: (value: string) => string[]): (value: string) => string[] {
  const valid = new Set<string>();
  return (value) => {
    if (valid.has(value)) return [];
    const errs = check(value);
    if (errs.length === 0) {
      if (valid.size >= 4096) valid.clear();
      valid.add(value);
    }
    return errs;
  };
}

/** A label key / "qualified name": `[prefix/]name` (content.IsLabelKey). */
export const isQualifiedName = rememberingValid(qualifiedNameErrors);

function qualifiedNameErrors(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0];
  } else if (parts.length === 2) {
    const prefix = parts[0];
    name = parts[1];
    if (prefix.length === 0) errs.push('prefix part ' + emptyError());
    else for (const msg of dns1123Subdomain(prefix, maxBytesError)) errs.push('prefix part ' + msg);
  } else {
    return [
      'a valid label key ' +
        regexError(labelKeyErrMsg, labelKeyFmt, 'MyName', 'my.name', '123-abc') +
        " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ];
  }
  if (name.length === 0) errs.push('name part ' + emptyError());
  else if (byteLength(name) > LABEL_KEY_NAME_MAX_LENGTH) errs.push('name part ' + maxBytesError(LABEL_KEY_NAME_MAX_LENGTH));
  if (!labelKeyRe.test(name)) errs.push('name part ' + regexError(labelKeyErrMsg, labelKeyFmt, 'MyName', 'my.name', '123-abc'));
  return errs;
}

const labelValueFmt = `(${labelKeyFmt})?`;
const labelValueErrMsg =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const labelValueRe = new RegExp(`^${labelValueFmt}$`);

export const isValidLabelValue = rememberingValid(labelValueErrors);

function labelValueErrors(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > LABEL_VALUE_MAX_LENGTH) errs.push(maxBytesError(LABEL_VALUE_MAX_LENGTH));
  if (!labelValueRe.test(value)) errs.push(regexError(labelValueErrMsg, labelValueFmt, 'MyValue', 'my_value', '12345'));
  return errs;
}

/** content.IsPathSegmentName: safe to use as one URL path segment / storage key segment. */
export function isPathSegmentName(name: string): string[] {
  for (const illegal of ['.', '..']) if (name === illegal) return [`may not be '${illegal}'`];
  return isPathSegmentPrefix(name);
}

/** content.IsPathSegmentPrefix: like isPathSegmentName, but a suffix will follow. */
export function isPathSegmentPrefix(name: string): string[] {
  const errs: string[] = [];
  for (const illegal of ['/', '%']) if (name.includes(illegal)) errs.push(`may not contain '${illegal}'`);
  return errs;
}

/** path.ValidatePathSegmentName */
export function validatePathSegmentName(name: string, prefix: boolean): string[] {
  return prefix ? isPathSegmentPrefix(name) : isPathSegmentName(name);
}

/** A ValidateNameFunc: prefix is true when a random suffix will be appended (generateName). */
export type NameValidator = (name: string, prefix: boolean) => string[];

/** A generateName may end in '-', since the random suffix follows it. */
export function maskTrailingDash(name: string): string {
  return name.length > 1 && name.endsWith('-') ? name.slice(0, -2) + 'a' : name;
}

export const nameIsDNSSubdomain: NameValidator = (name, prefix) => isDNS1123Subdomain(prefix ? maskTrailingDash(name) : name);
export const nameIsDNSLabel: NameValidator = (name, prefix) => isDNS1123Label(prefix ? maskTrailingDash(name) : name);
export const nameIsDNS1035Label: NameValidator = (name, prefix) => isDNS1035Label(prefix ? maskTrailingDash(name) : name);
export const validateNamespaceName: NameValidator = nameIsDNSLabel;
