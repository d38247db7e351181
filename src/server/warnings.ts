/**
 * Warning response headers as apiserver's warning recorder writes them
 * (`endpoints/filters/warning.go`, `util/net.NewWarningHeader`):
 * - each text once, in the order first given;
 * - a text holding a control character (C0, DEL, C1) or invalid UTF-8 (a lone
 *   surrogate here) is dropped, as NewWarningHeader refuses it;
 * - once the texts pass 4,096 characters in all, every text is cut to 256
 *   characters, and texts are added while the total stays under 4,096;
 * - the quoted text escapes only `"` and `\`, and goes out as UTF-8 bytes.
 *
 * Node writes header values as Latin-1, one byte per character, and refuses
 * anything above U+00FF: each value is returned as its UTF-8 bytes spelled in
 * Latin-1, so that HTTP/1.1 and HTTP/2 both send the UTF-8 upstream sends.
 */

const TRUNCATE_AT_TOTAL = 4 * 1024;
const TRUNCATE_ITEM = 256;

// C0 controls, DEL, C1 controls (Go's unicode.IsControl), and lone surrogates.
const REFUSED = /[\u0000-\u001f\u007f-\u009f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const ASCII = /^[\u0020-\u007e]*$/;

/** Characters counted as Go counts runes: a surrogate pair is one. */
function runeLength(s: string): number {
  if (ASCII.test(s)) return s.length;
  let n = 0;
  for (const _ of s) n++;
  return n;
}

function truncate(s: string): { text: string; runes: number } {
  const runes = runeLength(s);
  if (runes <= TRUNCATE_ITEM) return { text: s, runes };
  return { text: Array.from(s).slice(0, TRUNCATE_ITEM).join(''), runes: TRUNCATE_ITEM };
}

function headerValue(text: string): string {
  const quoted = `299 - "${text.replace(/["\\]/g, '\\$&')}"`;
  return ASCII.test(quoted) ? quoted : Buffer.from(quoted, 'utf8').toString('latin1');
}

/** The Warning header values for the texts gathered while serving a request (none: an empty list). */
export function warningHeaderValues(texts: readonly string[]): string[] {
  const values: string[] = [];
  if (texts.length === 0) return values;
  const seen = new Set<string>();
  const ordered: string[] = [];
  let written = 0;
  let truncating = false;
  for (const text of texts) {
    if (text.length === 0 || (truncating && written >= TRUNCATE_AT_TOTAL) || seen.has(text)) continue;
    seen.add(text);
    ordered.push(text);
    if (REFUSED.test(text)) continue;
    if (truncating) {
      const t = truncate(text);
      written += t.runes;
      values.push(headerValue(t.text));
      continue;
    }
    const runes = runeLength(text);
    if (written + runes <= TRUNCATE_AT_TOTAL) {
      written += runes;
      values.push(headerValue(text));
      continue;
    }
    // Over the total: from now on every text is cut, the ones before it too.
    truncating = true;
    written = 0;
    values.length = 0;
    for (const earlier of ordered) {
      if (REFUSED.test(earlier)) continue;
      const t = truncate(earlier);
      written += t.runes;
      values.push(headerValue(t.text));
    }
  }
  return values;
}
