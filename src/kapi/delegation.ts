/**
 * The Complete step of a start: what kapi behind an aggregator takes from its core cluster before it can serve.
 * The clients of the core cluster's reviews (--authentication-kubeconfig, --authorization-kubeconfig), its
 * request-header settings and client CAs when no --requestheader-client-ca-file names them (read now, then
 * followed), and its namespaces (--core-kubeconfig). Without those options it completes to nothing.
 */
import type { KObject } from '../api/object.js';
import { errors, StatusError } from '../machinery/status.js';
import type { Client } from '../sdk/client.js';
import { Informer } from '../sdk/informer.js';
import { connect } from '../sdk/kubeconfig.js';
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
  const coreClient = options.coreKubeconfig ? connect({ kubeconfig: options.coreKubeconfig, userAgent: 'kapi/core-namespaces' }) : undefined;
  let coreNamespaceInformer: Informer | undefined;
  const delegation: Delegation = {
    authenticationCore,
    authorizationCore,
    requestHeader: options.requestHeader,
    close() {
      for (const informer of [delegation.requestHeaderInformer, coreNamespaceInformer]) informer?.stop();
      for (const client of [authenticationCore, authorizationCore, coreClient]) client?.close();
    },
  };
  try {
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
