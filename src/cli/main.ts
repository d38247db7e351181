/** The `kapi` command. */
import { resolve } from 'node:path';
import { Command } from 'commander';
import { KUBERNETES_VERSION } from '../api/version.js';
import { buildConfig, createApi, createResource, createWebhook, initProject } from './scaffold.js';
import { generateManifests } from './manifests.js';
import { importFile } from './import-file.js';
import type { ConvertFunction } from '../crd/conversion/types.js';
import { CONTROLLER_NAMES, startKapi, type AuthorizationMode } from '../kapi/index.js';
import { parseGoDuration } from '../server/filters.js';
import { clientFromKubeconfig } from './kube-client.js';
import { parseRuntimeConfig } from '../apis/runtime-config.js';
import { migrateStorage } from './migrate-storage.js';
import { setDecodedObjectLimit } from '../cache/watch-cache.js';

interface ServeOptions {
  bindAddress: string;
  securePort: string;
  dataDir: string;
  tokenAuthFile?: string;
  authorizationMode: string;
  clientCaFile?: string;
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
  tlsSan: string[];
  enableAdmissionPlugins: string[];
  controllers: string[];
  runtimeConfig: string[];
  disableAdmissionPlugins: string[];
  admissionControlConfigFile?: string;
  encryptionProviderConfig?: string;
  anonymousAuth: boolean;
  console: boolean;
  serviceAccountIssuer: string[];
  serviceAccountKeyFile: string[];
  serviceAccountSigningKeyFile?: string;
  apiAudiences?: string;
  serviceAccountMaxTokenExpiration?: string;
  serviceClusterIpRange: string;
  serviceNodePortRange: string;
  converters?: string;
  admissionHooks?: string;
  resources?: string;
  requestheaderClientCaFile?: string;
  proxyClientCertFile?: string;
  authenticationKubeconfig?: string;
  kubeconfig?: string;
  servingCertService?: string;
  authorizationKubeconfig?: string;
  proxyClientKeyFile?: string;
  requestheaderAllowedNames?: string;
  requestheaderUsernameHeaders?: string;
  requestheaderUidHeaders?: string;
  requestheaderGroupHeaders?: string;
  requestheaderExtraHeadersPrefix?: string;
  etcdServers?: string;
  etcdPrefix: string;
  etcdCafile?: string;
  etcdCertfile?: string;
  etcdKeyfile?: string;
  maxRequestsInflight: string;
  watchCacheDecodedObjects: string;
  maxMutatingRequestsInflight: string;
  maxWatches: string;
  requestTimeout: string;
  minRequestTimeout: string;
  auditPolicyFile?: string;
  auditLogPath?: string;
  v: string;
}

/** A boolean flag's value as Go's strconv.ParseBool reads it; anything else is an error. */
function goBool(flag: string, value: string): boolean {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(value)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(value)) return false;
  throw new Error(`invalid argument ${JSON.stringify(value)} for "${flag}" flag: strconv.ParseBool: parsing ${JSON.stringify(value)}: invalid syntax`);
}

/** A repeatable flag's values. */
const collect = (value: string, previous: string[]) => [...previous, value];
/** A repeatable flag of comma-separated values (pflag's StringSlice). */
const commaList = (values: string[]) => values.flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean);

/** --authorization-mode: RBAC or AlwaysAllow (kube-apiserver's names; one mode, or a list naming one). */
function authorizationMode(value: string): AuthorizationMode {
  const modes = value.split(',').map((m) => m.trim()).filter(Boolean);
  for (const m of modes) if (m !== 'RBAC' && m !== 'AlwaysAllow') throw new Error(`authorization-mode ${JSON.stringify(m)} is not a valid mode (kapi has RBAC and AlwaysAllow)`);
  if (modes.length === 0) throw new Error('at least one authorization-mode must be passed');
  // Authorizers are asked in turn until one allows: with AlwaysAllow among them, every request is allowed.
  return modes.includes('AlwaysAllow') ? 'AlwaysAllow' : 'RBAC';
}

/** A flag's whole, non-negative number, or a clear error naming the flag. */
function count(flag: string, value: string): number {
  if (!/^[0-9]{1,15}$/.test(value)) throw new Error(`invalid value "${value}" for ${flag}: must be a whole number >= 0`);
  return Number(value);
}

/** A `namespace/name` flag value, both parts DNS labels. */
function namespacedName(flag: string, value: string): { namespace: string; name: string } {
  const m = /^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)\/([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)$/.exec(value);
  if (!m) throw new Error(`invalid value ${JSON.stringify(value)} for ${flag}: must be <namespace>/<name>`);
  return { namespace: m[1], name: m[3] };
}

function duration(flag: string, value: string): number {
  const ms = parseGoDuration(value);
  if (ms === undefined || ms < 0) throw new Error(`invalid value "${value}" for ${flag}: must be a duration such as 60s or 1m0s`);
  return ms;
}

const program = new Command();
/** A comma-separated flag's values (absent: undefined, for the default). */
const list = (v: string | undefined): string[] | undefined => (v === undefined ? undefined : v.split(',').map((x) => x.trim()).filter(Boolean));

program.name('kapi').description('A Kubernetes-compatible API server for custom resources (kapi --version: the version it serves as)');

program
  .command('serve')
  .description('serve the API (TLS) on the embedded store')
  .option('--bind-address <ip>', 'the address to listen on', '127.0.0.1')
  .option('--secure-port <port>', 'the port to serve HTTPS on (0: any free port)', '6443')
  .option('--data-dir <dir>', 'where the store, certificates and admin kubeconfig live', '.kapi')
  .option('--token-auth-file <file>', 'static bearer tokens: token,user,uid,"group1,group2"')
  .option('--encryption-provider-config <file>', 'an EncryptionConfiguration: the resources it names (e.g. secrets) are encrypted in the store (aescbc, aesgcm, secretbox)')
  .option('--tls-cert-file <file>', 'serve this certificate (PEM, with its chain) instead of one kapi makes; reloaded when it changes')
  .option('--tls-private-key-file <file>', "the key of --tls-cert-file")
  .option('--tls-san <names>', 'more DNS names or IP addresses for the certificate kapi makes (comma-separated, repeatable)', collect, [])
  .option('--client-ca-file <file>', "CA certificates whose client certificates authenticate (Common Name: user, Organizations: groups), besides kapi's own")
  .option('--kubeconfig <file>', 'the core cluster whose namespaces count (behind an aggregator): objects only go into namespaces it has')
  .option('--serving-cert-service <namespace/name>', "with --kubeconfig: the core cluster's Service that routes to kapi; kapi serves a certificate for it, kept in the Secret <name>-cert there, and writes its CA into the APIServices that route to it")
  .option('--authentication-kubeconfig <file>', 'the core cluster that reviews tokens kapi does not know (TokenReview), and whose extension-apiserver-authentication ConfigMap gives the request-header settings')
  .option('--authorization-kubeconfig <file>', "the core cluster asked (SubjectAccessReview) about what kapi's own authorizer does not allow")
  .option('--proxy-client-cert-file <file>', 'the client certificate presented to aggregated API servers (APIServices with a service)')
  .option('--proxy-client-key-file <file>', 'the key of --proxy-client-cert-file')
  .option('--requestheader-client-ca-file <file>', "the front proxy's CA: its client certificates authenticate the user named in the request headers (behind an aggregator)")
  .option('--requestheader-allowed-names <names>', "comma-separated Common Names the front proxy's certificate may have (empty: any)")
  .option('--requestheader-username-headers <headers>', 'comma-separated headers naming the user (default X-Remote-User)')
  .option('--requestheader-uid-headers <headers>', "comma-separated headers naming the user's uid (default none)")
  .option('--requestheader-group-headers <headers>', "comma-separated headers naming the user's groups (default X-Remote-Group)")
  .option('--requestheader-extra-headers-prefix <prefixes>', "comma-separated prefixes of headers with the user's extra values (default X-Remote-Extra-)")
  .option('--console [bool]', 'serve the web console under /console/ (and print a one-time sign-in link)', (v: string) => goBool('--console', v), true)
  .option('--anonymous-auth [bool]', 'requests without credentials are system:anonymous (false: 401)', (v: string) => goBool('--anonymous-auth', v), true)
  .option('--service-account-issuer <url>', 'the issuer of the ServiceAccount tokens kapi issues (repeat: the first issues, all are accepted)', collect, [])
  .option('--service-account-signing-key-file <file>', 'the PEM private key ServiceAccount tokens are signed with (default: <data-dir>/pki/sa.key)')
  .option('--service-account-key-file <file>', 'a PEM file of more keys whose ServiceAccount tokens are accepted (repeatable)', collect, [])
  .option('--api-audiences <list>', 'comma-separated audiences a token must be meant for (default: the issuers)')
  .option('--service-account-max-token-expiration <duration>', 'the longest a requested ServiceAccount token lives')
  .option('--authorization-mode <mode>', 'RBAC (system:masters may do anything, others what their role bindings give) or AlwaysAllow', 'RBAC')
  .option('--service-cluster-ip-range <cidr>', "the IPv4 range Services' cluster IPs are allocated from", '10.0.0.0/24')
  .option('--service-node-port-range <range>', 'the ports NodePort Services are allocated from', '30000-32767')
  .option('--converters <module>', 'an ES module whose default export maps CRD names to TypeScript/JavaScript converters')
  .option('--enable-admission-plugins <names>', "admission plugins to run besides the default ones (kube-apiserver's names, comma-separated, repeatable)", collect, [])
  .option('--disable-admission-plugins <names>', 'default admission plugins not to run (comma-separated, repeatable)', collect, [])
  .option('--admission-control-config-file <file>', "an AdmissionConfiguration: admission plugins' configuration (kapi reads PodSecurity's defaults and exemptions)")
  .option('--runtime-config <key=value>', "built-in group versions to serve or not, as kube-apiserver's flag: api/all, api/ga, api/beta, api/alpha or <group>/<version>, =true or =false (comma-separated, repeatable); batch/v1beta1, policy/v1beta1 and discovery.k8s.io/v1beta1, which upstream removed and the 1.20 control plane lists, are off unless turned on", collect, [])
  .option('--controllers <names>', `kapi's controllers to run, as kube-controller-manager's flag: '*' all, 'name' that one, '-name' not that one (comma-separated, repeatable; the first mention of a name decides); names: ${CONTROLLER_NAMES.join(', ')}`, collect, [])
  .option('--admission-hooks <module>', 'an ES module whose default export is a list of admission hooks (webhook semantics, in the process)')
  .option('--resources <module>', 'an ES module whose default export is a list of resources defined with kapi/sdk (served with their strategies)')
  .option('--etcd-servers <urls>', 'store in etcd instead of the embedded store: comma-separated endpoints, e.g. http://127.0.0.1:2379')
  .option('--etcd-prefix <prefix>', 'the etcd key prefix, so several installations can share one etcd', '/registry')
  .option('--etcd-cafile <file>', 'CA certificate to verify the etcd servers with')
  .option('--etcd-certfile <file>', 'client certificate for etcd')
  .option('--etcd-keyfile <file>', 'client key for etcd')
  .option('--max-requests-inflight <n>', 'read-only requests served at once; more get 429 (0: no limit)', '400')
  .option('--max-mutating-requests-inflight <n>', 'mutating requests served at once; more get 429 (0: no limit)', '200')
  .option('--max-watches <n>', 'watches open at once; more get 429 (0: no limit)', '20000')
  .option('--watch-cache-decoded-objects <n>', 'objects the watch caches keep decoded, those read most lately; the others are kept as their JSON text, about half the memory, and decoded when read (0: all)', '50000')
  .option('--request-timeout <duration>', 'how long a request that is not a watch may take before it gets 504', '1m0s')
  .option('--min-request-timeout <seconds>', 'a watch without timeoutSeconds ends after a random time between this and twice this', '1800')
  .option('--audit-policy-file <file>', 'the audit policy (audit.k8s.io/v1 Policy); without it nothing is audited')
  .option('--audit-log-path <file>', "where audit events go, one JSON event per line ('-': standard output)")
  .option('-v, --v <level>', 'log verbosity; 2 and above log every request', '0')
  .action(async (opts: ServeOptions) => {
    const started = performance.now();
    const verbosity = count('--v', opts.v.replace(/^=/, '')); // klog's -v=2 reaches here as "=2"
    const limits = {
      maxRequestsInFlight: count('--max-requests-inflight', opts.maxRequestsInflight),
      maxMutatingRequestsInFlight: count('--max-mutating-requests-inflight', opts.maxMutatingRequestsInflight),
      maxWatches: count('--max-watches', opts.maxWatches),
      requestTimeoutMs: duration('--request-timeout', opts.requestTimeout),
      minRequestTimeoutSeconds: count('--min-request-timeout', opts.minRequestTimeout),
    };
    setDecodedObjectLimit(count('--watch-cache-decoded-objects', opts.watchCacheDecodedObjects));
    // Output whose reader went away (`kapi serve | head`, a log pipe whose supervisor died) fails without a
    // word: logging the failure would fail again, over and over. A broken stdout only silences it (an audit
    // log on `-` drops its events, as audit.ts says); a broken stderr, kapi's log (klog's stream), ends kapi
    // cleanly, as kube-apiserver ends on it (Go's SIGPIPE).
    let stdoutBroken = false;
    let stderrBroken = false;
    process.stdout.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') stdoutBroken = true;
    });
    process.stderr.on('error', (err: NodeJS.ErrnoException) => {
      if (stderrBroken || err.code !== 'EPIPE') return;
      stderrBroken = true;
      stopOnBrokenLog();
    });
    let stopOnBrokenLog: () => void = () => process.exit(1);
    // A failure that escaped its request is logged; the server stays up for every other client.
    process.on('unhandledRejection', (err) => stderrBroken || console.error('kapi: unhandled rejection:', err));
    process.on('uncaughtException', (err) => stderrBroken || console.error('kapi: uncaught exception:', err));
    const converters = opts.converters ? ((await importFile(opts.converters)).default as Record<string, ConvertFunction>) : undefined;
    const admissionHooks = opts.admissionHooks ? (await importFile(opts.admissionHooks)).default : undefined;
    if (admissionHooks !== undefined && !Array.isArray(admissionHooks)) throw new Error(`${opts.admissionHooks}: the default export must be a list of admission hooks`);
    const resources = opts.resources ? (await importFile(opts.resources)).default : undefined;
    if (resources !== undefined && !(Array.isArray(resources) && resources.every((r) => typeof r?.crd?.metadata?.name === 'string' && Array.isArray(r.versions)))) {
      throw new Error(`${opts.resources}: the default export must be a list of resources made with defineResource (kapi/sdk)`);
    }
    const kapi = await startKapi({
      dataDir: opts.dataDir,
      bindAddress: opts.bindAddress,
      port: Number(opts.securePort),
      tokenAuthFile: opts.tokenAuthFile,
      authorizationMode: authorizationMode(opts.authorizationMode),
      clientCAFile: opts.clientCaFile,
      proxyClientCertFile: opts.proxyClientCertFile,
      authenticationKubeconfig: opts.authenticationKubeconfig,
      coreKubeconfig: opts.kubeconfig,
      servingCertService: opts.servingCertService === undefined ? undefined : namespacedName('--serving-cert-service', opts.servingCertService),
      authorizationKubeconfig: opts.authorizationKubeconfig,
      proxyClientKeyFile: opts.proxyClientKeyFile,
      requestHeader: opts.requestheaderClientCaFile
        ? {
            clientCAFile: opts.requestheaderClientCaFile,
            allowedNames: list(opts.requestheaderAllowedNames),
            usernameHeaders: list(opts.requestheaderUsernameHeaders),
            uidHeaders: list(opts.requestheaderUidHeaders),
            groupHeaders: list(opts.requestheaderGroupHeaders),
            extraHeaderPrefixes: list(opts.requestheaderExtraHeadersPrefix),
          }
        : undefined,
      encryptionProviderConfig: opts.encryptionProviderConfig,
      tlsCertFile: opts.tlsCertFile,
      tlsPrivateKeyFile: opts.tlsPrivateKeyFile,
      tlsSans: commaList(opts.tlsSan),
      enableAdmissionPlugins: commaList(opts.enableAdmissionPlugins),
      disableAdmissionPlugins: commaList(opts.disableAdmissionPlugins),
      admissionControlConfigFile: opts.admissionControlConfigFile,
      runtimeConfig: opts.runtimeConfig.length > 0 ? parseRuntimeConfig(opts.runtimeConfig.join(',')) : undefined,
      builtinControllers: opts.controllers.length > 0 ? commaList(opts.controllers) : undefined,
      anonymousAuth: opts.anonymousAuth,
      console: opts.console,
      serviceAccountIssuers: opts.serviceAccountIssuer,
      serviceAccountSigningKeyFile: opts.serviceAccountSigningKeyFile,
      serviceAccountKeyFiles: opts.serviceAccountKeyFile,
      apiAudiences: opts.apiAudiences?.split(',').map((a) => a.trim()).filter(Boolean),
      serviceAccountMaxTokenExpirationSeconds:
        opts.serviceAccountMaxTokenExpiration === undefined ? undefined : Math.floor(duration('--service-account-max-token-expiration', opts.serviceAccountMaxTokenExpiration) / 1000),
      serviceClusterIPRange: opts.serviceClusterIpRange,
      serviceNodePortRange: opts.serviceNodePortRange,
      converters,
      admissionHooks,
      resources,
      limits,
      requestLog: verbosity >= 2 ? (line) => process.stderr.write(line) : undefined,
      auditPolicyFile: opts.auditPolicyFile,
      auditLogPath: opts.auditLogPath,
      storage: opts.etcdServers
        ? {
            kind: 'etcd',
            endpoints: opts.etcdServers.split(',').map((s) => s.trim()).filter(Boolean),
            prefix: opts.etcdPrefix,
            tls: opts.etcdCafile || opts.etcdCertfile ? { caFile: opts.etcdCafile, certFile: opts.etcdCertfile, keyFile: opts.etcdKeyfile } : undefined,
            compactIntervalMs: 5 * 60_000,
          }
        : undefined,
    });
    let stopping = false;
    const stop = (signal: string, code = 0) => {
      if (stopping) return;
      stopping = true;
      if (!stdoutBroken) console.log(`kapi: ${signal}, shutting down`);
      kapi.stop().then(
        () => process.exit(code),
        (err) => {
          if (!stderrBroken) console.error('kapi: shutdown failed:', err);
          process.exit(1);
        },
      );
    };
    process.on('SIGTERM', () => stop('SIGTERM'));
    process.on('SIGINT', () => stop('SIGINT'));
    stopOnBrokenLog = () => stop('log stream closed', 1);
    if (stderrBroken) stopOnBrokenLog();
    // Said once the signals are handled: whoever waits for these lines may stop kapi at once.
    if (!stdoutBroken) {
      console.log(`kapi serving on ${kapi.url} (ready in ${(performance.now() - started).toFixed(0)} ms)`);
      console.log(`export KUBECONFIG=${resolve(kapi.kubeconfigPath)}`);
      // The admin's one-time link goes to a terminal only, never into a log that keeps it.
      const link = process.stdout.isTTY ? kapi.consoleLink() : undefined;
      if (link) console.log(`console (a one-time sign-in link, good for 5 minutes): ${link}`);
      else if (opts.console) console.log(`console: ${kapi.url}/console/ (sign in with a bearer token, e.g. ${resolve(opts.dataDir, 'admin.token')})`);
    }
  });

program
  .command('migrate-storage <crd>')
  .description('rewrite every object of a CRD in its storage version, then trim status.storedVersions')
  .option('--kubeconfig <file>', 'kubeconfig of the server', process.env.KUBECONFIG ?? '.kapi/admin.kubeconfig')
  .action(async (crd: string, opts: { kubeconfig: string }) => {
    await migrateStorage(clientFromKubeconfig(opts.kubeconfig), crd, (line) => console.log(line));
  });

program
  .command('init [dir]')
  .description('make a TypeScript project of resources and controllers that depends on kapi (apiserver-boot init repo)')
  .requiredOption('--domain <domain>', 'the domain of the API groups (a group <g> becomes <g>.<domain>)')
  .option('--name <name>', 'the project name (default: the directory name)')
  .option('--kapi <spec>', "the project's kapi dependency: a version range, a tarball (npm pack) or a directory (default: as kapi is installed here)")
  .action((dir: string | undefined, opts: { domain: string; name?: string; kapi?: string }) => {
    const target = dir ?? '.';
    for (const f of initProject(target, opts)) process.stdout.write(`wrote ${f}\n`);
    process.stdout.write(`\nnext: cd ${target} && npm install && npx kapi create resource --group <g> --version v1 --kind <Kind>\n`);
  });

const create = program.command('create').description('add to a kapi project');
create
  .command('resource')
  .description('add a resource: its type and strategy, its controller and its test (apiserver-boot create group version resource)')
  .requiredOption('--group <group>', 'the group, without the domain')
  .requiredOption('--version <version>', 'the version, e.g. v1alpha1')
  .requiredOption('--kind <kind>', 'the kind, UpperCamelCase')
  .option('--cluster', "cluster-scoped objects, with no namespace (kubebuilder's --namespaced=false)")
  .option('--dir <dir>', 'the project directory', '.')
  .action((opts: { group: string; version: string; kind: string; cluster?: boolean; dir: string }) => {
    for (const f of createResource(opts.dir, opts)) process.stdout.write(`wrote ${f}\n`);
  });
create
  .command('api')
  .description('add another version of a resource, converted through its internal form (kubebuilder create api --version)')
  .requiredOption('--group <group>', 'the group, without the domain')
  .requiredOption('--kind <kind>', 'the kind')
  .requiredOption('--version <version>', 'the new version, e.g. v2')
  .option('--storage', 'store objects in this version')
  .option('--dir <dir>', 'the project directory', '.')
  .action((opts: { group: string; version: string; kind: string; storage?: boolean; dir: string }) => {
    for (const f of createApi(opts.dir, opts)) process.stdout.write(`wrote ${f}\n`);
  });

create
  .command('webhook')
  .description("stubs of a resource's defaulting and validation hooks, its admission webhooks in CRD mode (kubebuilder create webhook)")
  .requiredOption('--group <group>', 'the group, without the domain')
  .requiredOption('--kind <kind>', 'the kind')
  .option('--defaulting', 'a defaulting hook (a mutating webhook)')
  .option('--programmatic-validation', 'validation hooks for create and update (a validating webhook)')
  .option('--dir <dir>', 'the project directory', '.')
  .action((opts: { group: string; kind: string; defaulting?: boolean; programmaticValidation?: boolean; dir: string }) => {
    for (const f of createWebhook(opts.dir, opts)) process.stdout.write(`wrote ${f}\n`);
  });

program
  .command('build')
  .description('build parts of a kapi project')
  .command('config')
  .description("write the manifests that run the project on a cluster: apiserver, controller manager, RBAC, APIServices, etcd (apiserver-boot build config)")
  .requiredOption('--image <image>', 'the container image of the project (built from it, with kapi installed)')
  .option('--namespace <namespace>', 'where it runs (default: <name>-system)')
  .option('--storage <kind>', 'etcd (a StatefulSet; several apiserver replicas) or embedded (one replica on a PersistentVolumeClaim)', 'etcd')
  .option('--output <dir>', 'where the manifests go (default: ./config)')
  .option('--dir <dir>', 'the project directory', '.')
  .action((opts: { image: string; namespace?: string; storage: string; output?: string; dir: string }) => {
    if (opts.storage !== 'etcd' && opts.storage !== 'embedded') throw new Error(`--storage ${JSON.stringify(opts.storage)}: etcd or embedded`);
    for (const f of buildConfig(opts.dir, { ...opts, storage: opts.storage })) process.stdout.write(`wrote ${f}\n`);
  });

program
  .command('generate')
  .description('generate parts of a kapi project from its code')
  .command('manifests')
  .description('write the CRDs of its resources, the RBAC of its controllers and a kustomize layout to deploy its controller manager on any cluster (controller-gen; build the project first)')
  .option('--output <dir>', 'where the manifests go (default: ./config)')
  .option('--dir <dir>', 'the project directory', '.')
  .action(async (opts: { output?: string; dir: string }) => {
    for (const f of await generateManifests(opts.dir, opts)) process.stdout.write(`wrote ${f}\n`);
  });

// `kapi --version`, as `kube-apiserver --version` prints the Kubernetes version it serves as (a subcommand's own
// --version, such as `create resource --version v1`, is that subcommand's).
if (process.argv[2] === '--version') process.stdout.write(`Kubernetes ${KUBERNETES_VERSION.gitVersion}\n`);
else {
  program.parseAsync(process.argv).catch((err: Error) => {
    console.error(`kapi: ${err.message}`);
    process.exit(1);
  });
}
