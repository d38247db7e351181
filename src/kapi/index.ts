/**
 * Assembles a kapi server: storage, the registry of built-in resources and
 * CustomResourceDefinitions, the CRD runtime, TLS, authentication and the HTTP
 * front. `startKapi` is what `kapi serve` runs, and what tests and embedders use.
 */
import type { AddressInfo } from 'node:net';
import { installBuiltinEndpoints } from './builtin-endpoints.js';
import { loadConfig } from './config.js';
import { bootstrap, publishMasterEndpoints, rbacStores, writeDefinedCrds } from './bootstrap.js';
import { clientCAsFromConfigMap, EXTENSION_AUTHENTICATION, publishExtensionAuthentication, requestHeaderAuthentication, requestHeaderFromConfigMap } from './core-cluster.js';
import type { Kapi, KapiOptions } from './options.js';
import { customResourceDefinitionEndpoints } from '../crd/crd-endpoints.js';

export type { AuthorizationMode, Kapi, KapiOptions } from './options.js';
import { join } from 'node:path';
import { authenticationReviews, type TokenLookup } from '../apis/authentication/reviews.js';
import { authorizationReviews } from '../apis/authorization/reviews.js';
import { GarbageCollector } from '../controllers/garbage-collector.js';
import { NamespaceController } from '../controllers/namespace-controller.js';
import { NamespaceDefaults } from '../controllers/namespace-defaults.js';
import { ClusterRoleAggregation } from '../controllers/clusterrole-aggregation.js';
import { AdmissionPolicyStatus } from '../controllers/admission-policy-status.js';
import { APIServiceRegistration } from '../controllers/apiservice-registration.js';
import { APIServiceAvailability } from '../controllers/apiservice-availability.js';
import { ServiceAccountTokenSecrets } from '../controllers/service-account-token-secrets.js';
import { RbacResolver, rbacAuthorizer } from '../apis/rbac/authorizer.js';
import { reconcileBootstrapPolicy } from '../apis/rbac/bootstrap.js';
import { rbacEscalationCheck } from '../apis/rbac/escalation.js';
import { admissionPlugins } from '../apis/admission-plugins.js';
import { BUILTIN_ADMISSION } from '../apis/builtin.js';
import { definedConverter, definedStrategy } from '../sdk/resource.js';
import { parseServiceRanges } from '../apis/core/services.js';
import { LeaderElector } from '../sdk/leader-election.js';
import { ObjectEventHub } from '../controllers/object-events.js';
import { controllerIdentities, type ControllerIdentity } from '../controllers/identities.js';
import { Client } from '../sdk/client.js';
import { errors, StatusError } from '../machinery/status.js';
import { DelegatedAuthenticator, delegatedAuthorizer } from '../server/delegated.js';
import { connect } from '../sdk/kubeconfig.js';
import { Informer } from '../sdk/informer.js';
import { converterFactory } from '../crd/conversion/index.js';
import { serviceResolver } from '../crd/conversion/service-resolver.js';
import { CrdController } from '../crd/controller.js';
import { CrdFinalizer } from '../crd/finalizer.js';
import { OpenApiPublisher } from '../openapi/index.js';
import { ApiRegistry } from '../registry/registry.js';
import { RestStore } from '../registry/store.js';
import { AdmissionChain } from '../registry/admission.js';
import type { KObject } from '../api/object.js';
import { adminUserInfo, TokenAuthenticator } from '../server/authn.js';
import { watchCertificatePair } from '../server/serving-files.js';
import { type ObjectGetter } from '../apis/authentication/service-account-tokens.js';
import { writeAdminKubeconfig } from '../server/kubeconfig.js';
import { ApiMetrics } from '../server/metrics.js';
import { HttpServer } from '../server/server.js';
import { auditLogBackend, type AuditBackend, type AuditPolicy } from '../server/audit.js';
import { alwaysAllow } from '../server/authz.js';
import { openStorageAsync, type Storage } from '../storage/index.js';
import { EncryptingStorage } from '../storage/encryption.js';

export async function startKapi(options: KapiOptions = {}): Promise<Kapi> {
  // Config: every file read and checked before anything is opened (a bad file leaves nothing running).
  const { dataDir, warn, bindAddress, tls, adminToken, extraTokens, clientCAs, frontProxyCAs, proxyClient, saTokens, auditPolicy, serviceRanges, servingFilesStamp, servingFiles, servingCA, encryption, admissionPlugins: enabledPlugins } =
    await loadConfig(options);
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

  installBuiltinEndpoints(registry, storage, serviceRanges, saTokens, enabledPlugins);
  const namespaces = registry.lookup('', 'v1', 'namespaces')!.store;

  const { store: crdStore, endpoints: crdEndpoints } = customResourceDefinitionEndpoints(storage);
  for (const ep of crdEndpoints) registry.add(ep);

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
  await Promise.all([bootstrap(namespaces, registry, parseServiceRanges(serviceRanges).firstIP), reconcileBootstrapPolicy(rbacStores(registry))]);

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
  const admission = admissionPlugins(
    BUILTIN_ADMISSION,
    enabledPlugins,
    { registry, namespaces, coreNamespaces, authorizer, resolveService, hooks: options.admissionHooks, observeWebhook: (...args) => metrics.webhookCalled(...args) },
    // kapi's own: the policy-based RBAC storages' check, where an authorizer can say no; then the embedder's.
    [...(authorizer === alwaysAllow ? [] : [rbacEscalationCheck(authorizer, resolver)]), ...(options.admission ?? [])],
  );
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
      .concat(namespaces.start()),
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
    admission: new AdmissionChain(admission),
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



