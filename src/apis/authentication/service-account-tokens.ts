/**
 * ServiceAccount tokens, as kube-apiserver issues and checks them:
 * - issued by the TokenRequest API (`serviceaccounts/<name>/token`): JWTs signed with the
 *   `--service-account-signing-key-file` key (default: one kapi makes in `<data-dir>/pki/sa.key`), for
 *   `--service-account-issuer`, with audiences, an expiry, and optionally the Pod, Secret or Node they
 *   are bound to (the token dies with it), in upstream's claims (`kubernetes.io` with namespace,
 *   serviceaccount, pod, secret, node);
 * - checked as bearer tokens: signature by any key of `--service-account-key-file` (and the signing key),
 *   issuer, expiry, audience, and the account (and bound object) still there with the same uid. Legacy
 *   tokens (issuer `kubernetes/serviceaccount`, held in a Secret of type kubernetes.io/service-account-token)
 *   are valid while that Secret holds them. kapi creates no such Secret itself, as current upstream.
 * The key ID is upstream's: the base64url SHA-256 of the public key's DER.
 */
import { parsePrivateKey } from '../../machinery/x509.js';
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SignJWT, decodeJwt, jwtVerify } from 'jose';
import type { UserInfo } from '../../api/authentication.js';
import { writeFileAtomic } from '../../util/private-files.js';
import type { KObject } from '../../api/object.js';
import { isRecord } from '../../util/json-object.js';

export const DEFAULT_ISSUER = 'https://kubernetes.default.svc.cluster.local';
const LEGACY_ISSUER = 'kubernetes/serviceaccount';
const SA_PREFIX = 'system:serviceaccount:';

export interface ServiceAccountTokenOptions {
  dataDir: string;
  /** --service-account-issuer: the first issues, all are accepted (default DEFAULT_ISSUER). */
  issuers?: string[];
  /** --api-audiences: what a token must be meant for to authenticate here (default: the issuers). */
  apiAudiences?: string[];
  /** --service-account-signing-key-file (PEM private key); default <data-dir>/pki/sa.key, made on first start. */
  signingKeyFile?: string;
  /** --service-account-key-file: PEM files of more keys whose tokens are accepted (public or private keys). */
  keyFiles?: string[];
  /** --service-account-max-token-expiration (seconds): longer requests are cut to it. */
  maxExpirationSeconds?: number;
}

/** Reads the objects a token names: accounts, and what a token is bound to (undefined: there is none). */
export type ObjectGetter = (resource: 'serviceaccounts' | 'pods' | 'secrets' | 'nodes', namespace: string | undefined, name: string) => Promise<KObject | undefined>;

interface VerifyKey {
  key: KeyObject;
  alg: string;
}

function algorithmOf(key: KeyObject): string {
  if (key.asymmetricKeyType === 'rsa') return 'RS256';
  if (key.asymmetricKeyType === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    if (curve === 'prime256v1') return 'ES256';
    if (curve === 'secp384r1') return 'ES384';
    if (curve === 'secp521r1') return 'ES512';
  }
  throw new Error(`unsupported service account key type ${key.asymmetricKeyType ?? '?'}: RSA or ECDSA (P-256, P-384, P-521) keys only`);
}

/** upstream's keyIDFromPublicKey. */
function keyId(publicKey: KeyObject): string {
  return createHash('sha256').update(publicKey.export({ type: 'spki', format: 'der' })).digest('base64url');
}

/** The PEM keys of a file, public or private (a private key gives its public half). */
function publicKeysOf(text: string, source: string): KeyObject[] {
  const blocks = text.match(/-----BEGIN [A-Z ]+-----[\s\S]*?-----END [A-Z ]+-----/g) ?? [];
  const keys: KeyObject[] = [];
  for (const block of blocks) {
    if (block.includes('CERTIFICATE')) continue;
    try {
      keys.push(block.includes('PRIVATE KEY') ? createPublicKey(createPrivateKey(block)) : createPublicKey(block));
    } catch (err) {
      throw new Error(`failed to read service account key file ${JSON.stringify(source)}: ${(err as Error).message}`);
    }
  }
  if (keys.length === 0) throw new Error(`failed to read service account key file ${JSON.stringify(source)}: data does not contain any valid RSA or ECDSA public keys`);
  return keys;
}

/** A token's verdict: not ours (another authenticator may know it), invalid (401), or the user and audiences. */
export type TokenVerdict = undefined | 'invalid' | { user: UserInfo; audiences: string[] };

export interface TokenRequestSpec {
  audiences: string[];
  expirationSeconds: number;
  bound?: { kind: 'Pod' | 'Secret' | 'Node'; name: string; uid: string };
}

export class ServiceAccountTokens {
  readonly issuer: string;
  readonly apiAudiences: string[];
  private readonly issuers: Set<string>;

  private constructor(
    private readonly signingKey: KeyObject,
    private readonly verifyKeys: VerifyKey[],
    opts: ServiceAccountTokenOptions,
  ) {
    const issuers = opts.issuers?.length ? opts.issuers : [DEFAULT_ISSUER];
    this.issuer = issuers[0];
    this.issuers = new Set(issuers);
    this.apiAudiences = opts.apiAudiences?.length ? opts.apiAudiences : issuers;
    this.maxExpirationSeconds = opts.maxExpirationSeconds;
  }

  readonly maxExpirationSeconds?: number;

  /** Loads (or makes) the keys; a key file that cannot be read is an error naming it. */
  static async load(opts: ServiceAccountTokenOptions): Promise<ServiceAccountTokens> {
    let signingPem: string;
    if (opts.signingKeyFile) signingPem = await readFile(opts.signingKeyFile, 'utf8');
    else {
      const path = join(opts.dataDir, 'pki', 'sa.key');
      signingPem = await readFile(path, 'utf8').catch(async (err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') throw err;
        const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
        const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
        await mkdir(join(opts.dataDir, 'pki'), { recursive: true, mode: 0o700 });
        await writeFileAtomic(path, pem, 0o600);
        return pem;
      });
    }
    let signingKey: KeyObject;
    try {
      signingKey = parsePrivateKey(signingPem);
    } catch (err) {
      throw new Error(`failed to read service account signing key file ${JSON.stringify(opts.signingKeyFile ?? 'sa.key')}: ${(err as Error).message}`);
    }
    const publicKeys = [createPublicKey(signingKey)];
    for (const file of opts.keyFiles ?? []) publicKeys.push(...publicKeysOf(await readFile(file, 'utf8'), file));
    return new ServiceAccountTokens(signingKey, publicKeys.map((key) => ({ key, alg: algorithmOf(key) })), opts);
  }

  /**
   * The issuer's OpenID discovery (`/.well-known/openid-configuration`) and its keys (`/openid/v1/jwks`),
   * served when the issuer is an https URL, as upstream: what lets others check kapi's tokens.
   */
  discovery(): { configuration: Record<string, unknown>; jwks: { keys: Record<string, unknown>[] } } | undefined {
    if (this.discoveryDocs !== undefined) return this.discoveryDocs ?? undefined;
    let url: URL | undefined;
    try {
      url = new URL(this.issuer);
    } catch {
      url = undefined;
    }
    if (!url || url.protocol !== 'https:') {
      this.discoveryDocs = null;
      return undefined;
    }
    const keys = this.verifyKeys.map(({ key, alg }) => ({ use: 'sig', kty: key.asymmetricKeyType === 'rsa' ? 'RSA' : 'EC', kid: keyId(key), alg, ...key.export({ format: 'jwk' }) }));
    this.discoveryDocs = {
      configuration: {
        issuer: this.issuer,
        jwks_uri: `${this.issuer.replace(/\/$/, '')}/openid/v1/jwks`,
        response_types_supported: ['id_token'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: [...new Set(this.verifyKeys.map((k) => k.alg))].sort(),
      },
      jwks: { keys },
    };
    return this.discoveryDocs;
  }

  private discoveryDocs?: ReturnType<ServiceAccountTokens['discovery']> | null;

  /** A signed token for the account (TokenRequest), and when it expires. */
  async issue(account: KObject, spec: TokenRequestSpec, now = Date.now()): Promise<{ token: string; expirationTimestamp: Date }> {
    const iat = Math.floor(now / 1000);
    const exp = iat + spec.expirationSeconds;
    const ns = account.metadata.namespace!;
    const claims: Record<string, unknown> = { namespace: ns, serviceaccount: { name: account.metadata.name, uid: account.metadata.uid } };
    if (spec.bound) claims[spec.bound.kind.toLowerCase()] = { name: spec.bound.name, uid: spec.bound.uid };
    const alg = algorithmOf(this.signingKey);
    const token = await new SignJWT({ 'kubernetes.io': claims })
      .setProtectedHeader({ alg, kid: keyId(createPublicKey(this.signingKey)) })
      .setIssuer(this.issuer)
      .setSubject(`${SA_PREFIX}${ns}:${account.metadata.name}`)
      .setAudience(spec.audiences)
      .setIssuedAt(iat)
      .setNotBefore(iat)
      .setExpirationTime(exp)
      .setJti(randomUUID())
      .sign(this.signingKey);
    return { token, expirationTimestamp: new Date(exp * 1000) };
  }

  /** A legacy token for a Secret of type kubernetes.io/service-account-token (what the tokens controller puts in it). */
  async issueLegacy(account: KObject, secretName: string): Promise<string> {
    const ns = account.metadata.namespace!;
    return new SignJWT({
      'kubernetes.io/serviceaccount/namespace': ns,
      'kubernetes.io/serviceaccount/secret.name': secretName,
      'kubernetes.io/serviceaccount/service-account.name': account.metadata.name,
      'kubernetes.io/serviceaccount/service-account.uid': account.metadata.uid,
    })
      .setProtectedHeader({ alg: algorithmOf(this.signingKey), kid: keyId(createPublicKey(this.signingKey)) })
      .setIssuer(LEGACY_ISSUER)
      .setSubject(`${SA_PREFIX}${ns}:${account.metadata.name}`)
      .sign(this.signingKey);
  }

  /** Checks a bearer token meant for one of `audiences` (default: the API's). */
  async authenticate(token: string, get: ObjectGetter, audiences: string[] = this.apiAudiences): Promise<TokenVerdict> {
    let issuer: unknown;
    try {
      issuer = decodeJwt(token).iss;
    } catch {
      return undefined; // not a JWT: another authenticator's
    }
    if (issuer === LEGACY_ISSUER) return this.legacy(token, get, audiences);
    if (typeof issuer !== 'string' || !this.issuers.has(issuer)) return undefined;
    const payload = await this.verified(token, { issuer: [...this.issuers], audience: audiences });
    if (!payload) return 'invalid';
    const k = isRecord(payload['kubernetes.io']) ? payload['kubernetes.io'] : {};
    const ns = typeof k.namespace === 'string' ? k.namespace : '';
    const sa = isRecord(k.serviceaccount) ? k.serviceaccount : {};
    const account = typeof sa.name === 'string' ? await get('serviceaccounts', ns, sa.name) : undefined;
    if (!alive(account, sa.uid)) return 'invalid';
    const extra: Record<string, string[]> = {};
    if (typeof payload.jti === 'string') extra['authentication.kubernetes.io/credential-id'] = [`JTI=${payload.jti}`];
    for (const [kind, resource] of [['pod', 'pods'], ['secret', 'secrets'], ['node', 'nodes']] as const) {
      const ref = k[kind];
      if (!isRecord(ref)) continue;
      const bound = typeof ref.name === 'string' ? await get(resource, kind === 'node' ? undefined : ns, ref.name) : undefined;
      if (!alive(bound, ref.uid)) return 'invalid';
      if (kind !== 'secret') {
        extra[`authentication.kubernetes.io/${kind}-name`] = [String(ref.name)];
        extra[`authentication.kubernetes.io/${kind}-uid`] = [String(ref.uid)];
      }
    }
    const aud = Array.isArray(payload.aud) ? payload.aud : typeof payload.aud === 'string' ? [payload.aud] : [];
    return { user: accountUser(account, extra), audiences: audiences.filter((a) => aud.includes(a)) };
  }

  /** A legacy Secret-held token: valid while the Secret of its claims holds exactly it. */
  private async legacy(token: string, get: ObjectGetter, audiences: string[]): Promise<TokenVerdict> {
    const payload = await this.verified(token, { issuer: LEGACY_ISSUER });
    if (!payload) return 'invalid';
    const claim = (key: string) => (typeof payload[`kubernetes.io/serviceaccount/${key}`] === 'string' ? (payload[`kubernetes.io/serviceaccount/${key}`] as string) : '');
    const ns = claim('namespace');
    const secret = await get('secrets', ns, claim('secret.name'));
    const data = isRecord(secret?.data) ? secret.data : {};
    if (!secret || typeof data.token !== 'string' || Buffer.from(data.token, 'base64').toString('utf8') !== token) return 'invalid';
    const account = await get('serviceaccounts', ns, claim('service-account.name'));
    if (!alive(account, claim('service-account.uid'))) return 'invalid';
    // A legacy token names no audience: it is good for the API server's own only.
    const good = audiences.filter((a) => this.apiAudiences.includes(a));
    if (good.length === 0) return 'invalid';
    return { user: accountUser(account, {}), audiences: good };
  }

  private async verified(token: string, checks: { issuer: string | string[]; audience?: string[] }): Promise<Record<string, unknown> | undefined> {
    for (const { key, alg } of this.verifyKeys) {
      try {
        return (await jwtVerify(token, key, { ...checks, algorithms: [alg] })).payload as Record<string, unknown>;
      } catch {
        // The next key may have signed it.
      }
    }
    return undefined;
  }
}

/**
 * Whether an object a token names is still there for it: present, the same uid, and not deleted more than
 * a minute ago (upstream's invalidIfDeletedBefore: a pod's token works through its graceful termination).
 */
function alive(obj: KObject | undefined, uid: unknown): obj is KObject {
  if (!obj || obj.metadata.uid !== uid) return false;
  const deleted = obj.metadata.deletionTimestamp;
  return !deleted || Date.parse(String(deleted)) > Date.now() - 60_000;
}

function accountUser(account: KObject, extra: Record<string, string[]>): UserInfo {
  const ns = account.metadata.namespace!;
  return {
    name: `${SA_PREFIX}${ns}:${account.metadata.name}`,
    uid: String(account.metadata.uid ?? ''),
    groups: ['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated'],
    ...(Object.keys(extra).length > 0 ? { extra } : {}),
  };
}
