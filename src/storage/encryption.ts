/**
 * Encryption at rest, as kube-apiserver's --encryption-provider-config: an `apiserver.config.k8s.io/v1`
 * EncryptionConfiguration names, for resources (`secrets`, `deployments.apps`, `*.apps`, `*.*`), the
 * providers in order. The first provider encrypts what is written; every provider can read (a key
 * rotation adds the new key first and keeps the old one until everything is rewritten). Providers:
 * `aescbc` and `aesgcm` (named keys of 16, 24 or 32 bytes, base64), `secretbox` (XSalsa20-Poly1305 with
 * 32-byte keys, by tweetnacl) and `identity` (plain). A stored
 * value is `k8s:enc:<provider>:v1:<key name>:` and the base64 of the IV (nonce) and ciphertext, so a copy
 * of the store does not reveal what it holds. The wrapper sits under the stores: they see plain values.
 */
import { createCipheriv, createDecipheriv, randomBytes, type CipherGCMTypes } from 'node:crypto';
import nacl from 'tweetnacl';
import { parseDocument } from 'yaml';
import type { DeleteResult, KeyValue, RangeOptions, RangeResult, Storage, WatchHandle, WatchListener } from './types.js';

interface Key {
  name: string;
  secret: Buffer;
}

type Provider = { kind: 'identity' } | { kind: 'aescbc' | 'aesgcm' | 'secretbox'; keys: Key[] };

interface Rule {
  /** `/registry/<resource>/` or `/registry/<group>/<resource>/` prefixes, or a matcher for wildcards. */
  matches(key: string): boolean;
  providers: Provider[];
}

const PREFIX = 'k8s:enc:';
const UNDOTTED_GROUPS = new Set(['apps', 'batch', 'policy', 'autoscaling', 'extensions']);

function fail(source: string, message: string): never {
  throw new Error(`error while parsing encryption provider configuration file ${JSON.stringify(source)}: ${message}`);
}

/** `secrets` → /registry/secrets/; `deployments.apps` → /registry/apps/deployments/; `*.apps`; `*.*`. */
function matcherFor(resource: string, source: string): (key: string) => boolean {
  if (resource === '*.*') return () => true;
  const dot = resource.indexOf('.');
  const name = dot < 0 ? resource : resource.slice(0, dot);
  const group = dot < 0 ? '' : resource.slice(dot + 1);
  if (!name || (name !== '*' && !/^[a-z0-9-]+$/.test(name))) fail(source, `resources: invalid resource ${JSON.stringify(resource)}`);
  if (name === '*') {
    // The core group's keys are /registry/<resource>/...; groups without a dot in their name look alike.
    if (group === '') return (key) => /^\/registry\/[^/.]+\//.test(key) && !UNDOTTED_GROUPS.has(key.split('/')[2]);
    return (key) => key.startsWith(`/registry/${group}/`);
  }
  const prefix = group ? `/registry/${group}/${name}/` : `/registry/${name}/`;
  return (key) => key.startsWith(prefix);
}

function parseKeys(value: unknown, path: string, source: string, lengths: number[]): Key[] {
  const keys = (value as { keys?: unknown })?.keys;
  if (!Array.isArray(keys) || keys.length === 0) fail(source, `${path}.keys: Required value: keys list must not be empty`);
  return keys.map((k, i) => {
    const name = (k as { name?: unknown })?.name;
    const secret = (k as { secret?: unknown })?.secret;
    if (typeof name !== 'string' || name === '' || name.includes(':')) fail(source, `${path}.keys[${i}].name: Invalid value: a key name is required and may not contain ':'`);
    if (typeof secret !== 'string') fail(source, `${path}.keys[${i}].secret: Required value`);
    const bytes = Buffer.from(secret, 'base64');
    if (!lengths.includes(bytes.length) || bytes.toString('base64') !== secret.replace(/\s/g, '')) {
      fail(source, `${path}.keys[${i}].secret: Invalid value: "REDACTED": secret is not of the expected length, got ${bytes.length}, expected one of [${lengths.join(' ')}]`);
    }
    return { name, secret: bytes };
  });
}

/** Parses an EncryptionConfiguration (YAML or JSON); errors name the file and the field. */
export function parseEncryptionConfig(text: string, source: string): Rule[] {
  let doc: unknown;
  try {
    doc = parseDocument(text).toJS({ maxAliasCount: 100 });
  } catch (err) {
    fail(source, (err as Error).message);
  }
  const d = (doc ?? {}) as { apiVersion?: unknown; kind?: unknown; resources?: unknown };
  if (d.kind !== 'EncryptionConfiguration' || (d.apiVersion !== 'apiserver.config.k8s.io/v1' && d.apiVersion !== 'apiserver.config.k8s.io/v1beta1')) {
    fail(source, `no kind "${String(d.kind ?? '')}" is registered for version "${String(d.apiVersion ?? '')}"`);
  }
  if (!Array.isArray(d.resources) || d.resources.length === 0) fail(source, 'resources: Required value: resources list must not be empty');
  return d.resources.map((r, i) => {
    const entry = (r ?? {}) as { resources?: unknown; providers?: unknown };
    if (!Array.isArray(entry.resources) || entry.resources.length === 0) fail(source, `resources[${i}].resources: Required value`);
    if (!Array.isArray(entry.providers) || entry.providers.length === 0) fail(source, `resources[${i}].providers: Required value`);
    const matchers = entry.resources.map((res) => matcherFor(String(res), source));
    const providers = entry.providers.map((p, j): Provider => {
      const path = `resources[${i}].providers[${j}]`;
      const kinds = Object.keys((p ?? {}) as object);
      if (kinds.length !== 1) fail(source, `${path}: Invalid value: exactly one provider must be specified in each providers entry`);
      const kind = kinds[0];
      if (kind === 'identity') return { kind };
      if (kind === 'aescbc' || kind === 'aesgcm') return { kind, keys: parseKeys((p as Record<string, unknown>)[kind], `${path}.${kind}`, source, [16, 24, 32]) };
      if (kind === 'secretbox') return { kind, keys: parseKeys((p as Record<string, unknown>)[kind], `${path}.${kind}`, source, [32]) };
      return fail(source, `${path}: Unsupported value: ${JSON.stringify(kind)}: kapi supports aescbc, aesgcm, secretbox and identity`);
    });
    return { matches: (key: string) => matchers.some((m) => m(key)), providers };
  });
}

function encrypt(provider: Provider, key: string, value: string): string {
  if (provider.kind === 'identity') return value;
  const k = provider.keys[0];
  const plain = Buffer.from(value, 'utf8');
  let data: Buffer;
  if (provider.kind === 'secretbox') {
    // XSalsa20-Poly1305 (NaCl's secretbox), as upstream: a random 24-byte nonce, then the sealed box.
    const nonce = randomBytes(24);
    data = Buffer.concat([nonce, nacl.secretbox(plain, nonce, k.secret)]);
  } else if (provider.kind === 'aescbc') {
    const iv = randomBytes(16);
    const cipher = createCipheriv(`aes-${k.secret.length * 8}-cbc`, k.secret, iv);
    data = Buffer.concat([iv, cipher.update(plain), cipher.final()]);
  } else {
    const nonce = randomBytes(12);
    const cipher = createCipheriv(`aes-${k.secret.length * 8}-gcm` as CipherGCMTypes, k.secret, nonce);
    // The storage key is authenticated with the value: a value moved to another key does not decrypt.
    cipher.setAAD(Buffer.from(key, 'utf8'));
    data = Buffer.concat([nonce, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
  }
  return `${PREFIX}${provider.kind}:v1:${k.name}:${data.toString('base64')}`;
}

function decrypt(providers: Provider[], key: string, value: string): string {
  if (!value.startsWith(PREFIX)) return value; // written before encryption (identity)
  const [kind, version, name] = value.slice(PREFIX.length).split(':', 3);
  const data = Buffer.from(value.slice(PREFIX.length + kind.length + version.length + name.length + 3), 'base64');
  for (const p of providers) {
    if (p.kind === 'identity' || p.kind !== kind) continue;
    const k = p.keys.find((c) => c.name === name);
    if (!k) continue;
    if (p.kind === 'secretbox') {
      const opened = nacl.secretbox.open(data.subarray(24), data.subarray(0, 24), k.secret);
      if (!opened) throw new Error(`the secretbox value of ${key} does not open with key ${JSON.stringify(name)}`);
      return Buffer.from(opened).toString('utf8');
    }
    if (p.kind === 'aescbc') {
      const decipher = createDecipheriv(`aes-${k.secret.length * 8}-cbc`, k.secret, data.subarray(0, 16));
      return Buffer.concat([decipher.update(data.subarray(16)), decipher.final()]).toString('utf8');
    }
    const decipher = createDecipheriv(`aes-${k.secret.length * 8}-gcm` as CipherGCMTypes, k.secret, data.subarray(0, 12));
    decipher.setAAD(Buffer.from(key, 'utf8'));
    decipher.setAuthTag(data.subarray(data.length - 16));
    return Buffer.concat([decipher.update(data.subarray(12, data.length - 16)), decipher.final()]).toString('utf8');
  }
  throw new Error(`no matching key was found for the provided ${kind} transformer (key ${JSON.stringify(name)}) for ${key}`);
}

/** A Storage whose values, for the configured resources, are encrypted as they are written and decrypted as they are read. */
export class EncryptingStorage implements Storage {
  constructor(
    private readonly inner: Storage,
    private readonly rules: Rule[],
  ) {}

  private providersFor(key: string): Provider[] | undefined {
    return this.rules.find((r) => r.matches(key))?.providers;
  }

  /** Keys whose value at a revision was read in an old form (see isStale); a write or delete of the key ends it. */
  private readonly stale = new Map<string, number>();

  private open(kv: KeyValue): KeyValue;
  private open(kv: KeyValue | undefined): KeyValue | undefined;
  private open(kv: KeyValue | undefined): KeyValue | undefined {
    if (!kv) return kv;
    const providers = this.providersFor(kv.key);
    const first = providers?.[0];
    const current = first === undefined || first.kind === 'identity' ? !kv.value.startsWith(PREFIX) : kv.value.startsWith(`${PREFIX}${first.kind}:v1:${first.keys[0].name}:`);
    // At most one entry per stored object of the resources configured (which the caches hold anyway).
    if (!current) this.stale.set(kv.key, kv.modRevision);
    if (!kv.value.startsWith(PREFIX)) return kv;
    return { ...kv, value: decrypt(providers ?? this.rules.flatMap((r) => r.providers), kv.key, kv.value) };
  }

  isStale(key: string, modRevision: number): boolean {
    return this.stale.get(key) === modRevision;
  }

  private seal(key: string, value: string): string {
    const providers = this.providersFor(key);
    return providers ? encrypt(providers[0], key, value) : value;
  }

  async get(key: string): Promise<KeyValue | undefined> {
    return this.open(await this.inner.get(key));
  }

  get modRevisionOf(): Storage['modRevisionOf'] {
    return this.inner.modRevisionOf?.bind(this.inner);
  }

  async range(prefix: string, options?: RangeOptions): Promise<RangeResult> {
    const result = await this.inner.range(prefix, options);
    return { ...result, kvs: result.kvs.map((kv) => this.open(kv)) };
  }

  async create(key: string, value: string): Promise<KeyValue> {
    this.stale.delete(key);
    const kv = await this.inner.create(key, this.seal(key, value));
    return { ...kv, value };
  }

  async update(key: string, value: string, expectedModRevision: number): Promise<KeyValue> {
    const kv = await this.inner.update(key, this.seal(key, value), expectedModRevision);
    this.stale.delete(key);
    return { ...kv, value };
  }

  async delete(key: string, expectedModRevision?: number): Promise<DeleteResult> {
    const result = await this.inner.delete(key, expectedModRevision);
    const prevKv = this.open(result.prevKv);
    this.stale.delete(key);
    return { ...result, prevKv };
  }

  watch(prefix: string, afterRevision: number, listener: WatchListener): WatchHandle {
    // Events of the history may come while the inner watch is being made, before its handle is returned.
    const state: { failed: boolean; handle?: WatchHandle } = { failed: false };
    const inner = this.inner.watch(prefix, afterRevision, {
      onEvents: (events) => {
        if (state.failed) return;
        let opened;
        try {
          opened = events.map((e) => ({ ...e, kv: this.open(e.kv), prevKv: this.open(e.prevKv) }));
          for (const e of events) if (e.type === 'DELETE') this.stale.delete(e.kv.key);
        } catch (err) {
          // The watch ends here: the inner one is closed, so a listener that watches again hears each event once.
          state.failed = true;
          state.handle?.close();
          listener.onError(err as Error);
          return;
        }
        listener.onEvents(opened);
      },
      onProgress: listener.onProgress?.bind(listener),
      progressOnDemand: listener.progressOnDemand,
      onError: (err) => listener.onError(err),
    });
    state.handle = inner;
    if (state.failed) inner.close();
    return inner;
  }

  currentRevision(): Promise<number> {
    return this.inner.currentRevision();
  }

  compact(revision: number): Promise<void> {
    return this.inner.compact(revision);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
