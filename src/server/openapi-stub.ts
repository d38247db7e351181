/**
 * A placeholder /openapi/v2 and /openapi/v3 until schemas are published
 * (issue 5): an OpenAPI document with no definitions, so that clients which
 * validate against it (kubectl 1.20 fetches the protobuf form before every
 * apply) find no schema to check and carry on.
 */
import type { Response } from './respond.js';

/** gnostic openapi_v2.Document with only `swagger: "2.0"` (field 1) and info {title (1), version (2)}. */
function protoDocument(): Buffer {
  const str = (field: number, s: string) => {
    const b = Buffer.from(s);
    return Buffer.concat([Buffer.from([(field << 3) | 2, b.length]), b]);
  };
  const info = Buffer.concat([str(1, 'Kubernetes'), str(2, 'v1.32.0')]);
  return Buffer.concat([str(1, '2.0'), Buffer.from([(2 << 3) | 2, info.length]), info]);
}

const PROTO = protoDocument();
const JSON_V2 = JSON.stringify({ swagger: '2.0', info: { title: 'Kubernetes', version: 'v1.32.0' }, paths: {}, definitions: {} });

export function serveOpenApiStub(path: string, accept: string | undefined, res: Response): boolean {
  if (path === '/openapi/v2') {
    if (accept?.includes('protobuf')) {
      res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': PROTO.length });
      res.end(PROTO);
    } else {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(JSON_V2) });
      res.end(JSON_V2);
    }
    return true;
  }
  if (path === '/openapi/v3') {
    const body = JSON.stringify({ paths: {} });
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': body.length });
    res.end(body);
    return true;
  }
  return false;
}
