/**
 * kapi as a library (package `kapi`): start the API server in the process, with the same options as
 * `kapi serve`, and talk to it with an SDK client. The SDK (resources defined in TypeScript, the controller
 * runtime) is `kapi/sdk`; the test server is `kapi/testing`.
 */
import { startKapi } from './kapi/index.js';
import type { ServerOptions } from './kapi/options.js';
import { Client } from './sdk/client.js';

export type { AdmissionHook, AdmissionHookResponse } from './apis/admissionregistration/webhook-admission.js';
export type { Attributes as AuthorizationAttributes, Authorizer, Decision as AuthorizationDecision } from './api/authorization.js';
export type { ConvertFunction } from './crd/conversion/index.js';
export type { StorageConfig } from './storage/index.js';

export type { ServerOptions } from './kapi/options.js';

/** A running kapi. */
export interface Server {
  /** https://127.0.0.1:<port> */
  url: string;
  /** The port it listens on (the one chosen when `port` was 0). */
  port: number;
  /** An admin kubeconfig for kubectl and other clients. */
  kubeconfigPath: string;
  /** The admin user's bearer token (kapi-admin, in system:masters; kept in <dataDir>/admin.token). */
  adminToken: string;
  /** The CA that signed the serving certificate (PEM). */
  caCertPem: string;
  /** An admin client that calls the server in the process (no network). */
  client(userAgent?: string): Client;
  /** Stops serving and closes the store; resolves when all is closed. */
  stop(): Promise<void>;
}

/** Starts kapi in this process; resolves once it serves. */
export async function start(options: ServerOptions = {}): Promise<Server> {
  const kapi = await startKapi(options);
  return {
    url: kapi.url,
    port: kapi.port,
    kubeconfigPath: kapi.kubeconfigPath,
    adminToken: kapi.adminToken,
    caCertPem: kapi.caCertPem,
    client: (userAgent = 'kapi-sdk') => new Client((request, sink) => kapi.loopback(request, sink, false), kapi.adminToken, userAgent),
    stop: () => kapi.stop(),
  };
}
