/**
 * The serving TLS material under <dataDir>/pki: a self-signed CA (ca.crt,
 * ca.key) and a serving certificate it signs (apiserver.crt, apiserver.key).
 *
 * Certificates are built with a small DER encoder over node:crypto rather than
 * an X.509 library: generating both takes ~2 ms, while loading @peculiar/x509
 * alone costs ~150 ms of the startup budget. Reading them back uses Node's
 * X509Certificate, so the encoder only ever writes.
 *
 * The CA is kept across starts so kubeconfigs written earlier keep working;
 * the serving certificate is re-issued from it when it lacks a requested host,
 * no longer chains to the CA, or expires within 30 days.
 */
import { X509Certificate, type KeyObject } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { certCoversHost, createCA, issueClientCert, issueServingCert, normalizeHosts, parseCertificate, parsePrivateKey, rawSubject, type Host, type LoadedCA } from '../machinery/x509.js';
import { writeFileAtomic } from '../util/private-files.js';

export interface ServingCertificates {
  caCertPem: string;
  certPem: string;
  keyPem: string;
  /** The admin's client certificate (CN kapi-admin, O system:masters), issued by the CA. */
  adminCertPem: string;
  adminKeyPem: string;
}

const CA_CN = 'kapi-ca';
const SERVING_CN = 'kapi-apiserver';
const ADMIN_CN = 'kapi-admin';
const ADMIN_GROUP = 'system:masters';
const DAY_MS = 24 * 60 * 60 * 1000;
const RENEW_BEFORE_MS = 30 * DAY_MS;
const DEFAULT_HOSTS = ['127.0.0.1', '::1', 'localhost'];

/**
 * Returns the CA and serving certificate under <dataDir>/pki, creating or
 * re-issuing them as needed. IP addresses in hosts become IP SANs, anything
 * else DNS SANs; 127.0.0.1, ::1 and localhost are always included.
 */
export async function ensureServingCertificates(dataDir: string, opts: { hosts: string[] }): Promise<ServingCertificates> {
  const hosts = normalizeHosts([...DEFAULT_HOSTS, ...opts.hosts]);
  const dir = join(dataDir, 'pki');
  const paths = {
    caCert: join(dir, 'ca.crt'),
    caKey: join(dir, 'ca.key'),
    cert: join(dir, 'apiserver.crt'),
    key: join(dir, 'apiserver.key'),
    adminCert: join(dir, 'admin.crt'),
    adminKey: join(dir, 'admin.key'),
  };
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const [caCertText, caKeyText, certText, keyText, adminCertText, adminKeyText] = await Promise.all(
    [paths.caCert, paths.caKey, paths.cert, paths.key, paths.adminCert, paths.adminKey].map(readOptional),
  );
  const now = Date.now();

  let ca = loadCA(caCertText, caKeyText, paths, dir, now);
  let caIsNew = false;
  if (!ca) {
    ca = createCA(now, CA_CN);
    caIsNew = true;
    // Key first: a crash between the writes leaves a key with no certificate,
    // which the next start replaces, never a certificate without its key.
    await writeFileAtomic(paths.caKey, ca.keyPem, 0o600);
    await writeFileAtomic(paths.caCert, ca.certPem, 0o644);
  }

  let serving = { certPem: certText ?? '', keyPem: keyText ?? '' };
  if (caIsNew || certText === undefined || keyText === undefined || !servingCertUsable(certText, keyText, ca.cert, hosts, now)) {
    serving = issueServingCert(ca, hosts, now, SERVING_CN);
    await writeFileAtomic(paths.key, serving.keyPem, 0o600);
    await writeFileAtomic(paths.cert, serving.certPem, 0o644);
  }
  let admin = { certPem: adminCertText ?? '', keyPem: adminKeyText ?? '' };
  if (caIsNew || adminCertText === undefined || adminKeyText === undefined || !certUsable(adminCertText, adminKeyText, ca.cert, now)) {
    admin = issueClientCert(ca, ADMIN_CN, [ADMIN_GROUP], now);
    await writeFileAtomic(paths.adminKey, admin.keyPem, 0o600);
    await writeFileAtomic(paths.adminCert, admin.certPem, 0o600);
  }
  return { caCertPem: ca.certPem, certPem: serving.certPem, keyPem: serving.keyPem, adminCertPem: admin.certPem, adminKeyPem: admin.keyPem };
}

/** The certificates of a PEM bundle (--client-ca-file), each checked; an unreadable bundle is an error naming the file. */
export function parseCertificateBundle(text: string, source: string): string[] {
  const blocks = text.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) throw new Error(`unable to load client CA file ${JSON.stringify(source)}: data does not contain any valid RSA or ECDSA certificates`);
  for (const block of blocks) {
    try {
      new X509Certificate(block);
    } catch (err) {
      throw new Error(`unable to load client CA file ${JSON.stringify(source)}: ${(err as Error).message}`);
    }
  }
  return blocks;
}

// ---------------------------------------------------------------------------
// Loading and checking

/** The CA on disk, or undefined when a new one must be made (missing, or about to expire). */
function loadCA(
  certText: string | undefined,
  keyText: string | undefined,
  paths: { caCert: string; caKey: string },
  dir: string,
  now: number,
): LoadedCA | undefined {
  if (certText === undefined || keyText === undefined) return undefined;
  const { caCert: certPath, caKey: keyPath } = paths;
  // An unusable CA that is present is an operator's problem to look at, not
  // something to overwrite: its key may be the only copy.
  const fail = (what: string): never => {
    throw new Error(`${what}; remove ${dir} to generate a new CA (kubeconfigs that embed the old CA will stop working)`);
  };
  let cert: X509Certificate;
  let key: KeyObject;
  try {
    cert = parseCertificate(certText);
  } catch (err) {
    return fail(`cannot parse CA certificate ${certPath}: ${(err as Error).message}`);
  }
  try {
    key = parsePrivateKey(keyText);
  } catch (err) {
    return fail(`cannot parse CA key ${keyPath}: ${(err as Error).message}`);
  }
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    fail(`CA key ${keyPath} is not an ECDSA P-256 key`);
  }
  if (!cert.ca) fail(`${certPath} is not a CA certificate`);
  if (!signedPairs.has(`${certText}\0${keyText}`)) {
    if (!cert.checkPrivateKey(key)) fail(`CA key ${keyPath} does not match ${certPath}`);
    remember(`${certText}\0${keyText}`);
  }
  if (Date.parse(cert.validTo) - now < RENEW_BEFORE_MS) return undefined;
  return { cert, certPem: certText, key, keyPem: keyText, subject: rawSubject(cert.raw) };
}

function servingCertUsable(certText: string, keyText: string, caCert: X509Certificate, hosts: Host[], now: number): boolean {
  return certUsable(certText, keyText, caCert, now, (cert) => hosts.every((h) => certCoversHost(cert, h)));
}

/** Certificate and key texts (with their CA) whose signature checks passed, bounded. */
const signedPairs = new Set<string>();
function remember(pair: string): true {
  if (signedPairs.size >= 64) signedPairs.delete(signedPairs.values().next().value!);
  signedPairs.add(pair);
  return true;
}

/** A certificate of the key, issued by the CA, valid now and for the renewal margin (and `also`). */
function certUsable(certText: string, keyText: string, caCert: X509Certificate, now: number, also: (cert: X509Certificate) => boolean = () => true): boolean {
  let cert: X509Certificate;
  let key: KeyObject;
  try {
    cert = parseCertificate(certText);
    key = parsePrivateKey(keyText);
  } catch {
    return false;
  }
  // The signature checks of a pair already found good under this CA are not made again (a process's test servers).
  const pair = `${certText}\0${keyText}\0${caCert.fingerprint256}`;
  const signed = signedPairs.has(pair) || (cert.checkPrivateKey(key) && cert.checkIssued(caCert) && cert.verify(caCert.publicKey) && remember(pair));
  return (
    signed &&
    Date.parse(cert.validFrom) <= now &&
    Date.parse(cert.validTo) - now >= RENEW_BEFORE_MS &&
    also(cert)
  );
}

// ---------------------------------------------------------------------------
// Files

async function readOptional(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}
