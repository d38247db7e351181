/**
 * The Complete step of a start: what kapi behind an aggregator takes from its core cluster before it can serve.
 * The clients of the core cluster's reviews (--authentication-kubeconfig, --authorization-kubeconfig), its
 * request-header settings and client CAs when no --requestheader-client-ca-file names them (read now, then
 * followed), its namespaces (--kubeconfig), and the certificate kapi serves to its aggregator when the core cluster
 * keeps it (--serving-cert-service). Without those options it completes to nothing.
 */
import type { KObject } from '../api/object.js';
import { errors, StatusError } from '../machinery/status.js';
import type { Client } from '../sdk/client.js';
import { Informer } from '../sdk/informer.js';
import { connect } from '../sdk/kubeconfig.js';
import { provisionWebhookCertificate, updateOnConflict, type SelfSignedWebhooks } from '../sdk/webhooks.js';
import type { ServerConfig } from './config.js';
import { clientCAsFromConfigMap, EXTENSION_AUTHENTICATION, requestHeaderAuthentication, requestHeaderFromConfigMap } from './core-cluster.js';
import type { HttpServer } from '../server/server.js';
import type { KapiOptions } from './options.js';

export interface Delegation {
  /** The core cluster's TokenReviews. */
  authenticationCore?: Client;
  /** The core cluster's SubjectAccessReviews. */
  authorizationCore?: Client;
  /** The request-header settings in force: the options', else the core cluster's. */
  requestHeader?: KapiOptions['requestHeader'];
  /** kube-system/extension-apiserver-authentication of the core cluster, followed while serving. */
  requestHeaderInformer?: Informer;
  /** A namespace of the core cluster by name (read through its cache). */
  coreNamespaces?: (name: string) => Promise<KObject>;
  /** --serving-cert-service: the certificate to serve (its CA in the APIServices that route here), checked while serving. */
  servingCertificate?: CoreServingCertificate;
  /** Closes the clients and watches (a start that fails later, or a stop). */
  close(): void;
}

/**
 * Connects to the core cluster as the options say, and completes `config` with its settings (the CAs are added
 * to config.clientCAs and config.frontProxyCAs). A core cluster that does not answer fails the start, with
 * everything opened closed again.
 */
export async function completeDelegation(options: KapiOptions, config: ServerConfig): Promise<Delegation> {
  const { warn, clientCAs, frontProxyCAs } = config;
  const authenticationCore = options.authenticationKubeconfig ? connect({ kubeconfig: options.authenticationKubeconfig, userAgent: 'kapi/delegated-authentication' }) : undefined;
  const authorizationCore = options.authorizationKubeconfig ? connect({ kubeconfig: options.authorizationKubeconfig, userAgent: 'kapi/delegated-authorization' }) : undefined;
  if (options.servingCertService && !options.coreKubeconfig) throw new Error('--serving-cert-service needs --kubeconfig: the core cluster that keeps the certificate');
  if (options.servingCertService && options.tlsCertFile) throw new Error('--serving-cert-service and --tls-cert-file both name the certificate to serve: give one');
  const coreClient = options.coreKubeconfig ? connect({ kubeconfig: options.coreKubeconfig, userAgent: 'kapi/core-cluster' }) : undefined;
  let coreNamespaceInformer: Informer | undefined;
  const delegation: Delegation = {
    authenticationCore,
    authorizationCore,
    requestHeader: options.requestHeader,
    close() {
      delegation.servingCertificate?.stop();
      for (const informer of [delegation.requestHeaderInformer, coreNamespaceInformer]) informer?.stop();
      for (const client of [authenticationCore, authorizationCore, coreClient]) client?.close();
    },
  };
  try {
    if (options.servingCertService && coreClient) delegation.servingCertificate = await coreServingCertificate(coreClient, options.servingCertService, warn);
    // Without --requestheader-client-ca-file: the core cluster's settings (it must answer, as upstream: a missing
    // ConfigMap is no settings), then followed as its ConfigMap changes.
    if (!delegation.requestHeader && authenticationCore) {
      const configmaps = authenticationCore.resource({ group: '', version: 'v1', resource: 'configmaps' });
      const initial = await configmaps.get('kube-system', EXTENSION_AUTHENTICATION).catch((err: unknown) => {
        if (err instanceof StatusError && err.code === 404) return undefined;
        throw new Error(`reading kube-system/${EXTENSION_AUTHENTICATION} of the core cluster: ${(err as Error).message}`);
      });
      const fromCore = requestHeaderFromConfigMap(initial);
      const coreClientCAs = options.clientCAFile ? [] : clientCAsFromConfigMap(initial);
      if (fromCore === 'invalid' || coreClientCAs === 'invalid') {
        throw new Error(`kube-system/${EXTENSION_AUTHENTICATION} of the core cluster holds settings that do not parse`);
      }
      if (fromCore) {
        delegation.requestHeader = fromCore.options;
        frontProxyCAs.push(...fromCore.cas);
      }
      // Without --client-ca-file, the CAs of the core cluster's users' certificates are its client-ca-file (as upstream).
      clientCAs.push(...coreClientCAs);
      delegation.requestHeaderInformer = new Informer(configmaps, {}, {
        namespace: 'kube-system',
        fieldSelector: `metadata.name=${EXTENSION_AUTHENTICATION}`,
        onError: (err) => warn(`kapi: ${EXTENSION_AUTHENTICATION}: ${(err as Error).message}`),
      });
      await delegation.requestHeaderInformer.start();
    }
    // The core cluster's namespaces (an aggregated server): a cache of them, read through when it has not seen one yet.
    if (coreClient) {
      const nsClient = coreClient.resource({ group: '', version: 'v1', resource: 'namespaces' });
      const informer = new Informer(nsClient, {}, { onError: (err) => warn(`kapi: core namespaces: ${(err as Error).message}`) });
      coreNamespaceInformer = informer;
      await informer.start();
      delegation.coreNamespaces = async (name) => {
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
  } catch (err) {
    delegation.close();
    throw err;
  }
  return delegation;
}

/**
 * While serving: the core cluster's request-header settings changed, and the server authenticates (and asks for
 * certificates) by the new ones. Settings that do not parse, or a ConfigMap deleted, leave the last good ones in force.
 */
export function followCoreRequestHeader(delegation: Delegation, options: KapiOptions, config: ServerConfig, http: HttpServer): void {
  const informer = delegation.requestHeaderInformer;
  if (!informer) return;
  const { tls, clientCAs, frontProxyCAs, warn } = config;
  const ownCAs = [tls.caCertPem, ...(options.clientCAFile ? clientCAs : [])];
  let applied = JSON.stringify([delegation.requestHeader ? [delegation.requestHeader, frontProxyCAs] : null, options.clientCAFile ? [] : clientCAs]);
  let trusted = delegation.requestHeader !== undefined;
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

/** The certificate kapi serves to the core cluster's aggregator (--serving-cert-service), and its CA. */
export interface CoreServingCertificate {
  certPem: string;
  keyPem: string;
  caPem: string;
  /** Told of each renewal while serving (a new pair from the Secret). */
  onRenewed?: (pair: { certPem: string; keyPem: string }) => void;
  stop(): void;
}

/** How often the Secret is checked (renewed there when due): as the SDK's self-signed webhooks. */
const SERVING_CERT_RECHECK_MS = 60 * 60 * 1000;

type ApiServiceSpec = { caBundle?: string; insecureSkipTLSVerify?: boolean; service?: { namespace?: string; name?: string } };

/**
 * The serving certificate from its Secret in the core cluster (made there by the first replica), its CA written
 * into the APIServices that route to the Service, and then followed: APIServices that appear or lose the caBundle
 * get it again, and the Secret is checked hourly for a renewal. An APIService kapi cannot write (gone meanwhile, or
 * not in its rights) is warned about and skipped: it never stops the start or the others.
 */
async function coreServingCertificate(client: Client, service: { namespace: string; name: string }, warn: (message: string) => void): Promise<CoreServingCertificate> {
  const apiServices = client.resource({ group: 'apiregistration.k8s.io', version: 'v1', resource: 'apiservices' });
  const routedHere = (o: KObject) => {
    const target = (o.spec as ApiServiceSpec | undefined)?.service;
    return target?.namespace === service.namespace && target.name === service.name;
  };
  // The same names on every replica, so that they share one certificate: the Service's, and the loopback's for
  // clients on the Pod (the aggregator asks for <name>.<namespace>.svc).
  const selfSigned: SelfSignedWebhooks = { service, hosts: ['127.0.0.1', 'localhost'] };
  const cert: CoreServingCertificate = { ...(await provisionWebhookCertificate(client, selfSigned)), stop: () => {} };
  const caBundle = () => Buffer.from(cert.caPem).toString('base64');
  const needsCA = (o: KObject) => {
    const spec = (o.spec ?? {}) as ApiServiceSpec;
    return routedHere(o) && (spec.caBundle !== caBundle() || spec.insecureSkipTLSVerify === true);
  };
  /** Writes the CA into one APIService (read again on a conflict; nothing when it is gone). */
  const inject = (name: string): Promise<void> =>
    updateOnConflict(apiServices, name, (o) => {
      if (!needsCA(o)) return false;
      const spec = o.spec as ApiServiceSpec;
      // The CA verifies the server from now on: no longer skipped (the two may not go together).
      delete spec.insecureSkipTLSVerify;
      spec.caBundle = caBundle();
      return true;
    }).catch((err: unknown) => {
      if (!(err instanceof StatusError) || err.code !== 404) throw err;
    });
  const injectAll = async (objects: readonly KObject[]) => {
    for (const o of objects.filter(needsCA)) {
      const name = String(o.metadata.name);
      await inject(name).catch((err: Error) => warn(`kapi: writing the caBundle of APIService ${name}: ${err.message}`));
    }
  };
  await injectAll((await apiServices.list(undefined)).items);
  const informer = new Informer(apiServices, {}, { onError: (err) => warn(`kapi: APIServices of the core cluster: ${(err as Error).message}`) });
  const follow = (o: KObject) => void injectAll([o]);
  const renew = async () => {
    const next = await provisionWebhookCertificate(client, selfSigned);
    if (next.certPem !== cert.certPem) {
      Object.assign(cert, next);
      cert.onRenewed?.(next);
    }
    await injectAll(informer.list());
  };
  const timer = setInterval(() => {
    renew().catch((err: Error) => warn(`kapi: checking the serving certificate in Secret ${service.namespace}/${service.name}-cert: ${err.message}`));
  }, SERVING_CERT_RECHECK_MS);
  timer.unref();
  cert.stop = () => {
    clearInterval(timer);
    informer.stop();
  };
  informer.addHandlers({ added: follow, updated: (o) => follow(o) });
  await informer.start().catch((err: unknown) => {
    cert.stop();
    throw err;
  });
  return cert;
}
