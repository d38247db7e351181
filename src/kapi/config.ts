/**
 * The Config step of a start: every file and flag of the options read and checked (certificates made when
 * missing, tokens, CA bundles, the audit policy, the encryption config, service ranges), before any store,
 * client or socket is opened, so that a bad file leaves nothing running.
 */
import { readFile } from 'node:fs/promises';
import { hostname, networkInterfaces } from 'node:os';
import { checkAdmissionHooks } from '../apis/admissionregistration/webhook-admission.js';
import { admissionFlagErrors, enabledAdmissionPlugins, missingAdmissionPlugins } from '../apis/admission-plugins.js';
import { readAdmissionConfiguration } from '../apis/admission-config.js';
import { BUILTIN_ADMISSION, BUILTIN_RESOURCES, type BuiltinResource } from '../apis/builtin.js';
import { servedByRuntimeConfig } from '../apis/runtime-config.js';
import { ServiceAccountTokens } from '../apis/authentication/service-account-tokens.js';
import { DEFAULT_SERVICE_RANGES, parseServiceRanges, type ServiceRanges } from '../apis/core/services.js';
import { parseAuditPolicy, type AuditPolicy } from '../server/audit.js';
import type { UserInfo } from '../api/authentication.js';
import { ensureAdminToken, parseTokenFile } from '../server/authn.js';
import { ensureServingCertificates, parseCertificateBundle } from '../server/certs.js';
import { certificatePairStamp, readCertificatePair } from '../server/serving-files.js';
import { parseEncryptionConfig } from '../storage/encryption.js';
import { ensurePrivateDir } from '../util/private-files.js';
import type { KapiOptions } from './options.js';
import { controllerSelectionErrors } from './controllers.js';

/** What the Config step gives the rest of a start. */
export interface ServerConfig {
  dataDir: string;
  warn: (message: string) => void;
  bindAddress: string;
  /** kapi's CA, serving and admin certificates (made on first start). */
  tls: Awaited<ReturnType<typeof ensureServingCertificates>>;
  adminToken: string;
  /** --token-auth-file's users by token. */
  extraTokens: Map<string, UserInfo> | undefined;
  clientCAs: string[];
  frontProxyCAs: string[];
  proxyClient: { cert: string; key: string } | undefined;
  saTokens: ServiceAccountTokens;
  auditPolicy: AuditPolicy | undefined;
  serviceRanges: ServiceRanges;
  /** The stamp of --tls-cert-file and --tls-private-key-file, taken before they were read. */
  servingFilesStamp: string;
  servingFiles: ReturnType<typeof readCertificatePair> | undefined;
  /** What verifies the served certificate: kapi's CA, or the user's certificate file (with its chain). */
  servingCA: string;
  encryption: ReturnType<typeof parseEncryptionConfig> | undefined;
  /** The admission plugins that are on (upstream's names, in the order they run). */
  admissionPlugins: string[];
  /** --admission-control-config-file's plugin configurations, by plugin name. */
  admissionConfig: ReadonlyMap<string, unknown>;
  /** Whether a built-in resource's version is served (--runtime-config). */
  served: (r: BuiltinResource) => boolean;
}

/** Reads and checks what the options name (the data dir is made private first). */
export async function loadConfig(options: KapiOptions): Promise<ServerConfig> {
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
  const auditPolicy =
    options.auditPolicyFile && (options.auditLogPath || options.auditBackend) ? parseAuditPolicy(await readFile(options.auditPolicyFile, 'utf8'), options.auditPolicyFile) : undefined;
  const serviceRanges = serviceRangesOf(options);
  checkAdmissionHooks(options.admissionHooks ?? []);
  const enable = options.enableAdmissionPlugins ?? [];
  const disable = options.disableAdmissionPlugins ?? [];
  const admissionErrors = admissionFlagErrors(enable, disable);
  if (admissionErrors.length > 0) throw new Error(admissionErrors.join('; '));
  const missing = missingAdmissionPlugins(BUILTIN_ADMISSION, enable);
  if (missing.length > 0) warn(`kapi: admission plugins kapi does not have are not run: ${missing.join(', ')}`);
  const admissionPlugins = enabledAdmissionPlugins(enable, disable);
  const admissionConfig = options.admissionControlConfigFile ? readAdmissionConfiguration(options.admissionControlConfigFile) : new Map<string, unknown>();
  // The plugins that are on read their configurations now: a wrong one stops the start before anything is opened.
  for (const def of BUILTIN_ADMISSION) if (def.parseConfig && admissionPlugins.includes(def.name)) admissionConfig.set(def.name, def.parseConfig(admissionConfig.get(def.name)));
  let served: (r: BuiltinResource) => boolean;
  try {
    served = servedByRuntimeConfig(options.runtimeConfig ?? {}, BUILTIN_RESOURCES);
  } catch (err) {
    throw new Error(`--runtime-config: ${(err as Error).message}`);
  }
  const controllerErrors = controllerSelectionErrors(options.builtinControllers ?? []);
  if (controllerErrors.length > 0) throw new Error(`validation failed for '--controllers': [${controllerErrors.join(', ')}]`);
  if ((options.tlsCertFile === undefined) !== (options.tlsPrivateKeyFile === undefined)) throw new Error('--tls-cert-file and --tls-private-key-file go together');
  // The files' stamp is taken before they are read: a change in between is seen by the watcher.
  const servingFilesStamp = options.tlsCertFile ? certificatePairStamp(options.tlsCertFile, options.tlsPrivateKeyFile!) : '';
  const servingFiles = options.tlsCertFile ? readCertificatePair(options.tlsCertFile, options.tlsPrivateKeyFile!) : undefined;
  // What verifies the served certificate: kapi's CA, or the user's certificate file (with its chain).
  const servingCA = servingFiles ? servingFiles.certPem : tls.caCertPem;
  const encryption = options.encryptionProviderConfig ? parseEncryptionConfig(await readFile(options.encryptionProviderConfig, 'utf8'), options.encryptionProviderConfig) : undefined;
  return { dataDir, warn, bindAddress, tls, adminToken, extraTokens, clientCAs, frontProxyCAs, proxyClient, saTokens, auditPolicy, serviceRanges, servingFilesStamp, servingFiles, servingCA, encryption, admissionPlugins, admissionConfig, served };
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

/** The front proxy's client certificate and key (both or neither). */
async function readProxyClient(certFile: string | undefined, keyFile: string | undefined): Promise<{ cert: string; key: string }> {
  if (!certFile || !keyFile) throw new Error('--proxy-client-cert-file and --proxy-client-key-file go together');
  const [cert, key] = await Promise.all([readFile(certFile, 'utf8'), readFile(keyFile, 'utf8')]);
  return { cert, key };
}
