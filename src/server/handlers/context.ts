/** What a resource handler gets: the request, where it points, and the endpoint serving it. */
import type { Endpoint } from '../../registry/registry.js';
import type { KObject } from '../../registry/types.js';
import type { Request } from '../exchange.js';
import type { Negotiated } from '../negotiation.js';
import type { ResourceRequest } from '../request-info.js';
import type { Response } from '../exchange.js';
import type { UserInfo } from '../authn.js';

/** Checks run before an object is written (NamespaceLifecycle and the like). */
export type Admission = (ctx: HandlerContext, obj: KObject | undefined) => Promise<void>;

export interface HandlerContext {
  req: Request;
  res: Response;
  info: ResourceRequest;
  query: URLSearchParams;
  endpoint: Endpoint;
  output: Negotiated;
  user?: UserInfo;
  warnings: string[];
  admit: Admission;
  /** --min-request-timeout: a watch without timeoutSeconds ends after 1 to 2 times this. */
  minRequestTimeoutSeconds: number;
  /** The request body as JSON text, once read (duplicate-field detection). */
  rawBody?: string;
}

/** `<group>/<version>`, or just the version for the core group. */
export function groupVersion(group: string, version: string): string {
  return group ? `${group}/${version}` : version;
}
