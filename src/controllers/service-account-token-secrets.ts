/**
 * The tokens controller of kube-controller-manager: a Secret of type kubernetes.io/service-account-token
 * that a user creates for an account (annotation `kubernetes.io/service-account.name`) gets a legacy
 * token, the cluster's CA and the namespace in its data, and the account's uid in its annotations; one
 * whose account is gone (or was recreated) is deleted, as are an account's token Secrets when it goes.
 * kapi creates no such Secret on its own, as current upstream. It works as a client of the API with
 * kube-controller-manager's identity, reading through the manager's informers.
 */
import type { ServiceAccountTokens } from '../apis/authentication/service-account-tokens.js';
import type { KObject } from '../api/object.js';
import type { Client, ResourceClient } from '../sdk/client.js';
import type { Manager } from '../sdk/controller.js';
import type { Informer } from '../sdk/informer.js';
import { isRecord } from '../util/json-object.js';

const TOKEN_TYPE = 'kubernetes.io/service-account-token';
const NAME = 'kubernetes.io/service-account.name';
const UID = 'kubernetes.io/service-account.uid';

const SECRETS = { group: '', version: 'v1', resource: 'secrets' };
const ACCOUNTS = { group: '', version: 'v1', resource: 'serviceaccounts' };

export class ServiceAccountTokenSecrets {
  private readonly secretsInformer: Informer;
  private readonly accountsInformer: Informer;
  private readonly secrets: ResourceClient;
  private readonly accounts: ResourceClient;

  /** Added to `manager` (whose Secret and ServiceAccount informers it reads); `client` writes. */
  constructor(
    manager: Manager,
    client: Client,
    private readonly tokens: ServiceAccountTokens,
    private readonly caCertPem: string,
  ) {
    this.secrets = client.resource(SECRETS);
    this.accounts = client.resource(ACCOUNTS);
    this.secretsInformer = manager.informer(SECRETS);
    this.accountsInformer = manager.informer(ACCOUNTS);
    const tokenSecret = (s: KObject) => s.type === TOKEN_TYPE;
    // An account that goes, or comes back, decides its Secrets' fate.
    const secretsOf = (a: KObject) =>
      this.secretsInformer
        .list()
        .filter((s) => s.type === TOKEN_TYPE && s.metadata.namespace === a.metadata.namespace && s.metadata.annotations?.[NAME] === a.metadata.name)
        .map((s) => ({ namespace: s.metadata.namespace, name: s.metadata.name }));
    manager.add({
      name: 'serviceaccount-token-controller',
      for: SECRETS,
      predicates: [{ create: tokenSecret, update: tokenSecret, delete: () => false }],
      watches: [{ resource: ACCOUNTS, map: secretsOf, predicates: [{ update: () => false }] }],
      reconcile: (request) => this.reconcile(request.namespace ? `${request.namespace}/${request.name}` : request.name),
    });
  }

  private async reconcile(key: string): Promise<void> {
    const secret = this.secretsInformer.get(key);
    if (!secret || secret.type !== TOKEN_TYPE || secret.metadata.deletionTimestamp) return;
    const ns = secret.metadata.namespace!;
    const annotations = secret.metadata.annotations ?? {};
    // A miss in the cache is checked on the server: the account may be newer than the informer's copy.
    const account = this.accountsInformer.get(`${ns}/${annotations[NAME]}`) ?? (await this.accounts.get(ns, String(annotations[NAME] ?? '')).catch((err: { code?: number }) => {
      if (err.code === 404) return undefined;
      throw err;
    }));
    const uid = annotations[UID];
    if (!account || (uid && uid !== account.metadata.uid)) {
      await this.secrets.delete(ns, secret.metadata.name, { preconditions: { uid: secret.metadata.uid } }).catch((err: { code?: number }) => {
        if (err.code !== 404 && err.code !== 409) throw err;
      });
      return;
    }
    const data = isRecord(secret.data) ? (secret.data as Record<string, string>) : {};
    if (data.token && data['ca.crt'] && data.namespace && uid) return;
    const b64 = (t: string) => Buffer.from(t, 'utf8').toString('base64');
    const filled: KObject = {
      ...secret,
      metadata: { ...secret.metadata, annotations: { ...annotations, [UID]: String(account.metadata.uid) } },
      data: { ...data, token: data.token || b64(await this.tokens.issueLegacy(account, secret.metadata.name)), 'ca.crt': data['ca.crt'] || b64(this.caCertPem), namespace: data.namespace || b64(ns) },
    };
    await this.secrets.update(ns, secret.metadata.name, filled);
  }
}
