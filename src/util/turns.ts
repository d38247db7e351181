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

/** A turn of the event loop: I/O and other requests' steps run before the promise settles. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
