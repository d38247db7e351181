/**
 * The string formats custom resource validation enforces: kube-openapi's strfmt
 * registry (bsonobjectid, uri, email, hostname, ipv4, ipv6, cidr, mac, uuid*,
 * isbn*, creditcard, ssn, hexcolor, rgbcolor, byte, password, date, duration,
 * date-time) plus k8s-short-name and k8s-long-name; and apiextensions' rule of which
 * formats survive in a schema (others, and number formats other than
 * int32/int64/float/double, are ignored). Names compare without dashes, as
 * go-openapi normalizes them.
 */
import { byteLength } from '../machinery/go-text.js';
import { compileRegex } from './regex/index.js';
import { parseGoDuration } from '../machinery/time.js';

export const normalizeFormat = (f: string): string => f.replace(/-/g, '');

/**
 * The format the validator sees for a schema node (StripUnsupportedFormatsPostProcessor),
 * given its OpenAPI types (int-or-string counts as two types).
 */
export function effectiveFormat(format: string | undefined, types: string[]): string {
  if (!format) return '';
  const type = types.length === 1 ? types[0] : '';
  switch (type) {
    case '':
    case 'string':
      return Object.prototype.hasOwnProperty.call(VALIDATORS, normalizeFormat(format)) ? format : '';
    case 'integer':
      return format === 'int32' || format === 'int64' ? format : '';
    case 'number':
      return format === 'float' || format === 'double' ? format : '';
    default:
      return '';
  }
}

/** The validator of a registered string format, or undefined (strfmt ContainsName). */
export function formatValidator(format: string): ((s: string) => boolean) | undefined {
  const n = normalizeFormat(format);
  return Object.prototype.hasOwnProperty.call(VALIDATORS, n) ? VALIDATORS[n] : undefined;
}

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID3 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID4 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const UUID5 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const HEXCOLOR = /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;
const RGB_PART = '\\s*(0|[1-9]\\d?|1\\d\\d?|2[0-4]\\d|25[0-5])\\s*';
const RGBCOLOR = new RegExp(`^rgb\\(${RGB_PART},${RGB_PART},${RGB_PART}\\)$`);
const SSN = /^\d{3}[- ]?\d{2}[- ]?\d{4}$/;
const CREDIT_CARD = /^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11})$/;
const SHORT_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const LONG_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DATE_TIME_CLOCK = /^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$/;
// The hostname pattern nests quantifiers; it runs on the linear-time engine.
const HOSTNAME_PATTERN =
  '^([a-zA-Z0-9\\p{S}\\p{L}]((-?[a-zA-Z0-9\\p{S}\\p{L}]{0,62})?)|([a-zA-Z0-9\\p{S}\\p{L}](([a-zA-Z0-9-\\p{S}\\p{L}]{0,61}[a-zA-Z0-9\\p{S}\\p{L}])?)(\\.)){1,}([a-zA-Z\\p{L}]){2,63})$';

const VALIDATORS: Record<string, (s: string) => boolean> = {
  bsonobjectid: (s) => /^[0-9a-fA-F]{24}$/.test(s),
  uri: isRequestURI,
  email: isEmail,
  hostname: (s) => s.length <= 255 && compileRegex(HOSTNAME_PATTERN).test(s) && byteLength(s) <= 255 && s.split('.').every((p) => byteLength(p) <= 63),
  ipv4: (s) => parseIPSloppy(s) && s.includes('.'),
  ipv6: (s) => parseIPv6(s, false) && s.includes(':'),
  cidr: isCIDR,
  mac: isMAC,
  uuid: (s) => UUID.test(s),
  uuid3: (s) => UUID3.test(s),
  uuid4: (s) => UUID4.test(s),
  uuid5: (s) => UUID5.test(s),
  isbn: (s) => isISBN(s, 10) || isISBN(s, 13),
  isbn10: (s) => isISBN(s, 10),
  isbn13: (s) => isISBN(s, 13),
  creditcard: isCreditCard,
  ssn: (s) => s.length === 11 && SSN.test(s),
  hexcolor: (s) => HEXCOLOR.test(s),
  rgbcolor: (s) => RGBCOLOR.test(s),
  byte: isBase64,
  password: () => true,
  date: isDate,
  duration: isDuration,
  datetime: isDateTime,
  k8sshortname: (s) => s.length <= 63 && SHORT_NAME.test(s),
  k8slongname: (s) => s.length <= 253 && LONG_NAME.test(s),
};

// ---- dates and times ----

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** time.Parse("2006-01-02", s) */
export function isDate(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return false;
  const y = Number(m[1]);
  const mo = Number(m[2]);
  const d = Number(m[3]);
  if (mo < 1 || mo > 12 || d < 1) return false;
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  return d <= (mo === 2 && leap ? 29 : DAYS_IN_MONTH[mo - 1]);
}

/** strfmt.IsDateTime */
export function isDateTime(str: string): boolean {
  if (str.length < 4) return false;
  const s = str.toLowerCase().split('t');
  if (s.length < 2 || !isDate(s[0])) return false;
  const m = DATE_TIME_CLOCK.exec(s[1]);
  if (!m) return false;
  return m[1] <= '23' && m[2] <= '59' && m[3] <= '59';
}


const SCALA_UNITS = [
  ['ns', 'nano'],
  ['us', 'µs', 'micro'],
  ['ms', 'milli'],
  ['s', 'sec'],
  ['m', 'min'],
  ['h', 'hr', 'hour'],
  ['d', 'day'],
  ['w', 'wk', 'week'],
];

/** strfmt.IsDuration: Go durations or scala-like "3 days". */
export function isDuration(s: string): boolean {
  if (parseGoDuration(s) !== undefined) return true;
  let ok = false;
  for (const m of s.matchAll(/(\d+)\s*([A-Za-zµ]+)/g)) {
    if (m[1].length > 19 || BigInt(m[1]) > 9223372036854775807n) return false;
    const unit = m[2].toLowerCase().trim();
    for (const variants of SCALA_UNITS) {
      variants.forEach((v, i) => {
        if ((i === variants.length - 1 && unit.startsWith(v)) || v.toLowerCase() === unit) ok = true;
      });
    }
  }
  return ok;
}

// ---- network ----

function parseIPv4(s: string, sloppy: boolean): boolean {
  const parts = s.split('.');
  if (parts.length !== 4) return false;
  for (const p of parts) {
    if (!/^\d+$/.test(p)) return false;
    if (!sloppy && p.length > 1 && p[0] === '0') return false;
    if (Number(p) > 255) return false;
  }
  return true;
}

function parseIPv6(s: string, sloppyV4: boolean): boolean {
  if (s.includes('%')) return false;
  let rest = s;
  let groups = 0;
  let ellipsis = false;
  if (rest.startsWith('::')) {
    ellipsis = true;
    rest = rest.slice(2);
    if (rest === '') return true;
  }
  while (rest.length) {
    const m = /^[0-9a-fA-F]{1,4}/.exec(rest);
    if (m && rest[m[0].length] === '.') {
      // trailing embedded IPv4
      if (!parseIPv4(rest, sloppyV4)) return false;
      groups += 2;
      rest = '';
      break;
    }
    if (!m) return false;
    groups++;
    rest = rest.slice(m[0].length);
    if (rest === '') break;
    if (rest[0] !== ':') return false;
    if (rest.startsWith('::')) {
      if (ellipsis) return false;
      ellipsis = true;
      rest = rest.slice(2);
      if (rest === '') break;
    } else {
      rest = rest.slice(1);
      if (rest === '') return false;
    }
    if (groups > 8) return false;
  }
  return ellipsis ? groups < 8 : groups === 8;
}

/** k8s.io/utils/net.ParseIPSloppy: IPv4 may have leading zeros. */
function parseIPSloppy(s: string): boolean {
  return parseIPv4(s, true) || parseIPv6(s, true);
}

function isCIDR(s: string): boolean {
  const slash = s.indexOf('/');
  if (slash < 0) return false;
  const ip = s.slice(0, slash);
  const mask = s.slice(slash + 1);
  if (!/^\d+$/.test(mask) || mask.length > 8) return false;
  const v4 = parseIPv4(ip, true);
  if (!v4 && !parseIPv6(ip, true)) return false;
  return Number(mask) <= (v4 ? 32 : 128);
}

/** net.ParseMAC: 6, 8 or 20 octets separated by ':' or '-', or dotted groups of four hex digits. */
function isMAC(s: string): boolean {
  if (s.length < 14) return false;
  const hex2 = /^[0-9a-fA-F]{2}$/;
  const hex4 = /^[0-9a-fA-F]{4}$/;
  const sizes = [6, 8, 20];
  if (s[2] === ':' || s[2] === '-') {
    if ((s.length + 1) % 3 !== 0) return false;
    const parts = s.split(s[2]);
    return sizes.includes(parts.length) && parts.every((p) => hex2.test(p));
  }
  if (s[4] === '.') {
    if ((s.length + 1) % 5 !== 0) return false;
    const parts = s.split('.');
    return sizes.includes(parts.length * 2) && parts.every((p) => hex4.test(p));
  }
  return false;
}

/** url.ParseRequestURI: an absolute URI or an absolute path, no control bytes, valid escapes. */
function isRequestURI(raw: string): boolean {
  if (raw === '' || /[\x00-\x1f\x7f]/.test(raw)) return false;
  if (raw === '*') return true;
  let rest = raw;
  let scheme = '';
  const sm = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(raw);
  if (sm) {
    scheme = sm[1];
    rest = raw.slice(sm[0].length);
  } else if (raw[0] === ':') return false;
  const q = rest.indexOf('?');
  if (q >= 0) rest = rest.slice(0, q);
  if (!rest.startsWith('/')) return scheme !== '';
  if (scheme && rest.startsWith('//')) {
    const authEnd = rest.indexOf('/', 2);
    const authority = authEnd < 0 ? rest.slice(2) : rest.slice(2, authEnd);
    rest = authEnd < 0 ? '' : rest.slice(authEnd);
    if (!validAuthority(authority)) return false;
  }
  return validEscapes(rest);
}

function validEscapes(s: string): boolean {
  for (let i = s.indexOf('%'); i >= 0; i = s.indexOf('%', i + 1)) {
    if (!/^%[0-9a-fA-F]{2}/.test(s.slice(i, i + 3))) return false;
  }
  return true;
}

function validAuthority(a: string): boolean {
  const at = a.lastIndexOf('@');
  const host = at >= 0 ? a.slice(at + 1) : a;
  if (at >= 0 && !/^[A-Za-z0-9\-._:~!$&'()*+,;=%@]*$/.test(a.slice(0, at))) return false;
  if (host.startsWith('[')) {
    const close = host.indexOf(']');
    if (close < 0) return false;
    const port = host.slice(close + 1);
    return (port === '' || /^:\d*$/.test(port)) && validEscapes(host);
  }
  const colon = host.lastIndexOf(':');
  if (colon >= 0 && !/^\d*$/.test(host.slice(colon + 1))) return false;
  const name = colon >= 0 ? host.slice(0, colon) : host;
  return !/[\s"<>\\^`{|}]/.test(name) && validEscapes(name);
}

// ---- mail ----

const ATEXT = "[A-Za-z0-9!#$%&'*+\\-/=?^_`{|}~\\u0080-\\uffff]";
const DOT_ATOM = `${ATEXT}+(?:\\.${ATEXT}+)*`;
const QUOTED = '"(?:[^"\\\\\\r\\n]|\\\\.)*"';
const ADDR_SPEC = `(?:${DOT_ATOM}|${QUOTED})@(?:${DOT_ATOM}|\\[[^\\[\\]\\\\]*\\])`;
const ADDRESS = new RegExp(`^\\s*(?:(?:${ADDR_SPEC})|(?:(?:[^<>"]*|${QUOTED}\\s*)<${ADDR_SPEC}>))\\s*$`, 'u');

/** net/mail.ParseAddress, approximated by RFC 5322 addr-spec and name-addr forms. */
function isEmail(s: string): boolean {
  return s.length <= 4096 && ADDRESS.test(s);
}

// ---- numbers and encodings ----

function isISBN(str: string, version: 10 | 13): boolean {
  const s = str.replace(/[\s-]+/g, '');
  if (version === 10) {
    if (!/^(?:[0-9]{9}X|[0-9]{10})$/.test(s)) return false;
    let sum = 0;
    for (let i = 0; i < 9; i++) sum += (i + 1) * (s.charCodeAt(i) - 48);
    sum += s[9] === 'X' ? 100 : 10 * (s.charCodeAt(9) - 48);
    return sum % 11 === 0;
  }
  if (!/^[0-9]{13}$/.test(s)) return false;
  let sum = 0;
  for (let i = 0; i < 12; i++) sum += (i % 2 ? 3 : 1) * (s.charCodeAt(i) - 48);
  return s.charCodeAt(12) - 48 - ((10 - (sum % 10)) % 10) === 0;
}

function isCreditCard(str: string): boolean {
  const s = str.replace(/[^0-9]+/g, '');
  if (!CREDIT_CARD.test(s)) return false;
  let sum = 0;
  let double = false;
  for (let i = s.length - 1; i >= 0; i--) {
    let d = s.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      sum += d >= 10 ? (d % 10) + 1 : d;
    } else sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

/** govalidator's base64 pattern: groups of four, the last possibly padded. */
function isBase64(s: string): boolean {
  if (s.length === 0 || s.length % 4 !== 0) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const b64 = (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 43 || c === 47;
    if (b64) continue;
    if (c !== 61) return false;
    const fromEnd = s.length - i;
    if (fromEnd > 2) return false;
    if (fromEnd === 2 && s[s.length - 1] !== '=') return false;
  }
  return true;
}
