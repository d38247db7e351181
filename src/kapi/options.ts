/** What `startKapi` takes (`kapi serve`'s flags as options) and what it gives back. */
import type { AdmissionHook } from '../apis/admissionregistration/webhook-admission.js';
import type { Authorizer } from '../api/authorization.js';
import type { LoopbackRequest, LoopbackSink } from '../api/serving.js';
import type { ConvertFunction } from '../crd/conversion/index.js';
import type { AdmissionPlugin } from '../registry/admission.js';
import type { ApiRegistry } from '../registry/registry.js';
import type { ResourceDefinition } from '../sdk/resource.js';
import type { AuditBackend } from '../server/audit.js';
import type { ServerLimits } from '../server/server.js';
import type { Storage, StorageConfig } from '../storage/index.js';

/** --authorization-mode: RBAC (the default), or AlwaysAllow (every authenticated request is allowed). */
export type AuthorizationMode = 'RBAC' | 'AlwaysAllow';

/**
 * What the package's `start` takes: `kapi serve`'s flags as options (storage, certificates, authentication,
 * admission, resources...); everything is optional. This is the public contract: an option added here is
 * part of the package's API (docs/api-report.md shows it); one for kapi's own use goes in KapiOptions.
 */
export interface ServerOptions {
  /** Where the store, certificates, admin token and kubeconfig live (default ./.kapi). */
  dataDir?: string;
  /** The store (default: sqlite in the data dir). */
  storage?: StorageConfig;
  /** --bind-address: the address to listen on (default 127.0.0.1; 0.0.0.0 or :: for every interface). */
  bindAddress?: string;
  /** 0 picks a free port. */
  port?: number;
  /** kube-apiserver's static token CSV. */
  tokenAuthFile?: string;
  /** --client-ca-file: CA certificates (PEM) whose client certificates authenticate (CN the user, O the groups), besides kapi's own CA. */
  clientCAFile?: string;
  /**
   * --proxy-client-cert-file and --proxy-client-key-file: the client certificate kapi presents to aggregated API
   * servers (their --requestheader-client-ca-file trusts its CA).
   */
  proxyClientCertFile?: string;
  /** --proxy-client-key-file: the key of proxyClientCertFile (both or neither). */
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
  /**
   * --serving-cert-service: with coreKubeconfig, the core cluster's Service that routes to this server (behind its
   * aggregator). kapi serves a certificate for the Service's names (and 127.0.0.1, localhost), kept with its CA in the
   * Secret `<name>-cert` of the Service's namespace in the core cluster: the first replica makes it, the others
   * serve the same one, renewed there when due. The CA is written as the caBundle of every APIService that routes
   * to the Service (now and as they come), so the aggregator verifies this server instead of skipping TLS checks.
   */
  servingCertService?: { namespace: string; name: string };
  /** --authorization-kubeconfig: the core cluster asked (SubjectAccessReview) about what kapi's own authorizer does not allow. */
  authorizationKubeconfig?: string;
  /** How often an aggregated APIService's backend is checked (ms; default 30 s, as upstream). */
  apiServiceCheckIntervalMs?: number;
  /**
   * Request-header authentication (--requestheader-*), for kapi behind an aggregator: the front proxy's CA file,
   * the names its certificate may have (empty: any), and the headers naming the user (defaults: X-Remote-User,
   * X-Remote-Group, X-Remote-Extra-; no uid header).
   */
  requestHeader?: { clientCAFile: string; allowedNames?: string[]; usernameHeaders?: string[]; uidHeaders?: string[]; groupHeaders?: string[]; extraHeaderPrefixes?: string[] };
  /** --encryption-provider-config: an EncryptionConfiguration; the resources it names are encrypted in the store. */
  encryptionProviderConfig?: string;
  /** --tls-cert-file and --tls-private-key-file: serve this certificate (reloaded when the files change) instead of one kapi makes. */
  tlsCertFile?: string;
  /** --tls-private-key-file: the key of tlsCertFile (both or neither). */
  tlsPrivateKeyFile?: string;
  /** --tls-san: more names and addresses for the certificate kapi makes (besides the bind address, the host name and the kubernetes Service's). */
  tlsSans?: string[];
  /** --console: serve the web console under /console/ (default false here; `kapi serve` turns it on). */
  console?: boolean;
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
  // Definitions of any internal form (the type is invariant in it).
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  resources?: readonly ResourceDefinition<any>[];
  /** How long a conversion webhook may take (default 30 s, as upstream). */
  webhookTimeoutMs?: number;
  /**
   * --admission-hooks: admission in the process with webhook semantics: each hook is matched as a webhook
   * (`rules`, selectors), gets the AdmissionReview's request and answers as a webhook's response does.
   */
  admissionHooks?: AdmissionHook[];
  /**
   * --enable-admission-plugins: admission plugins to run besides the default ones (kube-apiserver's names;
   * they run in upstream's order whatever the order here). A plugin kapi does not have is named in a warning.
   */
  enableAdmissionPlugins?: string[];
  /** --disable-admission-plugins: default admission plugins not to run (e.g. NamespaceLifecycle). */
  disableAdmissionPlugins?: string[];
  /**
   * --admission-control-config-file: an AdmissionConfiguration (apiserver.config.k8s.io/v1) with the admission
   * plugins' configurations; kapi reads PodSecurity's (a PodSecurityConfiguration: defaults and exemptions).
   */
  admissionControlConfigFile?: string;
  /**
   * --runtime-config: built-in group versions to serve or not, as kube-apiserver's flag (`api/all`, `api/ga`,
   * `api/beta`, `api/alpha`, `<group>/<version>`; the value `true` or `false`, '' for true). Versions upstream has
   * removed (`batch/v1beta1`, `policy/v1beta1`, `discovery.k8s.io/v1beta1`, which the 1.20 control plane lists) are
   * served only when turned on here.
   */
  runtimeConfig?: Record<string, string>;
  /**
   * --authorization-mode: 'RBAC' (the default: system:masters may do anything, everyone else what the
   * stored roles and bindings give) or 'AlwaysAllow' (every authenticated request is allowed).
   */
  authorizationMode?: AuthorizationMode;
  /** An authorizer of the embedder's, instead of the mode's. */
  authorizer?: Authorizer;
  /** Warnings at start and unexpected errors while serving (default: stderr). */
  warn?: (message: string) => void;
  /**
   * --controllers: which of kapi's controllers run, in kube-controller-manager's syntax and names (`*`: all;
   * `namespace-controller` or its alias `namespace`: that one; `-garbage-collector-controller`: not that one;
   * the first mention of a name decides). Default `['*']`. Turn them off when the real kube-controller-manager
   * runs against kapi.
   */
  builtinControllers?: string[];
  /** Controller leader election (replicas on etcd): lease duration and retry period. */
  leaderElection?: { leaseDurationSeconds?: number; retryPeriodMs?: number };
  /** --audit-policy-file: the audit policy (audit.k8s.io/v1 Policy); without it nothing is audited, as upstream. */
  auditPolicyFile?: string;
  /** --audit-log-path: where audit events go, one JSON event per line ('-': standard output). */
  auditLogPath?: string;
  /** An audit backend of the embedder's (instead of a log file); needs auditPolicyFile. */
  auditBackend?: AuditBackend;
}

/** What `startKapi` takes: the public options, and those only kapi's command and tests set. */
export interface KapiOptions extends ServerOptions {
  /** Admission plugins of the embedder's: run on every write through the API after kapi's own, before the dynamic ones (policies and webhooks). */
  admission?: AdmissionPlugin[];
  /** Request limits and timeouts of the HTTP front (kube-apiserver's defaults where absent). */
  limits?: Partial<ServerLimits>;
  /** Where the request log goes (kube-apiserver's httplog; `kapi serve -v=2`); absent: none. */
  requestLog?: (line: string) => void;
}

/** A running kapi started in the process (`startKapi`): where it serves, its registry and storage, and how to stop it. */
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
  /** A one-time sign-in link to the web console as the admin (good once, within 15 minutes); undefined: the console is off. */
  consoleLink(): string | undefined;
  /**
   * Serve a request made inside the process through the whole request path (the in-process clients' transport);
   * `internal: false` for an embedder's client, which waits for what its writes set off as a network client does.
   */
  loopback(request: LoopbackRequest, sink: LoopbackSink, internal?: boolean): () => void;
  stop(): Promise<void>;
}
