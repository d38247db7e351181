/**
 * Assembles a kapi server: storage, the registry of built-in resources and
 * CustomResourceDefinitions, the CRD runtime, TLS, authentication and the HTTP
 * front. `startKapi` is what `kapi serve` runs, and what tests and embedders use.
 * As k8s.io/apiserver's Config → Complete → New → Run: the options read and checked
 * (config.ts), completed with what a core cluster says (delegation.ts), the server
 * made (the groups install their endpoints; access.ts; admission; the HTTP front), and
 * run (bootstrap objects, caches, controllers.ts, the port).
 */
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { installAccess } from './access.js';
import { installBuiltinEndpoints } from './builtin-endpoints.js';
import { loadConfig, type ServerConfig } from './config.js';
import { CONTROLLERS_LEASE, startControllers } from './controllers.js';
import { publishExtensionAuthentication, requestHeaderAuthentication } from './core-cluster.js';
import { completeDelegation, followCoreRequestHeader, type Delegation } from './delegation.js';
import type { Kapi, KapiOptions } from './options.js';
import { customResourceDefinitionEndpoints } from '../crd/crd-endpoints.js';
import { rbacEscalationCheck } from '../apis/rbac/escalation.js';
import { admissionCaches, admissionPlugins } from '../apis/admission-plugins.js';
import { BUILTIN_ADMISSION, BUILTIN_START_HOOKS } from '../apis/builtin.js';
import { coreStores } from '../apis/core/install.js';
import type { StartContext } from '../apis/start-hooks.js';
import { parseServiceRanges } from '../apis/core/services.js';
import { APIServiceAvailability } from '../controllers/apiservice-availability.js';
import type { ControllerIdentity } from '../controllers/identities.js';
import { definedConverter, definedStrategy } from '../sdk/resource.js';
import { writeDefinedCrds } from '../sdk/defined-crds.js';
import { Client } from '../sdk/client.js';
import { DelegatedAuthenticator } from '../server/delegated.js';
import { converterFactory } from '../crd/conversion/index.js';
import { serviceResolver } from '../crd/conversion/service-resolver.js';
import { CrdController } from '../crd/controller.js';
import { OpenApiPublisher } from '../openapi/index.js';
import { ApiRegistry } from '../registry/registry.js';
import { AdmissionChain } from '../registry/admission.js';
import { watchCertificatePair } from '../server/serving-files.js';
import { writeAdminKubeconfig } from '../server/kubeconfig.js';
import { ApiMetrics } from '../server/metrics.js';
import { HttpServer } from '../server/server.js';
import { auditLogBackend, type AuditBackend, type AuditPolicy } from '../server/audit.js';
import { alwaysAllow } from '../server/authz.js';
import { openStorageAsync, type Storage } from '../storage/index.js';
import { EncryptingStorage } from '../storage/encryption.js';

export type { AuthorizationMode, Kapi, KapiOptions } from './options.js';
export { CONTROLLER_NAMES } from './controllers.js';

export async function startKapi(options: KapiOptions = {}): Promise<Kapi> {
  // Config: every file read and checked before anything is opened (a bad file leaves nothing running).
  const config = await loadConfig(options);
  // Complete: behind an aggregator, the core cluster's clients and settings.
  const delegation = await completeDelegation(options, config);
  // New: the storage, the groups' endpoints, authentication, authorization, admission and the HTTP front (the CRD
  // runtime, the bootstrap objects and the caches that authorization and admission decide from are started with them).
  const opened = await openStorageAsync(options.storage ?? { kind: 'sqlite', path: join(config.dataDir, 'state.db'), compactIntervalMs: 60_000 }).catch((err: unknown) => {
    delegation.close();
    throw err;
  });
  const storage: Storage = config.encryption ? new EncryptingStorage(opened, config.encryption) : opened;
  // A step that fails after the store is open closes what the steps before it started (in the reverse order), then
  // the store: a failed start leaves no handle, timer or watch behind in the embedder's process.
  const started: Array<() => unknown> = [];
  try {
    return await assemble(options, config, delegation, storage, started);
  } catch (err) {
    for (const close of started.reverse()) await Promise.resolve().then(close).catch(() => {});
    delegation.close();
    await storage.close().catch(() => {});
    throw err;
  }
}

/** New and Run, on an open store; `started` is given a closer for each part as it starts. */
async function assemble(options: KapiOptions, config: ServerConfig, delegation: Delegation, storage: Storage, started: Array<() => unknown>): Promise<Kapi> {
  const { dataDir, warn, bindAddress, tls, adminToken, clientCAs, frontProxyCAs, proxyClient, saTokens, auditPolicy, serviceRanges, servingFilesStamp, admissionPlugins: enabledPlugins } = config;
  // The certificate served: --tls-cert-file's, the one the core cluster keeps (--serving-cert-service), or kapi's own.
  const fromCore = delegation.servingCertificate;
  const servingFiles = config.servingFiles ?? (fromCore ? { certPem: fromCore.certPem, keyPem: fromCore.keyPem } : undefined);
  const servingCA = fromCore?.caPem ?? config.servingCA;
  const registry = new ApiRegistry();
  // The stores' watch caches, started by the CRD runtime, the start hooks and admission.
  started.push(() => {
    for (const ep of registry.all()) ep.store.stop();
  });

  installBuiltinEndpoints(registry, storage, serviceRanges, saTokens, enabledPlugins, config.served);
  const core = coreStores(registry);

  const { store: crdStore, endpoints: crdEndpoints } = customResourceDefinitionEndpoints(storage);
  for (const ep of crdEndpoints) registry.add(ep);

  const resolveService = serviceResolver(core.services, core.endpoints);
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
  started.push(() => crds.stop(), () => openapi.close());
  await crds.start();
  // The groups' start hooks: the objects every cluster has, RBAC's bootstrap policy.
  const startContext: StartContext = {
    store(group, resource) {
      const ep = registry.lookup(group, 'v1', resource);
      if (!ep) throw new Error(`${resource}.${group}/v1 is not served`);
      return ep.store;
    },
    kubernetesIP: parseServiceRanges(serviceRanges).firstIP,
  };
  await Promise.all(BUILTIN_START_HOOKS.map((h) => h.run?.(startContext).catch((err: Error) => Promise.reject(new Error(`start hook ${h.name}: ${err.message}`)))));

  const { authenticator, identities, getObject, authorizer, resolver } = await installAccess(registry, options, config, delegation);
  const metrics = new ApiMetrics(registry);
  const admissionContext = { registry, namespaces: core.namespaces, coreNamespaces: delegation.coreNamespaces, authorizer, resolveService, hooks: options.admissionHooks, pluginConfig: (name: string) => config.admissionConfig.get(name), observeWebhook: metrics.webhookCalled.bind(metrics) };
  const admission = admissionPlugins(
    BUILTIN_ADMISSION,
    enabledPlugins,
    admissionContext,
    // kapi's own: the policy-based RBAC storages' check, where an authorizer can say no; then the embedder's.
    [...(authorizer === alwaysAllow ? [] : [rbacEscalationCheck(authorizer, resolver)]), ...(options.admission ?? [])],
  );
  // The plugins that are on decide from watch caches (webhook and policy configurations, namespaces' labels).
  await Promise.all(admissionCaches(BUILTIN_ADMISSION, enabledPlugins, admissionContext).map((store) => store.start()));
  let auditing: { policy: AuditPolicy; backend: AuditBackend } | undefined;
  if (auditPolicy) {
    auditing = { policy: auditPolicy, backend: options.auditBackend ?? auditLogBackend(options.auditLogPath!, warn) };
    const backend = auditing.backend;
    started.push(() => backend.close?.());
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
    delegatedAuthenticator: delegation.authenticationCore ? new DelegatedAuthenticator(delegation.authenticationCore, options.apiAudiences ?? []) : undefined,
    requestHeader: delegation.requestHeader ? requestHeaderAuthentication(delegation.requestHeader, frontProxyCAs, [tls.caCertPem, ...clientCAs]) : undefined,
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
    console: options.console,
  });
  started.push(() => http.close());
  followCoreRequestHeader(delegation, options, config, http);
  // Run: the loopback clients, aggregation, the controllers, the port.
  const clientFor = (id: ControllerIdentity) => new Client((req, sink) => http.loopback(req, sink), id.token, id.userAgent);
  // Aggregated APIServices: checked (and their resources routed) on every replica.
  // Endpoints are read from their watch cache (on every replica, not only the leader's controllers).
  await core.endpoints.start();
  const availability = (aggregation.availability = new APIServiceAvailability(clientFor(identities.apiserver), registry, {
    services: core.services,
    endpoints: core.endpoints,
    proxyClient,
    openapi,
    intervalMs: options.apiServiceCheckIntervalMs,
    log: warn,
  }));
  started.push(() => availability.stop());
  await availability.start();
  // Resources defined in TypeScript: their CRDs written (or brought up to date) before the first request.
  if (defined.size > 0) await writeDefinedCrds(clientFor(identities.apiserver), [...defined.values()]);

  const running = await startControllers({
    registry,
    identities,
    clientFor,
    // The CA that the served certificate answers to (kube-root-ca.crt, token Secrets' ca.crt).
    config: { ...config, servingCA },
    crds,
    // A Lease of kapi's own: the real kube-controller-manager, pointed at kapi, elects its leader on its own one.
    leaderElection: { name: CONTROLLERS_LEASE, exclusive: (options.storage?.kind ?? 'sqlite') !== 'etcd', ...options.leaderElection },
    controllers: options.builtinControllers ?? ['*'],
  });
  const elector = running.elector;
  started.push(() => elector.stop());

  let unwatch = () => {};
  started.push(() => unwatch());
  /** The renewals' kubeconfig writes, one after the other: none starts once the server stops, and stop waits for one under way. */
  let kubeconfigWrites: Promise<unknown> = Promise.resolve();
  const stopAll = async () => {
    unwatch();
    await kubeconfigWrites;
    aggregation.availability?.stop();
    delegation.close();
    await http.close();
    await elector.stop();
    crds.stop();
    for (const ep of registry.all()) ep.store.stop();
    await storage.close();
    auditing?.backend.close?.();
  };
  // The port is taken (or the address wrong): startKapi closes what is open.
  const address: AddressInfo = await http.listen(options.port ?? 6443, bindAddress);
  const host = bindAddress === '0.0.0.0' || bindAddress === '::' ? '127.0.0.1' : bindAddress;
  const url = `https://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
  const writeKubeconfig = (caCertPem: string) =>
    writeAdminKubeconfig(dataDir, {
      server: url,
      caCertPem,
      token: adminToken,
      clientCert: { certPem: tls.adminCertPem, keyPem: tls.adminKeyPem },
      // With the memory store nothing in the data dir outlives the process: no fsync.
      durable: options.storage?.kind !== 'memory',
    });
  // The kubeconfig is written (and synced) while the start hooks that wait for the port write their objects.
  const writingKubeconfig = writeKubeconfig(servingCA);
  writingKubeconfig.catch(() => {}); // awaited below: its failure fails the start
  if (options.tlsCertFile) {
    // A renewal is served to new connections, and admin.kubeconfig trusts it from then on.
    // Each kubeconfig written after the one before (the first, with the CA of the start, among them): the last
    // renewal's is the one left.
    kubeconfigWrites = writingKubeconfig.catch(() => {});
    let watching = true;
    const renewed = (pair: { certPem: string; keyPem: string }) => {
      http.setServingCertificate(pair.certPem, pair.keyPem);
      kubeconfigWrites = kubeconfigWrites
        .then(() => (watching ? writeKubeconfig(pair.certPem) : undefined))
        .catch((err: Error) => warn(`kapi: writing admin.kubeconfig: ${err.message}`));
    };
    const stopWatching = watchCertificatePair(options.tlsCertFile, options.tlsPrivateKeyFile!, renewed, warn, 1000, servingFilesStamp);
    unwatch = () => {
      watching = false;
      stopWatching();
    };
  }
  if (fromCore) {
    // Renewed in its Secret (from the same CA): served to new connections; the kubeconfig's CA stays. One renewed
    // while the server was starting is taken up now.
    fromCore.onRenewed = (pair) => http.setServingCertificate(pair.certPem, pair.keyPem);
    if (fromCore.certPem !== servingFiles?.certPem) http.setServingCertificate(fromCore.certPem, fromCore.keyPem);
  }
  await Promise.all([
    ...BUILTIN_START_HOOKS.map((h) => h.listening?.(startContext, { bindAddress, port: address.port }).catch((err: Error) => warn(`kapi: start hook ${h.name}: ${err.message}`))),
    // As kube-apiserver: the settings its extension servers authenticate proxied requests by, for them to read.
    options.requestHeader &&
      publishExtensionAuthentication(core.configMaps, [tls.caCertPem, ...clientCAs], frontProxyCAs, options.requestHeader).catch((err: Error) =>
        warn(`kapi: publishing kube-system/extension-apiserver-authentication: ${err.message}`),
      ),
  ]);
  const kubeconfigPath = await writingKubeconfig;

  let stopped = false;
  return {
    url,
    port: address.port,
    kubeconfigPath,
    adminToken,
    caCertPem: servingCA,
    registry,
    storage,
    gcIdle: () => running.gcIdle(),
    isLeader: () => elector.isLeader,
    consoleLink: () => http.console?.oneTimeLink(url, adminToken),
    loopback: (request, sink, internal) => http.loopback(request, sink, internal),
    async stop() {
      if (stopped) return;
      stopped = true;
      await stopAll();
    },
  };
}



