/**
 * Assembles a kapi server: storage, the registry of built-in resources and
 * CustomResourceDefinitions, the CRD runtime, TLS, authentication and the HTTP
 * front. `startKapi` is what `kapi serve` runs, and what tests and embedders use.
 */
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { readFile } from 'node:fs/promises';
import { BUILTIN_RESOURCES, typedConversion, withTypedDecoding, type BuiltinResource } from './apis/builtin.js';
import { structOfKind } from './api/go-type-expr.js';
import { authenticationReviews, type TokenLookup } from './apis/authentication/reviews.js';
import { authorizationReviews } from './apis/authorization/reviews.js';
import { INITIAL_NAMESPACES, NAMESPACES, namespaceLifecycle } from './apis/core/namespaces.js';
import { v1ToV1beta1, v1beta1ToV1 } from './apis/apiextensions/conversion.js';
import { GarbageCollector } from './controllers/garbage-collector.js';
import { NamespaceController } from './controllers/namespace-controller.js';
import { NamespaceDefaults } from './controllers/namespace-defaults.js';
import { ClusterRoleAggregation } from './controllers/clusterrole-aggregation.js';
import { AdmissionPolicyStatus } from './controllers/admission-policy-status.js';
import { APIServiceRegistration } from './controllers/apiservice-registration.js';
import { APIServiceAvailability } from './controllers/apiservice-availability.js';
import { ServiceAccountTokenSecrets } from './controllers/service-account-token-secrets.js';
import { RBAC_GROUP, RbacResolver, rbacAuthorizer, type RbacStores } from './apis/rbac/authorizer.js';
import { reconcileBootstrapPolicy } from './apis/rbac/bootstrap.js';
import { rbacEscalationCheck } from './apis/rbac/escalation.js';
import { checkAdmissionHooks, webhookAdmission, type AdmissionHook } from './apis/admissionregistration/webhook-admission.js';
import { validatingPolicyAdmission } from './apis/admissionregistration/policy-admission.js';
import { builtinStructural } from './openapi/inline.js';
import { definedConverter, definedStrategy, type ResourceDefinition } from './sdk/resource.js';
import { mutatingPolicyAdmission } from './apis/admissionregistration/mutating-policy-admission.js';
import { DEFAULT_SERVICE_RANGES, parseServiceRanges, serviceStrategy, type ServiceRanges } from './apis/core/services.js';
import { podStrategy, SYSTEM_PRIORITY_CLASSES } from './apis/core/pods.js';
import { builtinDefaulter } from './apis/builtin-defaults.js';
import { MANDATORY_FLOW_SCHEMAS, MANDATORY_PRIORITY_LEVELS } from './apis/flowcontrol/bootstrap.js';
import { LeaderElector } from './sdk/leader-election.js';
import { ObjectEventHub } from './controllers/object-events.js';
import { controllerIdentities, type ControllerIdentity } from './controllers/identities.js';
import { Client } from './sdk/client.js';
import { errors, StatusError } from './machinery/status.js';
import { IssuerCheck, REQUEST_HEADER_DEFAULTS, RequestHeaderAuthenticator } from './server/request-header.js';
import { DelegatedAuthenticator, delegatedAuthorizer } from './server/delegated.js';
import { connect } from './sdk/kubeconfig.js';
import { Informer } from './sdk/informer.js';
import { deepEqual } from './util/deep-equal.js';
import { converterFactory, type ConvertFunction } from './crd/conversion/index.js';
import { serviceResolver } from './crd/conversion/service-resolver.js';
import { CrdController } from './crd/controller.js';
import { CrdFinalizer } from './crd/finalizer.js';
import { CrdRestStore } from './crd/crd-store.js';
import { crdStrategy } from './crd/crd-strategy.js';
import { OpenApiPublisher } from './openapi/index.js';
import { builtinTableConvertor } from './printing/index.js';
import { ApiRegistry, type Endpoint } from './registry/registry.js';
import { RestStore } from './registry/store.js';
import { AdmissionChain, type AdmissionPlugin } from './registry/admission.js';
import type { KObject } from './api/object.js';
import { ensureAdminToken, adminUserInfo, parseTokenFile, TokenAuthenticator } from './server/authn.js';
import { ensureServingCertificates, parseCertificateBundle } from './server/certs.js';
import { certificatePairStamp, readCertificatePair, watchCertificatePair } from './server/serving-files.js';
import { hostname, networkInterfaces } from 'node:os';
import { ServiceAccountTokens, type ObjectGetter } from './apis/authentication/service-account-tokens.js';
import { ensurePrivateDir } from './util/private-files.js';
import { writeAdminKubeconfig } from './server/kubeconfig.js';
import { ApiMetrics } from './server/metrics.js';
import { builtinApplyType } from './server/handlers/field-manager.js';
import { isRecord } from './util/json-object.js';
import { HttpServer, type HttpServerOptions, type ServerLimits } from './server/server.js';
import type { LoopbackRequest, LoopbackSink } from './api/serving.js';
import { auditLogBackend, parseAuditPolicy, type AuditBackend, type AuditPolicy } from './server/audit.js';
import { alwaysAllow } from './server/authz.js';
import type { Authorizer } from './api/authorization.js';

export type AuthorizationMode = 'RBAC' | 'AlwaysAllow';
import { openStorageAsync, type Storage, type StorageConfig } from './storage/index.js';
import { EncryptingStorage, parseEncryptionConfig } from './storage/encryption.js';

export interface KapiOptions {
  /** Where the store, certificates, admin token and kubeconfig live (default ./.kapi). */
  dataDir?: string;
  /** The store (default: sqlite in the data dir). */
  storage?: StorageConfig;
  bindAddress?: string;
  /** 0 picks a free port. */
  port?: number;
  /** kube-apiserver's static token CSV. */
  tokenAuthFile?: string;
  /** --client-ca-file: CA certificates (PEM) whose client certificates authenticate (CN the user, O the groups), besides kapi's own CA. */
  clientCAFile?: string;
  /**
   * Request-header authentication (--requestheader-*), for kapi behind an aggregator: the front proxy's CA file,
   * the names its certificate may have (empty: any), and the headers naming the user (defaults: X-Remote-User,
   * X-Remote-Group, X-Remote-Extra-; no uid header).
   */
  /**
   * --proxy-client-cert-file and --proxy-client-key-file: the client certificate kapi presents to aggregated API
   * servers (their --requestheader-client-ca-file trusts its CA).
   */
  proxyClientCertFile?: string;
  proxyClientKeyFile?: string;
  /**
   * --authentication-kubeconfig: the core cluster that reviews bearer tokens kapi does not know (TokenReview), and
   * whose kube-system/extension-apiserver-authentication ConfigMap gives the request-header settings when
   * `requestHeader` is not set.
   */
  authenticationKubeconfig?: string;
  /**
   * --kubeconfig: the core cluster whose namespaces count (an aggregated server): objects go only into namespaces
   * it has and is not terminating, as its NamespaceLifecycle admission decides.
   */
  coreKubeconfig?: string;
  /** --authorization-kubeconfig: the core cluster asked (SubjectAccessReview) about what kapi's own authorizer does not allow. */
  authorizationKubeconfig?: string;
  /** How often an aggregated APIService's backend is checked (ms; default 30 s, as upstream). */
  apiServiceCheckIntervalMs?: number;
  requestHeader?: { clientCAFile: string; allowedNames?: string[]; usernameHeaders?: string[]; uidHeaders?: string[]; groupHeaders?: string[]; extraHeaderPrefixes?: string[] };
  /** --encryption-provider-config: an EncryptionConfiguration; the resources it names are encrypted in the store. */
  encryptionProviderConfig?: string;
  /** --tls-cert-file and --tls-private-key-file: serve this certificate (reloaded when the files change) instead of one kapi makes. */
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
  /** --tls-san: more names and addresses for the certificate kapi makes (besides the bind address, the host name and the kubernetes Service's). */
  tlsSans?: string[];
  /** --anonymous-auth: a request without credentials is system:anonymous (default true, as upstream); false: 401. */
  anonymousAuth?: boolean;
  /** --service-account-issuer: the first names the tokens kapi issues; all are accepted (default https://kubernetes.default.svc.cluster.local). */
  serviceAccountIssuers?: string[];
  /** --service-account-signing-key-file: the PEM private key tokens are signed with (default: <data-dir>/pki/sa.key, made on first start). */
  serviceAccountSigningKeyFile?: string;
  /** --service-account-key-file: PEM files of more keys whose tokens are accepted. */
  serviceAccountKeyFiles?: string[];
  /** --api-audiences: what a token must be meant for (default: the issuers). */
  apiAudiences?: string[];
  /** --service-account-max-token-expiration, in seconds. */
  serviceAccountMaxTokenExpirationSeconds?: number;
  /** Where Services' cluster IPs come from (IPv4 CIDR; default 10.0.0.0/24, as kube-apiserver's). */
  serviceClusterIPRange?: string;
  /** Where NodePort Services' ports come from (default 30000-32767). */
  serviceNodePortRange?: string;
  /** In-process converters for multi-version CRDs, by CRD name; they take precedence over spec.conversion. */
  converters?: Record<string, ConvertFunction>;
  /**
   * Resources defined in TypeScript (`defineResource` of kapi/sdk): served as CRDs (their definitions written
   * at start), with their strategy hooks and their conversions through the internal form.
   */
  resources?: ResourceDefinition<any>[];
  /** How long a conversion webhook may take (default 30 s, as upstream). */
  webhookTimeoutMs?: number;
  /** Admission plugins run after NamespaceLifecycle on every write through the API, at upstream's points. */
  admission?: AdmissionPlugin[];
  /**
   * --admission-hooks: admission in the process with webhook semantics: each hook is matched as a webhook
   * (`rules`, selectors), gets the AdmissionReview's request and answers as a webhook's response does.
   */
  admissionHooks?: AdmissionHook[];
  /**
   * --authorization-mode: 'RBAC' (the default: system:masters may do anything, everyone else what the
   * stored roles and bindings give) or 'AlwaysAllow' (every authenticated request is allowed).
   */
  authorizationMode?: AuthorizationMode;
  /** An authorizer of the embedder's, instead of the mode's. */
  authorizer?: Authorizer;
  /** Request limits and timeouts of the HTTP front (kube-apiserver's defaults where absent). */
  limits?: Partial<ServerLimits>;
  /** Where the request log goes (kube-apiserver's httplog; `kapi serve -v=2`); absent: none. */
  requestLog?: (line: string) => void;
  /** Warnings at start and unexpected errors while serving (default: stderr). */
  warn?: (message: string) => void;
  /** Controller leader election (replicas on etcd): lease duration and retry period. */
  leaderElection?: { leaseDurationSeconds?: number; retryPeriodMs?: number };
  /** --audit-policy-file: the audit policy (audit.k8s.io/v1 Policy); without it nothing is audited, as upstream. */
  auditPolicyFile?: string;
  /** --audit-log-path: where audit events go, one JSON event per line ('-': standard output). */
  auditLogPath?: string;
  /** An audit backend of the embedder's (instead of a log file); needs auditPolicyFile. */
  auditBackend?: AuditBackend;
}

export interface Kapi {
  url: string;
  port: number;
  kubeconfigPath: string;
  adminToken: string;
  caCertPem: string;
  registry: ApiRegistry;
  storage: Storage;
  /** Resolves when the garbage collector has no queued work (tests and benchmarks). */
  gcIdle(): Promise<void>;
  /** Whether this replica runs the controllers now. */
  isLeader(): boolean;
  /**
   * Serve a request made inside the process through the whole request path (the in-process clients' transport);
   * `internal: false` for an embedder's client, which waits for what its writes set off as a network client does.
   */
  loopback(request: LoopbackRequest, sink: LoopbackSink, internal?: boolean): () => void;
  stop(): Promise<void>;
}

const CRD_V1BETA1_WARNING =
  'apiextensions.k8s.io/v1beta1 CustomResourceDefinition is deprecated in v1.16+, unavailable in v1.22+; use apiextensions.k8s.io/v1 CustomResourceDefinition';

const identity = (apiVersion: string) => ({
  toVersion: (o: KObject) => o,
  toStorage: (o: KObject) => (o.apiVersion === apiVersion ? o : { ...o, apiVersion }),
});

/** What some built-in strategies read beyond their own objects. */
interface BuiltinContext {
  ranges: ServiceRanges;
  /** The stored PriorityClasses (the Pods' Priority admission). */
  priorityClasses: () => Iterable<KObject>;
  /** The endpoints registered so far (a resource stored as another's). */
  lookup?: (group: string, version: string, resource: string) => Endpoint | undefined;
}

/**
 * A resource served from another's store (events.k8s.io Events are core Events): its objects are
 * converted on the way in and out, printed as the stored kind, and selected by their fields in this version.
 */
function sharedEndpoint(r: BuiltinResource, storedAs: NonNullable<BuiltinResource['storedAs']>, stored: Endpoint | undefined): Endpoint {
  if (!stored) throw new Error(`${r.names.group}/${r.names.resource}: stored as ${storedAs.group}/${storedAs.resource}, which is not registered before it`);
  const table = builtinTableConvertor(r.names.group, r.names.resource);
  const structId = structOfKind(r.names.group, r.version, r.names.kind);
  return {
    group: r.names.group,
    version: r.version,
    names: r.names,
    store: stored.store,
    verbs: r.verbs,
    custom: false,
    subresources: { status: r.status, scale: r.scale, others: r.subresources },
    table: { ...table, row: (obj, now) => table.row(storedAs.toStorage(obj), now) },
    applyType: builtinApplyType(r.names.group, r.version, r.names.kind),
    celSchema: () => builtinStructural(r.names.group, r.version, r.names.kind),
    decodeObject: structId ? (obj) => builtinDefaulter.apply(structId, obj) : undefined,
    toVersion: storedAs.toVersion,
    toStorage: structId ? typedConversion(structId, r.names.kind, r.version, storedAs.toStorage) : storedAs.toStorage,
  };
}

function builtinEndpoint(storage: Storage, r: BuiltinResource, context: BuiltinContext = { ranges: DEFAULT_SERVICE_RANGES, priorityClasses: () => [] }): Endpoint {
  const apiVersion = r.names.group ? `${r.names.group}/${r.version}` : r.version;
  if (r.storedAs) return sharedEndpoint(r, r.storedAs, context.lookup?.(r.storedAs.group, r.storedAs.version ?? r.version, r.storedAs.resource));
  let strategy = r.strategy ?? { allowUnconditionalUpdate: true };
  const structId = structOfKind(r.names.group, r.version, r.names.kind);
  const store = new RestStore(storage, r.names, strategy);
  // Services allocate cluster IPs and node ports against the stored Services.
  if (r.names.group === '' && r.names.resource === 'services') strategy = serviceStrategy(strategy, context.ranges, () => store.cache.list().items.map((e) => e.object));
  if (r.names.group === '' && r.names.resource === 'pods') {
    strategy = podStrategy(context.priorityClasses, (namespace, name) => {
      const accounts = context.lookup?.('', 'v1', 'serviceaccounts')?.store;
      return accounts?.cache.get(accounts.key(namespace, name))?.object;
    });
  }
  store.strategy = structId ? withTypedDecoding(strategy, structId, r.names.kind) : strategy;
  return {
    group: r.names.group,
    version: r.version,
    names: r.names,
    store,
    verbs: r.verbs,
    custom: false,
    subresources: { status: r.status, scale: r.scale, others: r.subresources },
    table: builtinTableConvertor(r.names.group, r.names.resource),
    applyType: builtinApplyType(r.names.group, r.version, r.names.kind),
    celSchema: () => builtinStructural(r.names.group, r.version, r.names.kind),
    decodeObject: structId ? (obj) => builtinDefaulter.apply(structId, obj) : undefined,
    ...identity(apiVersion),
  };
}

export async function startKapi(options: KapiOptions = {}): Promise<Kapi> {
  const dataDir = options.dataDir ?? '.kapi';
  const warn = options.warn ?? ((m: string) => process.stderr.write(`${m}\n`));
  await ensurePrivateDir(dataDir, warn);
  const bindAddress = options.bindAddress ?? '127.0.0.1';
  const [tls, adminToken, extraTokens, clientCAs, frontProxyCAs, proxyClient, saTokens] = await Promise.all([
    ensureServingCertificates(dataDir, { hosts: servingHosts(bindAddress, options.tlsSans ?? [], parseServiceRanges(serviceRangesOf(options)).firstIP) }),
    ensureAdminToken(dataDir),
    options.tokenAuthFile ? readFile(options.tokenAuthFile, 'utf8').then((t) => parseTokenFile(t, { source: options.tokenAuthFile })) : undefined,
    options.clientCAFile ? readFile(options.clientCAFile, 'utf8').then((t) => parseCertificateBundle(t, options.clientCAFile!)) : ([] as string[]),
    options.requestHeader ? readFile(options.requestHeader.clientCAFile, 'utf8').then((t) => parseCertificateBundle(t, options.requestHeader!.clientCAFile)) : ([] as string[]),
    options.proxyClientCertFile || options.proxyClientKeyFile ? readProxyClient(options.proxyClientCertFile, options.proxyClientKeyFile) : undefined,
    ServiceAccountTokens.load({
      dataDir,
      issuers: options.serviceAccountIssuers,
      signingKeyFile: options.serviceAccountSigningKeyFile,
      keyFiles: options.serviceAccountKeyFiles,
      apiAudiences: options.apiAudiences,
      maxExpirationSeconds: options.serviceAccountMaxTokenExpirationSeconds,
    }),
  ]);
  // Configuration is checked before anything is opened: a bad file leaves nothing running.
  const auditPolicy =
    options.auditPolicyFile && (options.auditLogPath || options.auditBackend) ? parseAuditPolicy(await readFile(options.auditPolicyFile, 'utf8'), options.auditPolicyFile) : undefined;
  const serviceRanges = serviceRangesOf(options);
  checkAdmissionHooks(options.admissionHooks ?? []);
  if ((options.tlsCertFile === undefined) !== (options.tlsPrivateKeyFile === undefined)) throw new Error('--tls-cert-file and --tls-private-key-file go together');
  // The files' stamp is taken before they are read: a change in between is seen by the watcher.
  const servingFilesStamp = options.tlsCertFile ? certificatePairStamp(options.tlsCertFile, options.tlsPrivateKeyFile!) : '';
  const servingFiles = options.tlsCertFile ? readCertificatePair(options.tlsCertFile, options.tlsPrivateKeyFile!) : undefined;
  // What verifies the served certificate: kapi's CA, or the user's certificate file (with its chain).
  const servingCA = servingFiles ? servingFiles.certPem : tls.caCertPem;
  const encryption = options.encryptionProviderConfig ? parseEncryptionConfig(await readFile(options.encryptionProviderConfig, 'utf8'), options.encryptionProviderConfig) : undefined;
  // Behind an aggregator: the core cluster's reviews, and (without --requestheader-client-ca-file) its request-header settings.
  const authenticationCore = options.authenticationKubeconfig ? connect({ kubeconfig: options.authenticationKubeconfig, userAgent: 'kapi/delegated-authentication' }) : undefined;
  const authorizationCore = options.authorizationKubeconfig ? connect({ kubeconfig: options.authorizationKubeconfig, userAgent: 'kapi/delegated-authorization' }) : undefined;
  const coreClient = options.coreKubeconfig ? connect({ kubeconfig: options.coreKubeconfig, userAgent: 'kapi/core-namespaces' }) : undefined;
  let requestHeaderInformer: Informer | undefined;
  let coreNamespaceInformer: Informer | undefined;
  // A start that fails from here (the core cluster's settings, the store): its clients and watches are closed too.
  const closeCore = () => {
    for (const informer of [requestHeaderInformer, coreNamespaceInformer]) informer?.stop();
    for (const client of [authenticationCore, authorizationCore, coreClient]) client?.close();
  };
  // Without --requestheader-client-ca-file: the core cluster's settings (it must answer, as upstream: a missing
  // ConfigMap is no settings), then followed as its ConfigMap changes.
  let requestHeaderOptions = options.requestHeader;
  if (!requestHeaderOptions && authenticationCore) {
    const configmaps = authenticationCore.resource({ group: '', version: 'v1', resource: 'configmaps' });
    const initial = await configmaps.get('kube-system', EXTENSION_AUTHENTICATION).catch((err: unknown) => {
      if (err instanceof StatusError && err.code === 404) return undefined;
      closeCore();
      throw new Error(`reading kube-system/${EXTENSION_AUTHENTICATION} of the core cluster: ${(err as Error).message}`);
    });
    const fromCore = requestHeaderFromConfigMap(initial);
    const coreClientCAs = options.clientCAFile ? [] : clientCAsFromConfigMap(initial);
    if (fromCore === 'invalid' || coreClientCAs === 'invalid') {
      closeCore();
      throw new Error(`kube-system/${EXTENSION_AUTHENTICATION} of the core cluster holds settings that do not parse`);
    }
    if (fromCore) {
      requestHeaderOptions = fromCore.options;
      frontProxyCAs.push(...fromCore.cas);
    }
    // Without --client-ca-file, the CAs of the core cluster's users' certificates are its client-ca-file (as upstream).
    clientCAs.push(...coreClientCAs);
    requestHeaderInformer = new Informer(configmaps, {}, {
      namespace: 'kube-system',
      fieldSelector: `metadata.name=${EXTENSION_AUTHENTICATION}`,
      onError: (err) => warn(`kapi: ${EXTENSION_AUTHENTICATION}: ${(err as Error).message}`),
    });
    await requestHeaderInformer.start();
  }
  // The core cluster's namespaces (an aggregated server): a cache of them, read through when it has not seen one yet.
  let coreNamespaces: ((name: string) => Promise<KObject>) | undefined;
  if (coreClient) {
    const nsClient = coreClient.resource({ group: '', version: 'v1', resource: 'namespaces' });
    const informer = new Informer(nsClient, {}, { onError: (err) => warn(`kapi: core namespaces: ${(err as Error).message}`) });
    coreNamespaceInformer = informer;
    await informer.start();
    coreNamespaces = async (name) => {
      const cached = informer.get(name);
      if (cached) return cached;
      try {
        return await nsClient.get(undefined, name);
      } catch (err) {
        // Its 404 is the client's answer; anything else (no access, no answer) is this server's trouble, as upstream.
        if (err instanceof StatusError && err.code === 404) throw err;
        throw errors.internal(`looking up namespace ${JSON.stringify(name)} in the core cluster: ${(err as Error).message}`);
      }
    };
  }
  const opened = await openStorageAsync(options.storage ?? { kind: 'sqlite', path: join(dataDir, 'state.db'), compactIntervalMs: 60_000 }).catch((err: unknown) => {
    closeCore();
    throw err;
  });
  const storage: Storage = encryption ? new EncryptingStorage(opened, encryption) : opened;
  const registry = new ApiRegistry();

  const nsEndpoint = builtinEndpoint(storage, NAMESPACES);
  nsEndpoint.subresources.finalize = true;
  registry.add(nsEndpoint);
  const cachedObjects = (group: string, resource: string) => () => registry.lookup(group, 'v1', resource)?.store.cache.list().items.map((e) => e.object) ?? [];
  const context: BuiltinContext = {
    ranges: serviceRanges,
    priorityClasses: cachedObjects('scheduling.k8s.io', 'priorityclasses'),
    lookup: (group, version, resource) => registry.lookup(group, version, resource),
  };
  for (const r of BUILTIN_RESOURCES) registry.add(builtinEndpoint(storage, r, context));
  // The caches other strategies read (addresses taken, priority classes, accounts that opt out of token mounts): filled from the start, without holding it up.
  for (const [group, resource] of [['', 'services'], ['scheduling.k8s.io', 'priorityclasses'], ['', 'serviceaccounts']]) registry.lookup(group, 'v1', resource)!.store.start().catch(() => undefined);

  const crdNames = {
    group: 'apiextensions.k8s.io',
    resource: 'customresourcedefinitions',
    singular: 'customresourcedefinition',
    kind: 'CustomResourceDefinition',
    listKind: 'CustomResourceDefinitionList',
    namespaced: false,
    shortNames: ['crd', 'crds'],
    categories: ['api-extensions'],
  };
  const crdStore = new CrdRestStore(storage, crdNames, crdStrategy);
  const crdVerbs = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
  const crdEndpoint = {
    group: crdNames.group,
    names: crdNames,
    store: crdStore,
    verbs: crdVerbs,
    custom: false,
    subresources: { status: true },
    table: builtinTableConvertor(crdNames.group, crdNames.resource),
  };
  registry.add({ ...crdEndpoint, version: 'v1', applyType: builtinApplyType(crdNames.group, 'v1', crdNames.kind), ...identity('apiextensions.k8s.io/v1') });
  registry.add({
    ...crdEndpoint,
    version: 'v1beta1',
    toVersion: (o) => v1ToV1beta1(o as never) as KObject,
    toStorage: (o) => v1beta1ToV1(o as never) as KObject,
    warning: CRD_V1BETA1_WARNING,
  });

  const resolveService = serviceResolver(registry.lookup('', 'v1', 'services')!.store, registry.lookup('', 'v1', 'endpoints')!.store);
  const defined = new Map((options.resources ?? []).map((r) => [r.crd.metadata.name as string, r]));
  const definedConverters = Object.fromEntries([...defined].flatMap(([name, r]) => {
    const convert = definedConverter(r);
    return convert ? [[name, convert]] : [];
  }));
  const converters = converterFactory({
    converters: { ...definedConverters, ...options.converters },
    resolveService,
    webhookTimeoutMs: options.webhookTimeoutMs ?? 30_000,
  });
  // fieldValidation is declared, as kube-apiserver does: kubectl then validates on the server (Strict), not against the published schemas.
  const openapi = new OpenApiPublisher({ fieldValidation: true });
  openapi.setBuiltins(
    registry.all().map((ep) => ({
      group: ep.group,
      version: ep.version,
      kind: ep.names.kind,
      resource: ep.names.resource,
      namespaced: ep.names.namespaced,
      verbs: ep.verbs,
      subresources: ep.subresources.status ? ['status'] : [],
    })),
  );
  const crds = new CrdController(storage, registry, crdStore, {
    converterFor: converters,
    strategyFor: (crd, base) => {
      const r = defined.get(crd.metadata.name);
      return r ? definedStrategy(r, base) : base;
    },
    published: { setCrd: (crd) => openapi.setCrd(crd as never), removeCrd: (name) => openapi.removeCrd(name) } });
  crdStore.sync = (name) => crds.sync(name);
  await crds.start();
  await Promise.all([bootstrap(nsEndpoint.store, registry, parseServiceRanges(serviceRanges).firstIP), reconcileBootstrapPolicy(rbacStores(registry))]);

  const tokens = new Map(extraTokens ?? []);
  tokens.set(adminToken, adminUserInfo());
  // The in-process controllers are clients of the API, each with its own identity and a token for it.
  const identities = controllerIdentities();
  for (const id of Object.values(identities)) tokens.set(id.token, id.user);
  const authenticator = new TokenAuthenticator(tokens);
  // The reviews: resources with no store, answered by the authenticator and the authorizer.
  // ServiceAccount tokens name accounts (and what they are bound to), read as a GET reads them.
  const getObject: ObjectGetter = (resource, namespace, name) =>
    registry
      .lookup('', 'v1', resource)!
      .store.get(namespace, name)
      .catch((err: { code?: number }) => {
        if (err.code === 404) return undefined;
        throw err;
      });
  const lookupToken: TokenLookup = async (token, audiences) => {
    const user = authenticator.authenticateToken(token);
    // A static token is good for the API server's own audiences only (upstream's audience-agnostic wrapper).
    if (user) {
      const good = audiences.filter((a) => saTokens.apiAudiences.includes(a));
      return good.length > 0 ? { user, audiences: good } : undefined;
    }
    const verdict = await saTokens.authenticate(token, getObject, audiences);
    return verdict === undefined || verdict === 'invalid' ? undefined : verdict;
  };
  for (const ep of authenticationReviews(lookupToken, saTokens.apiAudiences)) registry.add(ep);
  const rbac = rbacStores(registry);
  // RBAC decides from the watch caches of its four kinds, as upstream's authorizer from its informers.
  await Promise.all(Object.values(rbac).map((store) => store.start()));
  const resolver = new RbacResolver(rbac);
  const mode = options.authorizationMode ?? 'RBAC';
  const localAuthorizer = options.authorizer ?? (mode === 'RBAC' ? rbacAuthorizer(resolver) : alwaysAllow);
  const authorizer = authorizationCore ? delegatedAuthorizer(localAuthorizer, authorizationCore) : localAuthorizer;
  for (const ep of authorizationReviews(authorizer)) registry.add(ep);
  const metrics = new ApiMetrics(registry);
  const admissionStore = (resource: string) => registry.lookup('admissionregistration.k8s.io', 'v1', resource)!.store as RestStore;
  const webhooks = webhookAdmission({
    validating: admissionStore('validatingwebhookconfigurations'),
    mutating: admissionStore('mutatingwebhookconfigurations'),
    namespaces: nsEndpoint.store,
    resolveService,
    registry,
    authorizer,
    hooks: options.admissionHooks,
    observe: (...args) => metrics.webhookCalled(...args),
  });
  // Webhooks are matched against the watch caches of their configurations (and the namespaces' labels).
  await Promise.all(
    [
      'validatingwebhookconfigurations',
      'mutatingwebhookconfigurations',
      'validatingadmissionpolicies',
      'validatingadmissionpolicybindings',
      'mutatingadmissionpolicies',
      'mutatingadmissionpolicybindings',
    ]
      .map((r) => admissionStore(r).start())
      .concat(nsEndpoint.store.start()),
  );
  let auditing: { policy: AuditPolicy; backend: AuditBackend } | undefined;
  if (auditPolicy) {
    auditing = { policy: auditPolicy, backend: options.auditBackend ?? auditLogBackend(options.auditLogPath!, warn) };
  } else if (options.auditLogPath) {
    warn('kapi: --audit-log-path has no effect without --audit-policy-file (as kube-apiserver: no policy, no audit)');
  }
  // Made once the server can be called (it is the server's client): the route to aggregated servers asks it.
  const aggregation: { availability?: APIServiceAvailability } = {};
  const http = new HttpServer({
    registry,
    // kapi's CA signs the admin's client certificate; --client-ca-file adds the CAs of other users.
    tls: { cert: servingFiles?.certPem ?? tls.certPem, key: servingFiles?.keyPem ?? tls.keyPem, clientCAs: [tls.caCertPem, ...clientCAs, ...frontProxyCAs] },
    proxyClient,
    aggregated: (group, version) => aggregation.availability?.backendOf(group, version),
    aggregatedGroupVersions: () => aggregation.availability?.groupVersions() ?? [],
    delegatedAuthenticator: authenticationCore ? new DelegatedAuthenticator(authenticationCore, options.apiAudiences ?? []) : undefined,
    requestHeader: requestHeaderOptions ? requestHeaderAuthentication(requestHeaderOptions, frontProxyCAs, [tls.caCertPem, ...clientCAs]) : undefined,
    anonymous: options.anonymousAuth ?? true,
    serviceAccountTokens: { tokens: saTokens, get: getObject },
    authenticator,
    admission: new AdmissionChain([
      namespaceLifecycle(coreNamespaces ?? nsEndpoint.store),
      // The policy-based RBAC storages' check, where an authorizer can say no.
      ...(authorizer === alwaysAllow ? [] : [rbacEscalationCheck(authorizer, resolver)]),
      ...(options.admission ?? []),
      // Dynamic admission last, as upstream's MutatingAdmissionPolicy, ValidatingAdmissionPolicy, MutatingAdmissionWebhook
      // and ValidatingAdmissionWebhook (mutating plugins all run before validating ones).
      mutatingPolicyAdmission({ policies: admissionStore('mutatingadmissionpolicies'), bindings: admissionStore('mutatingadmissionpolicybindings'), namespaces: nsEndpoint.store, registry, authorizer }),
      validatingPolicyAdmission({ policies: admissionStore('validatingadmissionpolicies'), bindings: admissionStore('validatingadmissionpolicybindings'), namespaces: nsEndpoint.store, registry, authorizer }),
      ...webhooks,
    ]),
    metrics,
    openapi,
    authorizer,
    limits: options.limits,
    requestLog: options.requestLog,
    logError: warn,
    audit: auditing,
  });
  if (requestHeaderInformer) {
    // The core cluster's request-header settings changed: the server authenticates (and asks for certificates) by
    // the new ones. Settings that do not parse, or a ConfigMap deleted, leave the last good ones in force.
    const informer = requestHeaderInformer;
    const ownCAs = [tls.caCertPem, ...(options.clientCAFile ? clientCAs : [])];
    let applied = JSON.stringify([requestHeaderOptions ? [requestHeaderOptions, frontProxyCAs] : null, options.clientCAFile ? [] : clientCAs]);
    let trusted = requestHeaderOptions !== undefined;
    const follow = () => {
      const cm = informer.get(`kube-system/${EXTENSION_AUTHENTICATION}`);
      if (!cm) return;
      const fromCore = requestHeaderFromConfigMap(cm);
      const coreCAs = options.clientCAFile ? [] : clientCAsFromConfigMap(cm);
      // A front proxy's CA that goes missing is an error (as upstream's CA controller has it), not a door opened.
      const lost = fromCore === undefined && trusted;
      if (fromCore === 'invalid' || coreCAs === 'invalid' || lost) {
        const what = lost ? 'no longer names the front proxy\'s CA' : 'holds settings that do not parse';
        return warn(`kapi: kube-system/${EXTENSION_AUTHENTICATION} ${what}: the last good ones stay`);
      }
      const next = JSON.stringify([fromCore ? [fromCore.options, fromCore.cas] : null, coreCAs]);
      if (next === applied) return;
      applied = next;
      trusted = fromCore !== undefined;
      const userCAs = [...ownCAs, ...coreCAs];
      http.setClientAuthentication(fromCore ? requestHeaderAuthentication(fromCore.options, fromCore.cas, userCAs) : undefined, [...userCAs, ...(fromCore?.cas ?? [])], userCAs);
    };
    informer.addHandlers({ added: follow, updated: follow, deleted: follow });
  }
  const clientFor = (id: ControllerIdentity) => new Client((req, sink) => http.loopback(req, sink), id.token, id.userAgent);
  crds.finalizer = new CrdFinalizer(clientFor(identities.apiserver), (name) => crds.storeOf(name), warn);
  // Aggregated APIServices: checked (and their resources routed) on every replica.
  // Endpoints are read from their watch cache (on every replica, not only the leader's controllers).
  await registry.lookup('', 'v1', 'endpoints')!.store.start();
  const availability = (aggregation.availability = new APIServiceAvailability(clientFor(identities.apiserver), registry, {
    services: registry.lookup('', 'v1', 'services')!.store,
    endpoints: registry.lookup('', 'v1', 'endpoints')!.store,
    proxyClient,
    openapi,
    intervalMs: options.apiServiceCheckIntervalMs,
    log: warn,
  }));
  await availability.start();
  // Resources defined in TypeScript: their CRDs written (or brought up to date) before the first request.
  if (defined.size > 0) await writeDefinedCrds(clientFor(identities.apiserver), [...defined.values()]);

  // Garbage collection, namespace deletion, CRD instance cleanup and the other controllers run on one replica at a time.
  let controllers: Array<{ stop(): void }> = [];
  let gc: GarbageCollector | undefined;
  const leases = clientFor(identities.controllerManager).resource({ group: 'coordination.k8s.io', version: 'v1', resource: 'leases' });
  const elector = new LeaderElector(leases, {
    async onStartedLeading() {
      const hub = new ObjectEventHub(registry);
      const started = [
        hub,
        new NamespaceController(clientFor(identities.namespaces), hub, warn),
        new NamespaceDefaults(clientFor(identities.controllerManager), clientFor(identities.serviceAccounts), clientFor(identities.rootCaPublisher), servingCA, warn),
        new ClusterRoleAggregation(clientFor(identities.clusterRoleAggregation), warn),
        new ServiceAccountTokenSecrets(clientFor(identities.controllerManager), saTokens, servingCA, warn),
        new AdmissionPolicyStatus(clientFor(identities.admissionPolicyStatus), registry, warn),
        new APIServiceRegistration(clientFor(identities.apiserver), registry, warn),
      ];
      gc = new GarbageCollector(hub, registry, clientFor(identities.garbageCollector), warn);
      controllers = [...started, gc];
      for (const c of started) await c.start();
      crds.setLeader(true);
    },
    onStoppedLeading() {
      for (const c of controllers) c.stop();
      controllers = [];
      gc = undefined;
      crds.setLeader(false);
    },
  }, { exclusive: (options.storage?.kind ?? 'sqlite') !== 'etcd', ...options.leaderElection });
  await elector.start();

  let unwatch = () => {};
  const stopAll = async () => {
    unwatch();
    aggregation.availability?.stop();
    closeCore();
    await http.close();
    await elector.stop();
    crds.stop();
    for (const ep of registry.all()) ep.store.stop();
    await storage.close();
    auditing?.backend.close?.();
  };
  let address: AddressInfo;
  try {
    address = await http.listen(options.port ?? 6443, bindAddress);
  } catch (err) {
    // The port is taken (or the address wrong): nothing may stay open behind the error.
    await stopAll().catch(() => {});
    throw err;
  }
  const host = bindAddress === '0.0.0.0' || bindAddress === '::' ? '127.0.0.1' : bindAddress;
  const url = `https://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
  const writeKubeconfig = (caCertPem: string) =>
    writeAdminKubeconfig(dataDir, { server: url, caCertPem, token: adminToken, clientCert: { certPem: tls.adminCertPem, keyPem: tls.adminKeyPem } });
  const kubeconfigPath = await writeKubeconfig(servingCA);
  if (options.tlsCertFile) {
    // A renewal is served to new connections, and admin.kubeconfig trusts it from then on.
    const renewed = (pair: { certPem: string; keyPem: string }) => {
      http.setServingCertificate(pair.certPem, pair.keyPem);
      writeKubeconfig(pair.certPem).catch((err: Error) => warn(`kapi: writing admin.kubeconfig: ${err.message}`));
    };
    unwatch = watchCertificatePair(options.tlsCertFile, options.tlsPrivateKeyFile!, renewed, warn, 1000, servingFilesStamp);
  }
  await publishMasterEndpoints(registry, bindAddress, address.port).catch((err: Error) => warn(`kapi: publishing the kubernetes Service's endpoints: ${err.message}`));
  // As kube-apiserver: the settings its extension servers authenticate proxied requests by, for them to read.
  if (options.requestHeader) {
    await publishExtensionAuthentication(registry, [tls.caCertPem, ...clientCAs], frontProxyCAs, options.requestHeader).catch((err: Error) =>
      warn(`kapi: publishing kube-system/extension-apiserver-authentication: ${err.message}`),
    );
  }

  let stopped = false;
  return {
    url,
    port: address.port,
    kubeconfigPath,
    adminToken,
    caCertPem: servingCA,
    registry,
    storage,
    gcIdle: () => gc?.idle() ?? Promise.resolve(),
    isLeader: () => elector.isLeader,
    loopback: (request, sink, internal) => http.loopback(request, sink, internal),
    async stop() {
      if (stopped) return;
      stopped = true;
      await stopAll();
    },
  };
}

function serviceRangesOf(options: KapiOptions): ServiceRanges {
  return { clusterIPRange: options.serviceClusterIPRange ?? DEFAULT_SERVICE_RANGES.clusterIPRange, nodePortRange: options.serviceNodePortRange ?? DEFAULT_SERVICE_RANGES.nodePortRange };
}

/**
 * The names and addresses of the certificate kapi makes, as kube-apiserver's self-signed one: the bind
 * address (every interface's address when it binds them all), the host name, the kubernetes Service's
 * names and cluster IP, and --tls-san.
 */
function servingHosts(bindAddress: string, sans: string[], serviceIP: string): string[] {
  const hosts = [bindAddress, 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local', serviceIP];
  const name = hostname().toLowerCase();
  if (/^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$/.test(name)) hosts.push(name);
  if (bindAddress === '0.0.0.0' || bindAddress === '::') {
    for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) if (!a.internal && (bindAddress === '::' || a.family === 'IPv4')) hosts.push(a.address);
  }
  return [...hosts, ...sans];
}

/** The stores of RBAC's four kinds. */
function rbacStores(registry: ApiRegistry): RbacStores {
  const store = (resource: string) => registry.lookup(RBAC_GROUP, 'v1', resource)!.store as RestStore;
  return { roles: store('roles'), roleBindings: store('rolebindings'), clusterRoles: store('clusterroles'), clusterRoleBindings: store('clusterrolebindings') };
}

/** The objects every cluster has: the initial namespaces and the default/kubernetes service. */
async function bootstrap(namespaces: RestStore, registry: ApiRegistry, kubernetesIP: string): Promise<void> {
  // Independent writes, made together (the embedded store commits them as one group).
  const creates: Array<Promise<unknown>> = [];
  const create = (store: RestStore, namespace: string | undefined, obj: KObject) => creates.push(store.create(namespace, obj).catch(ignoreExists));
  for (const name of INITIAL_NAMESPACES) create(namespaces, undefined, { kind: 'Namespace', apiVersion: 'v1', metadata: { name } });
  const priorityClasses = registry.lookup('scheduling.k8s.io', 'v1', 'priorityclasses')!.store;
  for (const c of SYSTEM_PRIORITY_CLASSES) {
    create(priorityClasses, undefined, { kind: 'PriorityClass', apiVersion: 'scheduling.k8s.io/v1', metadata: { name: c.name }, value: c.value, description: c.description });
  }
  for (const [resource, objects] of [['prioritylevelconfigurations', MANDATORY_PRIORITY_LEVELS], ['flowschemas', MANDATORY_FLOW_SCHEMAS]] as const) {
    const store = registry.lookup('flowcontrol.apiserver.k8s.io', 'v1', resource)!.store;
    for (const o of objects) create(store, undefined, structuredClone(o));
  }
  create(registry.lookup('', 'v1', 'services')!.store, 'default', {
    kind: 'Service',
    apiVersion: 'v1',
    metadata: { name: 'kubernetes', namespace: 'default', labels: { component: 'apiserver', provider: 'kubernetes' } },
    spec: { type: 'ClusterIP', clusterIP: kubernetesIP, clusterIPs: [kubernetesIP], ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: 6443 }], sessionAffinity: 'None' },
  });
  await Promise.all(creates);
}

/**
 * The `default/kubernetes` Service's Endpoints and EndpointSlice, and its targetPort, naming where this
 * server listens (upstream's master endpoint reconciler). Written at every start: the port may differ.
 */
async function publishMasterEndpoints(registry: ApiRegistry, bindAddress: string, port: number): Promise<void> {
  const ip = bindAddress === '0.0.0.0' ? '127.0.0.1' : bindAddress === '::' ? '::1' : bindAddress;
  const portSpec = { name: 'https', port, protocol: 'TCP' };
  const meta = (labels: Record<string, string>) => ({ name: 'kubernetes', namespace: 'default', labels });
  const upsert = (group: string, resource: string, make: (old: KObject | undefined) => KObject) =>
    registry.lookup(group, 'v1', resource)!.store.update('default', 'kubernetes', (old) => make(old), { allowCreate: true });
  await upsert('', 'endpoints', (old) => ({
    kind: 'Endpoints',
    apiVersion: 'v1',
    metadata: { ...(old?.metadata ?? {}), ...meta({ 'endpointslice.kubernetes.io/skip-mirror': 'true' }) },
    subsets: [{ addresses: [{ ip }], ports: [portSpec] }],
  }));
  await upsert('discovery.k8s.io', 'endpointslices', (old) => ({
    kind: 'EndpointSlice',
    apiVersion: 'discovery.k8s.io/v1',
    metadata: { ...(old?.metadata ?? {}), ...meta({ 'kubernetes.io/service-name': 'kubernetes' }) },
    addressType: ip.includes(':') ? 'IPv6' : 'IPv4',
    endpoints: [{ addresses: [ip], conditions: { ready: true } }],
    ports: [portSpec],
  }));
  await upsert('', 'services', (old) => {
    if (!old) throw new Error('the kubernetes Service is missing');
    return { ...old, spec: { ...old.spec, ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: port }] } };
  });
}

/**
 * kube-system/extension-apiserver-authentication, as kube-apiserver's ClientCARegistrationHook writes it: the CAs
 * of client certificates, the front proxy's CA, and its allowed names and headers (JSON lists); written only
 * when it says something else.
 */
async function publishExtensionAuthentication(registry: ApiRegistry, clientCAs: string[], frontProxyCAs: string[], settings: NonNullable<KapiOptions['requestHeader']>): Promise<void> {
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
  const store = registry.lookup('', 'v1', 'configmaps')!.store;
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

function ignoreExists(err: { code?: number }): void {
  if (err.code !== 409) throw err;
}

/**
 * Each defined resource's CRD as its definition says, created or replaced (served when this returns). Replicas
 * starting together race for the same CRDs: a create or update that loses (409) reads again and retries.
 */
async function writeDefinedCrds(client: Client, resources: ResourceDefinition<unknown>[]): Promise<void> {
  const crdClient = client.resource({ group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions' });
  const conflict = (err: unknown) => err instanceof StatusError && err.code === 409;
  for (const r of resources) {
    const name = r.crd.metadata.name as string;
    for (let attempt = 0; ; attempt++) {
      try {
        let current: KObject | undefined;
        try {
          current = await crdClient.get(undefined, name);
        } catch (err) {
          if (!(err instanceof StatusError) || err.code !== 404) throw err;
        }
        if (!current) await crdClient.create(undefined, r.crd);
        else {
          const wanted = { ...current, metadata: { ...current.metadata, labels: { ...current.metadata.labels, ...r.crd.metadata.labels } }, spec: { ...current.spec, ...r.crd.spec } };
          if (!deepEqual(wanted, current)) await crdClient.update(undefined, name, wanted);
        }
        break;
      } catch (err) {
        if (!conflict(err) || attempt >= 10) throw err;
      }
    }
  }
}

/** The front proxy's client certificate and key (both or neither). */
async function readProxyClient(certFile: string | undefined, keyFile: string | undefined): Promise<{ cert: string; key: string }> {
  if (!certFile || !keyFile) throw new Error('--proxy-client-cert-file and --proxy-client-key-file go together');
  const [cert, key] = await Promise.all([readFile(certFile, 'utf8'), readFile(keyFile, 'utf8')]);
  return { cert, key };
}

const EXTENSION_AUTHENTICATION = 'extension-apiserver-authentication';

/**
 * The request-header settings kube-apiserver publishes in kube-system/extension-apiserver-authentication
 * (undefined: the ConfigMap or its CA is not there; 'invalid': its CA or a list does not parse).
 */
function requestHeaderFromConfigMap(cm: KObject | undefined): { options: NonNullable<KapiOptions['requestHeader']>; cas: string[] } | 'invalid' | undefined {
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
function clientCAsFromConfigMap(cm: KObject | undefined): string[] | 'invalid' {
  const ca = isRecord(cm?.data) ? cm!.data['client-ca-file'] : undefined;
  if (typeof ca !== 'string' || !ca) return [];
  try {
    return parseCertificateBundle(ca, `kube-system/${EXTENSION_AUTHENTICATION}`);
  } catch {
    return 'invalid';
  }
}

/** The server's request-header authentication of these settings (the front proxy's CAs, and those of users' own certificates). */
function requestHeaderAuthentication(settings: NonNullable<KapiOptions['requestHeader']>, frontProxyCAs: string[], userCAs: string[]): NonNullable<HttpServerOptions['requestHeader']> {
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
