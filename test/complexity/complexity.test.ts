/**
 * The complexity suite: every path where the size of a request meets an algorithm (bench/lib/shapes.ts),
 * sent to a real `kapi serve` at size n and 8n. The time may grow about linearly with the bytes the request
 * and its answer carry, never more; and while the big one runs, /healthz on another connection is answered
 * throughout (the one event loop is never held for long). A quadratic step shows as a ratio near 64.
 *
 * Times are compared with each other, never with a fixed figure; each is the best of a few tries, so that
 * another process on the machine cannot make a linear step look quadratic.
 */
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { after, before, describe, it } from 'node:test';
import { BenchClient } from '../../bench/lib/client.js';
import { startServer, type ServerProcess } from '../../bench/lib/server-process.js';
import { prepare, SHAPES, type Shape, type ShapeClient } from '../../bench/lib/shapes.js';

/** How much faster than linear in its bytes a request's time may grow from n to 8n before it counts as superlinear. */
const MAX_EXCESS = 3;
/** The longest /healthz may always wait while the big request runs (ms); beyond it, at most half the request. */
const HELD_FLOOR_MS = 250;
/** How often /healthz is asked while a big request runs (ms between answers). */
const HEALTH_PROBE_MS = 10;

interface Timed {
  ms: number;
  bytes: number;
  status: number;
  healthMaxMs: number;
}

/** A client of the shapes' kind over one HTTP/2 connection. */
function shapeClient(server: ServerProcess): ShapeClient & { close(): void } {
  const c = new BenchClient(server.url, server.token, server.ca, 1);
  return {
    async request(method, path, body, headers = {}) {
      const r = await c.requestBytes(method, path, body, headers);
      return { status: r.status, body: r.body };
    },
    close: () => c.close(),
  };
}

describe('complexity: time grows linearly with the request, and /healthz stays answered', () => {
  let server: ServerProcess & { cleanup(): void };
  let client: ShapeClient & { close(): void };
  let probe: BenchClient;
  let baselineHealthMs = 0;

  before(async () => {
    server = await startServer();
    client = shapeClient(server);
    probe = new BenchClient(server.url, server.token, server.ca, 1);
    await prepare(client);
    const samples: number[] = [];
    for (let i = 0; i < 20; i++) {
      const t = performance.now();
      assert.equal((await probe.request('GET', '/healthz')).status, 200);
      samples.push(performance.now() - t);
    }
    baselineHealthMs = samples.sort((a, b) => a - b)[10];
  });
  after(async () => {
    client?.close();
    probe?.close();
    await server?.stop();
    server?.cleanup();
  });

  /** One request of the shape at size n, with /healthz asked every few ms on another connection meanwhile. */
  async function timed(shape: Shape, n: number): Promise<Timed> {
    const req = shape.request(n);
    let running = true;
    let healthMaxMs = 0;
    const prober = (async () => {
      while (running) {
        const t = performance.now();
        await probe.request('GET', '/healthz');
        healthMaxMs = Math.max(healthMaxMs, performance.now() - t);
        await new Promise((r) => setTimeout(r, HEALTH_PROBE_MS));
      }
    })();
    const t = performance.now();
    const r = await client.request(req.method, req.path, req.body, req.headers);
    const ms = performance.now() - t;
    running = false;
    await prober;
    const bytes = (req.body?.length ?? 0) + req.path.length + r.body.length;
    assert.ok(shape.expect.includes(r.status), `${shape.name} at ${n}: ${r.status} ${r.body.toString().slice(0, 400)}`);
    return { ms, bytes, status: r.status, healthMaxMs };
  }

  const best = (a: Timed, b: Timed) => (b.ms < a.ms ? b : a);

  for (const shape of SHAPES) {
    it(shape.name, async () => {
      // A connection of its own: a shape that ends its connection (a refused request) leaves the others be.
      client?.close();
      client = shapeClient(server);
      const small = shape.n;
      const big = 8 * shape.n;
      await shape.setup?.(client, small);
      await shape.setup?.(client, big);
      // The first of a kind runs while V8 compiles its code: a warm-up at the small size first.
      await timed(shape, small);
      let s = best(await timed(shape, small), await timed(shape, small));
      let b = await timed(shape, big);
      const excess = () => b.ms / s.ms / (b.bytes / s.bytes);
      // Noise (another process, a collection) makes a time longer, never shorter: try again before judging.
      for (let i = 0; i < 2 && excess() > MAX_EXCESS; i++) {
        s = best(s, await timed(shape, small));
        b = best(b, await timed(shape, big));
      }
      const figures = `n: ${s.ms.toFixed(1)} ms for ${s.bytes} bytes; 8n: ${b.ms.toFixed(1)} ms for ${b.bytes} bytes; /healthz waited at most ${b.healthMaxMs.toFixed(1)} ms (alone: ${baselineHealthMs.toFixed(1)} ms)`;
      assert.ok(excess() <= MAX_EXCESS, `superlinear: ${figures}`);
      // The loop is never held for most of a long request: /healthz is answered while it runs.
      // (A step of the big request may hold it for a while, on a busy machine some hundred ms: not for most of the request.)
      assert.ok(b.healthMaxMs <= Math.max(b.ms / 2, 20 * baselineHealthMs, HELD_FLOOR_MS), `the event loop was held: ${figures}`);
    });
  }
});
