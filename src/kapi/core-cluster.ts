/**
 * kapi as an extension server behind a core cluster (kube-apiserver's aggregation): the request-header
 * settings and client CAs the core cluster publishes in kube-system/extension-apiserver-authentication,
 * read from it; and, when kapi is the front, the same ConfigMap written for its own extension servers.
 */
import type { KObject } from '../api/object.js';
import type { RestStore } from '../registry/store.js';
import { parseCertificateBundle } from '../server/certs.js';
import { IssuerCheck, REQUEST_HEADER_DEFAULTS, RequestHeaderAuthenticator } from '../server/request-header.js';
import type { HttpServerOptions } from '../server/server.js';
import { deepEqual } from '../util/deep-equal.js';
import { isRecord } from '../util/json-object.js';
import type { KapiOptions } from './options.js';

/**
 * kube-system/extension-apiserver-authentication, as kube-apiserver's ClientCARegistrationHook writes it: the CAs
 * of client certificates, the front proxy's CA, and its allowed names and headers (JSON lists); written only
 * when it says something else.
 */
export async function publishExtensionAuthentication(store: RestStore, clientCAs: string[], frontProxyCAs: string[], settings: NonNullable<KapiOptions['requestHeader']>): Promise<void> {
  const settingsData = {
    'requestheader-allowed-names': JSON.stringify(settings.allowedNames ?? []),
    'requestheader-username-headers': JSON.stringify(settings.usernameHeaders ?? REQUEST_HEADER_DEFAULTS.usernameHeaders),
    'requestheader-uid-headers': JSON.stringify(settings.uidHeaders ?? REQUEST_HEADER_DEFAULTS.uidHeaders),
    'requestheader-group-headers': JSON.stringify(settings.groupHeaders ?? REQUEST_HEADER_DEFAULTS.groupHeaders),
    'requestheader-extra-headers-prefix': JSON.stringify(settings.extraHeaderPrefixes ?? REQUEST_HEADER_DEFAULTS.extraHeaderPrefixes),
  };
  // The CA bundles are joined with what is there (replicas, each with its own CA, publish into the one ConfigMap).
  const dataOf = (old: KObject | undefined) => ({
    'client-ca-file': joinedBundle(old?.data?.['client-ca-file'], clientCAs),
    'requestheader-client-ca-file': joinedBundle(old?.data?.['requestheader-client-ca-file'], frontProxyCAs),
    ...settingsData,
  });
  const current = await store.get('kube-system', EXTENSION_AUTHENTICATION).catch(() => undefined);
  if (current && deepEqual(current.data, dataOf(current))) return;
  await store.update(
    'kube-system',
    EXTENSION_AUTHENTICATION,
    (old) => ({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { ...(old?.metadata ?? {}), name: EXTENSION_AUTHENTICATION, namespace: 'kube-system' }, data: dataOf(old) }),
    { allowCreate: true },
  );
}

/** A PEM bundle of the certificates already published (those that parse) and these, each once. */
function joinedBundle(published: unknown, pems: string[]): string {
  let known: string[] = [];
  try {
    known = typeof published === 'string' && published ? parseCertificateBundle(published, EXTENSION_AUTHENTICATION) : [];
  } catch {
    known = [];
  }
  const seen = new Set<string>();
  const out: string[] = [];
  for (const pem of [...known, ...pems]) {
    const key = pem.replace(/\s+/g, '');
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(pem.endsWith('\n') ? pem : `${pem}\n`);
  }
  return out.join('');
}

export const EXTENSION_AUTHENTICATION = 'extension-apiserver-authentication';

/**
 * The request-header settings kube-apiserver publishes in kube-system/extension-apiserver-authentication
 * (undefined: the ConfigMap or its CA is not there; 'invalid': its CA or a list does not parse).
 */
export function requestHeaderFromConfigMap(cm: KObject | undefined): { options: NonNullable<KapiOptions['requestHeader']>; cas: string[] } | 'invalid' | undefined {
  const data: Record<string, unknown> = isRecord(cm?.data) ? cm!.data : {};
  const ca = data['requestheader-client-ca-file'];
  if (typeof ca !== 'string' || !ca) return undefined;
  let malformed = false;
  // A list the core cluster does not give (or gives as null) is empty, as upstream reads it: no header of that kind.
  const list = (key: string): string[] => {
    if (data[key] === undefined || data[key] === '') return [];
    try {
      const v: unknown = JSON.parse(String(data[key]));
      if (v === null) return [];
      if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v;
    } catch {
      // as below
    }
    malformed = true;
    return [];
  };
  let cas: string[];
  try {
    cas = parseCertificateBundle(ca, `kube-system/${EXTENSION_AUTHENTICATION}`);
  } catch {
    return 'invalid';
  }
  const options = {
    clientCAFile: `kube-system/${EXTENSION_AUTHENTICATION}`,
    allowedNames: list('requestheader-allowed-names'),
    usernameHeaders: list('requestheader-username-headers'),
    uidHeaders: list('requestheader-uid-headers'),
    groupHeaders: list('requestheader-group-headers'),
    extraHeaderPrefixes: list('requestheader-extra-headers-prefix'),
  };
  return malformed ? 'invalid' : { cas, options };
}

/** The CAs of users' client certificates the core cluster publishes (its client-ca-file; 'invalid': it does not parse). */
export function clientCAsFromConfigMap(cm: KObject | undefined): string[] | 'invalid' {
  const ca = isRecord(cm?.data) ? cm!.data['client-ca-file'] : undefined;
  if (typeof ca !== 'string' || !ca) return [];
  try {
    return parseCertificateBundle(ca, `kube-system/${EXTENSION_AUTHENTICATION}`);
  } catch {
    return 'invalid';
  }
}

/** The server's request-header authentication of these settings (the front proxy's CAs, and those of users' own certificates). */
export function requestHeaderAuthentication(settings: NonNullable<KapiOptions['requestHeader']>, frontProxyCAs: string[], userCAs: string[]): NonNullable<HttpServerOptions['requestHeader']> {
  return {
    authenticator: new RequestHeaderAuthenticator({
      clientCAs: frontProxyCAs,
      allowedNames: settings.allowedNames ?? [],
      usernameHeaders: settings.usernameHeaders ?? REQUEST_HEADER_DEFAULTS.usernameHeaders,
      uidHeaders: settings.uidHeaders ?? REQUEST_HEADER_DEFAULTS.uidHeaders,
      groupHeaders: settings.groupHeaders ?? REQUEST_HEADER_DEFAULTS.groupHeaders,
      extraHeaderPrefixes: settings.extraHeaderPrefixes ?? REQUEST_HEADER_DEFAULTS.extraHeaderPrefixes,
    }),
    clientIssuers: new IssuerCheck(userCAs),
  };
}
