/**
 * How the registry describes what serves an endpoint besides its store: a custom resource's
 * /scale mapping, an aggregated API server's address, and requests made inside the process.
 */
import type { OutgoingHttpHeaders } from 'node:http';

/** The /scale subresource of a custom resource: where the CRD's specReplicasPath, statusReplicasPath and labelSelectorPath point. */
export interface ScaleConfig {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}

/** An aggregated API server's backend, as the aggregator's proxy reaches it. */
export interface ProxyTarget {
  /** https://<address>:<port> of one of the Service's endpoints. */
  url: URL;
  /** The name the backend's certificate is checked for (`<service>.<namespace>.svc`). */
  servername: string;
  ca?: string;
  insecureSkipTLSVerify: boolean;
}

/** A request made inside the process (the loopback client's), served by the same handler as a network one. */
export interface LoopbackRequest {
  method: string;
  /** Path and query, as a request target. */
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
}

/** What the loopback client hears of the response, as it is written. */
export interface LoopbackSink {
  head(status: number, headers: OutgoingHttpHeaders): void;
  data(chunk: Buffer): void;
  end(): void;
}
