/** What a resource handler gets: the request, where it points, and the endpoint serving it. */
import { protobufStruct } from '../../machinery/protobuf/objects.js';
import type { AdmissionChain } from '../../registry/admission.js';
import type { Endpoint, ServedResource } from '../../registry/registry.js';
import type { Request } from '../exchange.js';
import type { Negotiated } from '../negotiation.js';
import type { ResourceRequest } from '../request-info.js';
import type { Response } from '../exchange.js';
import type { UserInfo } from '../../api/authentication.js';


/** `E`: the endpoint (a stored resource's, unless the handler serves any). */
export interface HandlerContext<E extends ServedResource = Endpoint> {
  req: Request;
  res: Response;
  info: ResourceRequest;
  query: URLSearchParams;
  endpoint: E;
  output: Negotiated;
  user?: UserInfo;
  warnings: string[];
  /** Annotations for this request's audit event (admission's). */
  auditAnnotations?: Record<string, string>;
  /** The admission chain the store runs on this request's writes. */
  admission?: AdmissionChain;
  /** --min-request-timeout: a watch without timeoutSeconds ends after 1 to 2 times this. */
  minRequestTimeoutSeconds: number;
  /** Made inside the process (a loopback request of the server's controllers). */
  loopback?: boolean;
  /** The request body as JSON text, once read (duplicate-field detection). */
  rawBody?: string;
  /** The request body's size, once read: a large one is worked through in slices (util/turns.ts). */
  bodyBytes?: number;
  /** The endpoints of other resources (a pod's eviction reads PodDisruptionBudgets). */
  lookup?: (group: string, version: string, resource: string) => Endpoint | undefined;
}

/** `<group>/<version>`, or just the version for the core group. */
export function groupVersion(group: string, version: string): string {
  return group ? `${group}/${version}` : version;
}

const builtinStructs = new WeakMap<ServedResource, string | null>();

/** The Go struct (go-types.ts) of an endpoint's kind; undefined for a custom resource. */
export function builtinStruct(endpoint: ServedResource): string | undefined {
  let id = builtinStructs.get(endpoint);
  if (id === undefined) {
    id = (endpoint.scope.protobuf && protobufStruct(groupVersion(endpoint.group, endpoint.version), endpoint.names.kind)) || null;
    builtinStructs.set(endpoint, id);
  }
  return id ?? undefined;
}

/** Whether an endpoint's kind has a protobuf message: a built-in kind, not a custom resource. */
export function servesProtobuf(endpoint: ServedResource): boolean {
  return builtinStruct(endpoint) !== undefined;
}
