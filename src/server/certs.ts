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
import { createHash, createPrivateKey, generateKeyPairSync, randomBytes, sign, X509Certificate, type KeyObject } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { isIP, isIPv4, isIPv6 } from 'node:net';
import { join } from 'node:path';
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
const CA_LIFETIME_MS = 3650 * DAY_MS;
const SERVING_LIFETIME_MS = 365 * DAY_MS;
const RENEW_BEFORE_MS = 30 * DAY_MS;
// Backdated like client-go's self-signed certificates, for clients whose clocks lag.
const BACKDATE_MS = 60 * 60 * 1000;
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
    ca = createCA(now);
    caIsNew = true;
    // Key first: a crash between the writes leaves a key with no certificate,
    // which the next start replaces, never a certificate without its key.
    await writeFileAtomic(paths.caKey, ca.keyPem, 0o600);
    await writeFileAtomic(paths.caCert, ca.certPem, 0o644);
  }

  let serving = { certPem: certText ?? '', keyPem: keyText ?? '' };
  if (caIsNew || certText === undefined || keyText === undefined || !servingCertUsable(certText, keyText, ca.cert, hosts, now)) {
    serving = issueServingCert(ca, hosts, now);
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
// Hosts

type Host = { kind: 'ip'; text: string; bytes: Buffer } | { kind: 'dns'; name: string };

const DNS_LABEL = /^[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?$/;

function normalizeHosts(hosts: string[]): Host[] {
  const out: Host[] = [];
  const seen = new Set<string>();
  for (const raw of hosts) {
    const host = parseHost(raw);
    const key = host.kind === 'ip' ? `ip:${host.bytes.toString('hex')}` : `dns:${host.name}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(host);
  }
  return out;
}

function parseHost(raw: string): Host {
  let h = raw.trim();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  // A zone (fe80::1%eth0) names a local interface; certificates hold only the address.
  const zone = h.indexOf('%');
  if (zone > 0 && isIPv6(h.slice(0, zone))) h = h.slice(0, zone);
  if (isIP(h)) return { kind: 'ip', text: h, bytes: ipBytes(h) };

  const name = h.toLowerCase().replace(/\.$/, '');
  const labels = name.split('.');
  const valid =
    name.length > 0 &&
    name.length <= 253 &&
    labels.every((label, i) => (i === 0 && label === '*' && labels.length > 1) || DNS_LABEL.test(label));
  if (!valid) throw new Error(`invalid certificate host ${JSON.stringify(raw)}: want an IP address or DNS name`);
  return { kind: 'dns', name };
}

function ipBytes(ip: string): Buffer {
  if (isIPv4(ip)) return Buffer.from(ip.split('.').map(Number));
  let text = ip;
  // Fold a trailing dotted IPv4 part (::ffff:1.2.3.4) into two hex groups.
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (tail.includes('.')) {
    const [a, b, c, d] = tail.split('.').map(Number);
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, rest] = text.split('::');
  const headGroups = head ? head.split(':') : [];
  const restGroups = rest ? rest.split(':') : [];
  const zeros = rest === undefined ? 0 : 8 - headGroups.length - restGroups.length;
  const groups = [...headGroups, ...Array<string>(zeros).fill('0'), ...restGroups];
  const bytes = Buffer.alloc(16);
  groups.forEach((g, i) => bytes.writeUInt16BE(parseInt(g, 16), i * 2));
  return bytes;
}

function certCoversHost(cert: X509Certificate, host: Host): boolean {
  if (host.kind === 'ip') return cert.checkIP(host.text) !== undefined;
  // A requested wildcard must be present literally; checkHost only matches
  // concrete names against the certificate's wildcards.
  if (host.name.startsWith('*.')) {
    return (cert.subjectAltName ?? '').split(', ').includes(`DNS:${host.name}`);
  }
  return cert.checkHost(host.name, { subject: 'never' }) !== undefined;
}

// ---------------------------------------------------------------------------
// Loading and checking

interface LoadedCA {
  cert: X509Certificate;
  certPem: string;
  key: KeyObject;
  keyPem: string;
  /** The DER subject Name, copied verbatim into the issuer of certificates it signs. */
  subject: Buffer;
}

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
    cert = new X509Certificate(certText);
  } catch (err) {
    return fail(`cannot parse CA certificate ${certPath}: ${(err as Error).message}`);
  }
  try {
    key = createPrivateKey(keyText);
  } catch (err) {
    return fail(`cannot parse CA key ${keyPath}: ${(err as Error).message}`);
  }
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    fail(`CA key ${keyPath} is not an ECDSA P-256 key`);
  }
  if (!cert.ca) fail(`${certPath} is not a CA certificate`);
  if (!cert.checkPrivateKey(key)) fail(`CA key ${keyPath} does not match ${certPath}`);
  if (Date.parse(cert.validTo) - now < RENEW_BEFORE_MS) return undefined;
  return { cert, certPem: certText, key, keyPem: keyText, subject: rawSubject(cert.raw) };
}

function servingCertUsable(certText: string, keyText: string, caCert: X509Certificate, hosts: Host[], now: number): boolean {
  return certUsable(certText, keyText, caCert, now, (cert) => hosts.every((h) => certCoversHost(cert, h)));
}

/** A certificate of the key, issued by the CA, valid now and for the renewal margin (and `also`). */
function certUsable(certText: string, keyText: string, caCert: X509Certificate, now: number, also: (cert: X509Certificate) => boolean = () => true): boolean {
  let cert: X509Certificate;
  let key: KeyObject;
  try {
    cert = new X509Certificate(certText);
    key = createPrivateKey(keyText);
  } catch {
    return false;
  }
  return (
    cert.checkPrivateKey(key) &&
    cert.checkIssued(caCert) &&
    cert.verify(caCert.publicKey) &&
    Date.parse(cert.validFrom) <= now &&
    Date.parse(cert.validTo) - now >= RENEW_BEFORE_MS &&
    also(cert)
  );
}

/** The subject Name of a DER certificate: the sixth element of tbsCertificate, after an optional [0] version. */
function rawSubject(der: Buffer): Buffer {
  const certificate = readTLV(der, 0);
  const tbs = readTLV(der, certificate.contentStart);
  let pos = tbs.contentStart;
  let field = readTLV(der, pos);
  if (field.tag === 0xa0) {
    pos = field.end;
    field = readTLV(der, pos);
  }
  // serialNumber, signature, issuer, validity, then subject.
  for (let i = 0; i < 4; i++) {
    pos = field.end;
    field = readTLV(der, pos);
  }
  return der.subarray(pos, field.end);
}

function readTLV(buf: Buffer, pos: number): { tag: number; contentStart: number; end: number } {
  const tag = buf[pos];
  let len = buf[pos + 1];
  let contentStart = pos + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + buf[contentStart + i];
    contentStart += n;
  }
  const end = contentStart + len;
  if (tag === undefined || end > buf.length) throw new Error('truncated DER');
  return { tag, contentStart, end };
}

// ---------------------------------------------------------------------------
// Issuing

function createCA(now: number): LoadedCA {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const subject = name(CA_CN);
  const ski = keyIdentifier(publicKey);
  const der = buildCertificate({
    issuer: subject,
    subject,
    publicKey,
    signingKey: privateKey,
    notBefore: now - BACKDATE_MS,
    notAfter: now + CA_LIFETIME_MS,
    extensions: [
      extension(OID.basicConstraints, true, seq(bool(true))),
      // digitalSignature, keyCertSign, cRLSign.
      extension(OID.keyUsage, true, bitString(Buffer.from([0x86]), 1)),
      extension(OID.subjectKeyIdentifier, false, octetString(ski)),
    ],
  });
  const certPem = pem('CERTIFICATE', der);
  return {
    cert: new X509Certificate(der),
    certPem,
    key: privateKey,
    keyPem: privateKey.export({ type: 'sec1', format: 'pem' }) as string,
    subject,
  };
}

function issueServingCert(ca: LoadedCA, hosts: Host[], now: number): { certPem: string; keyPem: string } {
  const sans = hosts.map((h) => (h.kind === 'dns' ? tlv(0x82, Buffer.from(h.name, 'ascii')) : tlv(0x87, h.bytes)));
  return issueLeaf(ca, name(SERVING_CN), OID.serverAuth, [extension(OID.subjectAltName, false, seq(...sans))], now);
}

/** A client certificate: Common Name the user, Organizations the groups (upstream's x509 user conversion). */
function issueClientCert(ca: LoadedCA, commonName: string, organizations: string[], now: number): { certPem: string; keyPem: string } {
  return issueLeaf(ca, name(commonName, organizations), OID.clientAuth, [], now);
}

/** A certificate the CA signs for a new P-256 key, for one extended key usage (serving or client). */
function issueLeaf(ca: LoadedCA, subject: Buffer, usage: string, more: Buffer[], now: number): { certPem: string; keyPem: string } {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const der = buildCertificate({
    issuer: ca.subject,
    subject,
    publicKey,
    signingKey: ca.key,
    notBefore: now - BACKDATE_MS,
    // Never outlive the CA: the CA is renewed 30 days before it expires, and
    // this certificate with it.
    notAfter: Math.min(now + SERVING_LIFETIME_MS, Date.parse(ca.cert.validTo)),
    extensions: [
      extension(OID.basicConstraints, true, seq()),
      // digitalSignature only: ECDSA keys sign the TLS handshake.
      extension(OID.keyUsage, true, bitString(Buffer.from([0x80]), 7)),
      extension(OID.extKeyUsage, false, seq(oid(usage))),
      ...more,
      extension(OID.subjectKeyIdentifier, false, octetString(keyIdentifier(publicKey))),
      extension(OID.authorityKeyIdentifier, false, seq(tlv(0x80, keyIdentifier(ca.cert.publicKey)))),
    ],
  });
  return { certPem: pem('CERTIFICATE', der), keyPem: privateKey.export({ type: 'sec1', format: 'pem' }) as string };
}

interface CertificateFields {
  issuer: Buffer;
  subject: Buffer;
  publicKey: KeyObject;
  signingKey: KeyObject;
  notBefore: number;
  notAfter: number;
  extensions: Buffer[];
}

function buildCertificate(f: CertificateFields): Buffer {
  const serial = randomBytes(16);
  // Positive and without a leading zero byte, so the INTEGER is minimal DER.
  serial[0] = (serial[0] & 0x7f) | 0x40;
  const signatureAlgorithm = seq(oid(OID.ecdsaWithSHA256));
  const tbs = seq(
    tlv(0xa0, integer(Buffer.from([2]))), // v3
    integer(serial),
    signatureAlgorithm,
    f.issuer,
    seq(time(f.notBefore), time(f.notAfter)),
    f.subject,
    f.publicKey.export({ type: 'spki', format: 'der' }),
    tlv(0xa3, seq(...f.extensions)),
  );
  const signature = sign('sha256', tbs, f.signingKey); // DER ECDSA-Sig-Value
  return seq(tbs, signatureAlgorithm, bitString(signature, 0));
}

/** RFC 5280 method 1: SHA-1 of the subjectPublicKey bits (the EC point, the tail of a P-256 SPKI). */
function keyIdentifier(publicKey: KeyObject): Buffer {
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  return createHash('sha1').update(spki.subarray(spki.length - 65)).digest();
}

function pem(label: string, der: Buffer): string {
  const b64 = der.toString('base64').replace(/.{64}/g, '$&\n').replace(/\n$/, '');
  return `-----BEGIN ${label}-----\n${b64}\n-----END ${label}-----\n`;
}

// ---------------------------------------------------------------------------
// DER encoding, just what the certificates above need.

const OID = {
  commonName: '2.5.4.3',
  ecdsaWithSHA256: '1.2.840.10045.4.3.2',
  basicConstraints: '2.5.29.19',
  keyUsage: '2.5.29.15',
  extKeyUsage: '2.5.29.37',
  subjectAltName: '2.5.29.17',
  subjectKeyIdentifier: '2.5.29.14',
  authorityKeyIdentifier: '2.5.29.35',
  serverAuth: '1.3.6.1.5.5.7.3.1',
  clientAuth: '1.3.6.1.5.5.7.3.2',
  organizationName: '2.5.4.10',
} as const;

function tlv(tag: number, content: Buffer): Buffer {
  const len = content.length;
  let header: Buffer;
  if (len < 0x80) {
    header = Buffer.from([tag, len]);
  } else {
    const lenBytes: number[] = [];
    for (let n = len; n > 0; n = Math.floor(n / 256)) lenBytes.unshift(n & 0xff);
    header = Buffer.from([tag, 0x80 | lenBytes.length, ...lenBytes]);
  }
  return Buffer.concat([header, content]);
}

function seq(...items: Buffer[]): Buffer {
  return tlv(0x30, Buffer.concat(items));
}

function integer(bytes: Buffer): Buffer {
  return tlv(0x02, bytes);
}

function bool(value: boolean): Buffer {
  return tlv(0x01, Buffer.from([value ? 0xff : 0]));
}

function octetString(bytes: Buffer): Buffer {
  return tlv(0x04, bytes);
}

function bitString(bytes: Buffer, unusedBits: number): Buffer {
  return tlv(0x03, Buffer.concat([Buffer.from([unusedBits]), bytes]));
}

function oid(dotted: string): Buffer {
  const parts = dotted.split('.').map(Number);
  const out = [parts[0] * 40 + parts[1]];
  for (const part of parts.slice(2)) {
    const base128 = [part & 0x7f];
    for (let n = part >>> 7; n > 0; n >>>= 7) base128.unshift(0x80 | (n & 0x7f));
    out.push(...base128);
  }
  return tlv(0x06, Buffer.from(out));
}

/** A Name of Organizations then a Common Name (the order of Go's pkix.Name). */
function name(commonName: string, organizations: string[] = []): Buffer {
  const rdn = (type: string, value: string) => tlv(0x31, seq(oid(type), tlv(0x0c, Buffer.from(value, 'utf8'))));
  return seq(...organizations.map((o) => rdn(OID.organizationName, o)), rdn(OID.commonName, commonName));
}

/** UTCTime through 2049, GeneralizedTime after, as RFC 5280 requires. */
function time(ms: number): Buffer {
  const d = new Date(Math.floor(ms / 1000) * 1000);
  const p = (n: number, width = 2) => String(n).padStart(width, '0');
  const rest = `${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}Z`;
  const year = d.getUTCFullYear();
  if (year >= 1950 && year < 2050) return tlv(0x17, Buffer.from(`${p(year % 100)}${rest}`, 'ascii'));
  return tlv(0x18, Buffer.from(`${p(year, 4)}${rest}`, 'ascii'));
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return critical ? seq(oid(id), bool(true), octetString(value)) : seq(oid(id), octetString(value));
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
