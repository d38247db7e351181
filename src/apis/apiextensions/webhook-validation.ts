/**
 * Conversion webhook client config checks (apiserver pkg/util/webhook/validation.go,
 * 1.20 texts), with the part of Go's net/url.Parse they depend on: the same
 * accepted URLs and the same error texts for the common malformations.
 */
import { childPath, field, type FieldError } from '../../machinery/field-errors.js';
import { isDNS1123Subdomain, isValidPortNum } from './names-validation.js';

export interface GoURL {
  scheme: string;
  opaque: string;
  user?: string;
  host: string;
  path: string;
  rawQuery: string;
  fragment: string;
}

/** Go's strconv.Quote, close enough for error texts. */
function quote(s: string): string {
  return JSON.stringify(s);
}

const isHex = (c: string): boolean => /^[0-9a-fA-F]$/.test(c);

/** Go's url.unescape error checks and decoding for path, host and fragment modes. */
function unescape(s: string, mode: 'host' | 'path' | 'fragment' | 'user'): string {
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '%') {
      if (i + 2 >= s.length || !isHex(s[i + 1]) || !isHex(s[i + 2])) {
        throw new Error(`invalid URL escape ${quote(s.slice(i, i + 3))}`);
      }
      if (mode === 'host' && parseInt(s[i + 1], 16) < 8 && s.slice(i, i + 3) !== '%25') {
        throw new Error(`invalid URL escape ${quote(s.slice(i, i + 3))}`);
      }
      i += 2;
    } else if (mode === 'host' && c.charCodeAt(0) < 0x80 && !/[A-Za-z0-9!$&'()*+,;=:[\]<>"\-_.~]/.test(c)) {
      throw new Error(`invalid character ${quote(c)} in host name`);
    }
  }
  const bytes: number[] = [];
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '%') {
      bytes.push(parseInt(s.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(s[i], 'utf8'));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

function validOptionalPort(port: string): boolean {
  return port === '' || /^:[0-9]*$/.test(port);
}

function parseHost(host: string): string {
  if (host.startsWith('[')) {
    const i = host.lastIndexOf(']');
    if (i < 0) throw new Error("missing ']' in host");
    const colonPort = host.slice(i + 1);
    if (!validOptionalPort(colonPort)) throw new Error(`invalid port ${quote(colonPort)} after host`);
  } else {
    const i = host.lastIndexOf(':');
    if (i !== -1) {
      const colonPort = host.slice(i);
      if (!validOptionalPort(colonPort)) throw new Error(`invalid port ${quote(colonPort)} after host`);
    }
  }
  return unescape(host, 'host');
}

function parseAuthority(authority: string): { user?: string; host: string } {
  const i = authority.lastIndexOf('@');
  const host = parseHost(i < 0 ? authority : authority.slice(i + 1));
  if (i < 0) return { host };
  const userinfo = authority.slice(0, i);
  if (!/^[A-Za-z0-9\-._:~!$&'()*+,;=%@]*$/.test(userinfo)) throw new Error('net/url: invalid userinfo');
  return { user: userinfo, host };
}

function parse(raw: string): GoURL {
  if (/[\x00-\x1f\x7f]/.test(raw)) throw new Error('net/url: invalid control character in URL');
  const u: GoURL = { scheme: '', opaque: '', host: '', path: '', rawQuery: '', fragment: '' };
  if (raw === '*') {
    u.path = '*';
    return u;
  }
  let rest = raw;
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(raw);
  if (raw.startsWith(':')) throw new Error('missing protocol scheme');
  if (m) {
    u.scheme = m[1].toLowerCase();
    rest = raw.slice(m[0].length);
  }
  if (rest.endsWith('?') && rest.split('?').length === 2) {
    rest = rest.slice(0, -1);
  } else {
    const q = rest.indexOf('?');
    if (q >= 0) {
      u.rawQuery = rest.slice(q + 1);
      rest = rest.slice(0, q);
    }
  }
  if (!rest.startsWith('/')) {
    if (u.scheme !== '') {
      u.opaque = rest;
      return u;
    }
    const slash = rest.indexOf('/');
    if ((slash < 0 ? rest : rest.slice(0, slash)).includes(':')) throw new Error('first path segment in URL cannot contain colon');
  }
  if ((u.scheme !== '' || !rest.startsWith('///')) && rest.startsWith('//')) {
    let authority = rest.slice(2);
    rest = '';
    const i = authority.indexOf('/');
    if (i >= 0) {
      rest = authority.slice(i);
      authority = authority.slice(0, i);
    }
    Object.assign(u, parseAuthority(authority));
  }
  u.path = unescape(rest, 'path');
  return u;
}

/** Go's url.Parse; throws with Go's error text (`parse "<url>": <reason>`). */
export function parseGoURL(raw: string): GoURL {
  const hash = raw.indexOf('#');
  const u = hash < 0 ? raw : raw.slice(0, hash);
  let url: GoURL;
  try {
    url = parse(u);
  } catch (e) {
    throw new Error(`parse ${quote(u)}: ${(e as Error).message}`);
  }
  if (hash >= 0) {
    try {
      url.fragment = unescape(raw.slice(hash + 1), 'fragment');
    } catch (e) {
      throw new Error(`parse ${quote(raw)}: ${(e as Error).message}`);
    }
  }
  return url;
}

const FORM = '; desired format: https://host[/path]';

export function validateWebhookURL(path: string, url: string, forceHttps: boolean): FieldError[] {
  let u: GoURL;
  try {
    u = parseGoURL(url);
  } catch (e) {
    return [field.required(path, `url must be a valid URL: ${(e as Error).message}${FORM}`)];
  }
  const errs: FieldError[] = [];
  if (forceHttps && u.scheme !== 'https') errs.push(field.invalid(path, u.scheme, `'https' is the only allowed URL scheme${FORM}`));
  if (u.host.length === 0) errs.push(field.invalid(path, u.host, `host must be provided${FORM}`));
  if (u.user !== undefined) errs.push(field.invalid(path, u.user, 'user information is not permitted in the URL'));
  if (u.fragment.length) errs.push(field.invalid(path, u.fragment, 'fragments are not permitted in the URL'));
  if (u.rawQuery.length) errs.push(field.invalid(path, u.rawQuery, 'query parameters are not permitted in the URL'));
  return errs;
}

export function validateWebhookService(path: string, namespace: string, name: string, urlPath: string | undefined, port: number): FieldError[] {
  const errs: FieldError[] = [];
  if (!name) errs.push(field.required(childPath(path, 'name'), 'service name is required'));
  if (!namespace) errs.push(field.required(childPath(path, 'namespace'), 'service namespace is required'));
  const portErrs = isValidPortNum(port);
  if (portErrs.length) errs.push(field.invalid(childPath(path, 'port'), port, `port is not valid: ${portErrs.join(', ')}`));
  if (urlPath === undefined || urlPath === '/' || urlPath === '') return errs;
  const pathField = childPath(path, 'path');
  if (urlPath === '//') return [...errs, field.invalid(pathField, urlPath, 'segment[0] may not be empty')];
  if (!urlPath.startsWith('/')) errs.push(field.invalid(pathField, urlPath, "must start with a '/'"));
  let toCheck = urlPath.slice(1);
  if (toCheck.endsWith('/')) toCheck = toCheck.slice(0, -1);
  toCheck.split('/').forEach((step, i) => {
    if (step.length === 0) {
      errs.push(field.invalid(pathField, urlPath, `segment[${i}] may not be empty`));
      return;
    }
    for (const failure of isDNS1123Subdomain(step)) errs.push(field.invalid(pathField, urlPath, `segment[${i}]: ${failure}`));
  });
  return errs;
}
