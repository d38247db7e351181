/**
 * A serving certificate of the user's (--tls-cert-file, --tls-private-key-file), reloaded when its files
 * change, as kube-apiserver's dynamic serving certificate: the files are looked at every second; a
 * certificate and key that belong together replace the served ones for new connections; a pair that does
 * not (a half-written renewal) is reported and the served one kept.
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync, statSync, unwatchFile, watchFile } from 'node:fs';

export interface CertificatePair {
  certPem: string;
  keyPem: string;
}

/** Reads the pair, checking the certificate parses and the key is its key. */
export function readCertificatePair(certFile: string, keyFile: string): CertificatePair {
  const certPem = readFileSync(certFile, 'utf8');
  const keyPem = readFileSync(keyFile, 'utf8');
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(certPem);
  } catch (err) {
    throw new Error(`failed to load serving certificate ${JSON.stringify(certFile)}: ${(err as Error).message}`);
  }
  let ok = false;
  try {
    ok = cert.checkPrivateKey(createPrivateKey(keyPem));
  } catch (err) {
    throw new Error(`failed to load serving key ${JSON.stringify(keyFile)}: ${(err as Error).message}`);
  }
  if (!ok) throw new Error(`the serving key ${JSON.stringify(keyFile)} does not match the certificate ${JSON.stringify(certFile)}`);
  return { certPem, keyPem };
}

/** What the pair's files are now (modification time, size, inode): a change of either changes it. */
export function certificatePairStamp(certFile: string, keyFile: string): string {
  return [certFile, keyFile]
    .map((f) => {
      try {
        const s = statSync(f);
        return `${s.mtimeMs}:${s.size}:${s.ino}`;
      } catch {
        return 'missing';
      }
    })
    .join('|');
}

/**
 * Watches the pair; `onChange` gets each new pair that belongs together. `since`: the stamp of the files
 * as they were read (default: as they are now). Returns the stop function.
 */
export function watchCertificatePair(
  certFile: string,
  keyFile: string,
  onChange: (pair: CertificatePair) => void,
  warn: (message: string) => void,
  intervalMs = 1000,
  since = certificatePairStamp(certFile, keyFile),
): () => void {
  const stamp = () => certificatePairStamp(certFile, keyFile);
  let last = since;
  const check = () => {
    const now = stamp();
    if (now === last) return;
    last = now;
    try {
      onChange(readCertificatePair(certFile, keyFile));
    } catch (err) {
      warn(`kapi: keeping the serving certificate: ${(err as Error).message}`);
    }
  };
  watchFile(certFile, { interval: intervalMs, persistent: false }, check);
  watchFile(keyFile, { interval: intervalMs, persistent: false }, check);
  // A change since `since` (before the watch began) is taken now.
  check();
  return () => {
    unwatchFile(certFile, check);
    unwatchFile(keyFile, check);
  };
}
