/**
 * The server's CPU per request by stage of the request path, read from a V8 CPU profile of `kapi serve`
 * (`--cpu-prof`), so that the server carries no instrumentation of its own: a stage not in use costs nothing
 * and shows as ~0. Each sample goes to the stage of the innermost frame of kapi's code on its stack, by the
 * source file the bundle's source map gives for it (table below); frames of Node.js itself (HTTP/2, TLS,
 * streams) count for the kapi stage that called them, or as `node: HTTP/2, TLS, streams` when no kapi frame is
 * on the stack (reading requests, sending answers). Garbage collection is a stage of its own.
 */
import { readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { dirname, join } from 'node:path';

/** The stages, each by the kapi source files (under src/) whose code it runs; the first match wins. */
const STAGES: Array<[stage: string, files: RegExp]> = [
  ['authentication', /^server\/(authn|request-header|impersonation|certs)\.ts$/],
  ['authorization', /^(server\/authz\.ts|apis\/rbac\/authorizer\.ts|apis\/rbac\/rules\.ts|kapi\/access\.ts)$/],
  ['audit', /^server\/audit\.ts$/],
  ['admission', /^(registry\/admission\.ts|apis\/admission-plugins\.ts|apis\/admissionregistration\/.*|apis\/.*\/admission\.ts)$/],
  ['decode', /^(server\/body\.ts|server\/handlers\/decode-object\.ts|server\/yaml-.*|server\/large-bodies\.ts|machinery\/json(-decoder)?\.ts|machinery\/yaml.*|machinery\/protobuf\/.*decode.*|schema\/builtin\/typed-json\.ts)$/],
  ['managed fields', /^apply\//],
  ['validation, defaulting, pruning', /^(schema\/|machinery\/(validation|object-meta|names|labels|label-.*|field-errors)\.ts|apis\/.*\/validation\.ts)/],
  ['watch cache and fan-out', /^cache\/|^server\/handlers\/watch\.ts$/],
  ['store and storage', /^(registry\/(store|registry|share-unchanged|json-memo|object-codec|storage-errors)\.ts|storage\/)/],
  ['encode and respond', /^(server\/(output|serializers|respond|negotiation|warnings)\.ts|machinery\/protobuf\/|machinery\/yaml-emit.*|printing\/)/],
  ['handlers (create, get, patch…)', /^(server\/handlers\/|registry\/(request-scope|subresources)\.ts|machinery\/(merge-patch|json-patch|strategic-merge-patch)\.ts)/],
  ['filters (routing, limits, metrics, log)', /^server\//],
];
const OTHER_KAPI = 'kapi, other';
const NODE = 'node: HTTP/2, TLS, streams';
const GC = 'garbage collection';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Maps a bundle's (url, line, column) to the src/-relative file it came from, through its source map. */
class SourceFiles {
  private readonly maps = new Map<string, SourceMap | null>();

  file(url: string, line: number, column: number): string | undefined {
    if (!url.startsWith('file://') || !url.includes('/dist/kapi')) return undefined;
    let map = this.maps.get(url);
    if (map === undefined) {
      try {
        const path = new URL(url).pathname;
        map = new SourceMap(JSON.parse(readFileSync(`${path}.map`, 'utf8')) as ConstructorParameters<typeof SourceMap>[0]);
        this.dirs.set(url, dirname(path));
      } catch {
        map = null;
      }
      this.maps.set(url, map);
    }
    if (!map) return undefined;
    const entry = map.findEntry(line, column) as { originalSource?: string };
    const source = entry.originalSource;
    if (!source) return undefined;
    const at = source.lastIndexOf('/src/');
    return at >= 0 ? source.slice(at + 5) : join(this.dirs.get(url) ?? '', source);
  }

  private readonly dirs = new Map<string, string>();
}

/**
 * Per stage, the CPU (µs) the main thread spent in each window [from, to) of the profile's clock (µs). With
 * `detail`, also per stage and window the frames that decided the stage (`function file:line`), with their µs.
 */
export function stagesOf(
  profilePath: string,
  windows: Array<{ from: number; to: number }>,
  detail?: Array<Map<string, Map<string, number>>>,
): Array<Map<string, number>> {
  const p = JSON.parse(readFileSync(profilePath, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const sources = new SourceFiles();
  const stageOfNode = new Map<number, string | null>();
  const deciderOfNode = new Map<number, string>();
  const stageOfFrame = (n: ProfileNode): string | undefined => {
    const f = n.callFrame;
    const file = sources.file(f.url, f.lineNumber, f.columnNumber);
    if (file === undefined) return undefined;
    for (const [stage, files] of STAGES) if (files.test(file)) return stage;
    return OTHER_KAPI;
  };
  /** The stage of a sample's leaf node: its innermost kapi frame's (kapi's own helpers count for their caller's stage). */
  const stageOf = (id: number): string | null => {
    let known = stageOfNode.get(id);
    if (known !== undefined) return known;
    const leaf = byId.get(id)!.callFrame.functionName;
    if (leaf === '(idle)') known = null;
    else if (leaf === '(garbage collector)') known = GC;
    else {
      let fallback: string | undefined;
      for (let x: number | undefined = id; x !== undefined; x = parent.get(x)) {
        const s = stageOfFrame(byId.get(x)!);
        if (s === OTHER_KAPI) fallback ??= s;
        else if (s !== undefined) {
          known = s;
          if (detail) {
            const f = byId.get(x)!.callFrame;
            deciderOfNode.set(id, `${f.functionName || '(anonymous)'} ${sources.file(f.url, f.lineNumber, f.columnNumber)}`);
          }
          break;
        }
      }
      known ??= fallback ?? NODE;
    }
    stageOfNode.set(id, known);
    return known;
  };
  const out = windows.map(() => new Map<string, number>());
  let t = p.startTime;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i];
    const dt = p.timeDeltas[i + 1] ?? 0;
    const w = windows.findIndex((win) => t >= win.from && t < win.to);
    if (w < 0) continue;
    const stage = stageOf(p.samples[i]);
    if (stage === null) continue;
    out[w].set(stage, (out[w].get(stage) ?? 0) + dt);
    if (detail) {
      const frames = (detail[w] ??= new Map()).get(stage) ?? new Map<string, number>();
      detail[w].set(stage, frames);
      const frame = deciderOfNode.get(p.samples[i]) ?? byId.get(p.samples[i])!.callFrame.functionName;
      frames.set(frame, (frames.get(frame) ?? 0) + dt);
    }
  }
  return out;
}
