/**
 * Duplicate object keys in a JSON text, reported like sigs.k8s.io/json's strict
 * decoding (`duplicate field "name"`, the bare key, in document order) for
 * fieldValidation=Strict|Warn. The text is assumed to be valid JSON.
 */
import { goQuote } from '../machinery/go-text.js';

export function findDuplicateFields(text: string): string[] {
  const out: string[] = [];
  // One entry per open container: the keys seen (objects) or null (arrays).
  const stack: (Set<string> | null)[] = [];
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      let j = i + 1;
      let escaped = false;
      while (j < text.length) {
        const d = text.charCodeAt(j);
        if (d === 0x5c) {
          escaped = true;
          j += 2;
          continue;
        }
        if (d === 0x22) break;
        j++;
      }
      const top = stack[stack.length - 1];
      if (expectKey && top) {
        const raw = text.slice(i + 1, j);
        let key = raw;
        if (escaped) {
          try {
            key = JSON.parse(text.slice(i, j + 1)) as string;
          } catch {
            key = raw;
          }
        }
        if (top.has(key)) out.push(`duplicate field ${goQuote(key)}`);
        else top.add(key);
        expectKey = false;
      }
      i = j;
    } else if (c === 0x7b /* { */) {
      stack.push(new Set());
      expectKey = true;
    } else if (c === 0x5b /* [ */) {
      stack.push(null);
      expectKey = false;
    } else if (c === 0x7d || c === 0x5d) {
      stack.pop();
      expectKey = false;
    } else if (c === 0x2c /* , */) {
      expectKey = stack[stack.length - 1] !== null && stack.length > 0;
    }
  }
  return out;
}
