/**
 * Large requests in slices. kapi serves every client on one event loop: a request whose body is large (32 KiB
 * or more: a few milliseconds of work per step) is decoded, admitted, validated, stored and encoded in steps,
 * with a turn of the loop between two steps (`setImmediate`: after pending I/O), so that other clients'
 * requests are served between them instead of waiting for the whole. Smaller requests never wait.
 */
export const SLICED_BODY_BYTES = 32 * 1024;

/** Bodies of this size and more (apiserver's 99th percentile of object sizes) also take turns with each other (server/large-bodies.ts). */
export const LARGE_BODY_BYTES = 256 * 1024;

/** Whether a request of this body is worked through in slices. */
export function isLarge(bytes: number | undefined): boolean {
  return bytes !== undefined && bytes >= SLICED_BODY_BYTES;
}

const waiting: Array<() => void> = [];
let released = false;

/**
 * A turn of the event loop: I/O runs before the promise settles. Waiting steps go on one at a time, each
 * in a loop iteration of its own and in the order they came, so that six large requests in flight hold
 * the loop for one step between two polls of I/O, not for six.
 */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => {
    waiting.push(resolve);
    if (!released) {
      released = true;
      setImmediate(releaseOne);
    }
  });
}

function releaseOne(): void {
  const next = waiting.shift();
  // Queued from within an immediate, the next release runs in the next iteration of the loop, after its poll.
  if (waiting.length > 0) setImmediate(releaseOne);
  else released = false;
  next?.();
}

/**
 * A computation that may pause: each `yield` marks a point between two steps. Run whole (`runSteps`) it
 * costs what a plain function does; a large request runs it with a turn of the loop at each pause
 * (`runStepsInTurns`), so that one long computation (managed fields of 60,000 keys) is several short ones.
 */
export type Steps<T> = Generator<void, T, void>;

/** A value as steps that end at once. */
export function* noSteps<T>(value: T): Steps<T> {
  return value;
}

/** Run `steps` to the end without pausing. */
export function runSteps<T>(steps: Steps<T>): T {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/** Run `steps` with a turn of the loop (nextTurn) at each pause. */
export async function runStepsInTurns<T>(steps: Steps<T>): Promise<T> {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
    await nextTurn();
  }
}

/**
 * Turns by key: work on one key runs one at a time, in the order it asked, while other keys go on (a per-key chain
 * of promises; a key's entry goes once its last turn ends).
 */
export class KeyedTurns {
  private readonly last = new Map<string, Promise<void>>();

  /** Waits for the key's earlier turns; the function given back ends this one (call it once, in a finally). */
  async take(key: string): Promise<() => void> {
    const before = this.last.get(key);
    let end!: () => void;
    const mine = new Promise<void>((resolve) => (end = resolve));
    const chained = before ? before.then(() => mine) : mine;
    this.last.set(key, chained);
    await before;
    return () => {
      end();
      if (this.last.get(key) === chained) this.last.delete(key);
    };
  }
}
