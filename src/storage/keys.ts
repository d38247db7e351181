/** Key-range helpers shared by the backends and the watch cache. */

/** The smallest string greater than every string that starts with prefix ('' when there is none). */
export function prefixEnd(prefix: string): string {
  for (let i = prefix.length - 1; i >= 0; i--) {
    const code = prefix.charCodeAt(i);
    if (code < 0xffff) return prefix.slice(0, i) + String.fromCharCode(code + 1);
  }
  return '';
}

/** Is key inside [start, end)? An empty end means no upper bound. */
export function inRange(key: string, start: string, end: string): boolean {
  return key >= start && (end === '' || key < end);
}
