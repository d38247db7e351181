/**
 * X.509 certificates as kapi makes them (ECDSA P-256, DER written here): a CA, serving certificates for hosts (IP
 * addresses and DNS names), client certificates; and the subject of a DER certificate. Used by the server's own
 * certificates (server/certs.ts) and by the SDK's webhook server (self-signed, for a Service's DNS names).
 */
import { createHash, createPrivateKey, generateKeyPairSync, randomBytes, sign, X509Certificate, type KeyObject } from 'node:crypto';
import { isIP, isIPv4, isIPv6 } from 'node:net';

const DAY_MS = 24 * 60 * 60 * 1000;
export const CA_LIFETIME_MS = 3650 * DAY_MS;
export const SERVING_LIFETIME_MS = 365 * DAY_MS;
/** Backdated like client-go's self-signed certificates, for clients whose clocks lag. */
const BACKDATE_MS = 60 * 60 * 1000;

// ---------------------------------------------------------------------------
// Hosts

export type Host = { kind: 'ip'; text: string; bytes: Buffer } | { kind: 'dns'; name: string };

const DNS_LABEL = /^[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?$/;

export function normalizeHosts(hosts: string[]): Host[] {
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

export function certCoversHost(cert: X509Certificate, host: Host): boolean {
  if (host.kind === 'ip') return cert.checkIP(host.text) !== undefined;
  // A requested wildcard must be present literally; checkHost only matches
  // concrete names against the certificate's wildcards.
  if (host.name.startsWith('*.')) {
    return (cert.subjectAltName ?? '').split(', ').includes(`DNS:${host.name}`);
  }
  return cert.checkHost(host.name, { subject: 'never' }) !== undefined;
}

export interface LoadedCA {
  cert: X509Certificate;
  certPem: string;
  key: KeyObject;
  keyPem: string;
  /** The DER subject Name, copied verbatim into the issuer of certificates it signs. */
  subject: Buffer;
}

/** The subject Name of a DER certificate: the sixth element of tbsCertificate, after an optional [0] version. */
export function rawSubject(der: Buffer): Buffer {
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

/** A new CA (its key P-256) named `commonName`, valid ten years. */
export function createCA(now: number, commonName: string): LoadedCA {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const subject = name(commonName);
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

/** A serving certificate for `hosts` (its subject `commonName`), signed by the CA, valid a year (never past the CA). */
export function issueServingCert(ca: LoadedCA, hosts: Host[], now: number, commonName: string): { certPem: string; keyPem: string } {
  const sans = hosts.map((h) => (h.kind === 'dns' ? tlv(0x82, Buffer.from(h.name, 'ascii')) : tlv(0x87, h.bytes)));
  return issueLeaf(ca, name(commonName), OID.serverAuth, [extension(OID.subjectAltName, false, seq(...sans))], now);
}

/** A client certificate: Common Name the user, Organizations the groups (upstream's x509 user conversion). */
export function issueClientCert(ca: LoadedCA, commonName: string, organizations: string[], now: number): { certPem: string; keyPem: string } {
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


/** Parsed PEM texts, by text: a process that starts many servers on the same files (test servers) parses each once. */
const PARSED_LIMIT = 64;
const parsedCertificates = new Map<string, X509Certificate>();
const parsedKeys = new Map<string, KeyObject>();

function remembered<T>(cache: Map<string, T>, text: string, parse: (text: string) => T): T {
  let value = cache.get(text);
  if (value === undefined) {
    value = parse(text);
    if (cache.size >= PARSED_LIMIT) cache.delete(cache.keys().next().value!);
    cache.set(text, value);
  }
  return value;
}

/** A PEM certificate, parsed (once per text; X509Certificate is immutable). Throws as `new X509Certificate` does. */
export function parseCertificate(pem: string): X509Certificate {
  return remembered(parsedCertificates, pem, (t) => new X509Certificate(t));
}

/** A PEM private key, parsed (once per text; a KeyObject is immutable). Throws as `createPrivateKey` does. */
export function parsePrivateKey(pem: string): KeyObject {
  return remembered(parsedKeys, pem, (t) => createPrivateKey(t));
}
