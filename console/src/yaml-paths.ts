/**
 * Between the server's field paths (`spec.containers[0].image`, `metadata.labels[app]`) and places in the YAML
 * text the user edits: where a path is (the deepest part of it the text has), and which path the cursor is at.
 */
import { isMap, isScalar, isSeq, parseDocument, type Node } from 'yaml';

export type PathPart = string | number;

/** A field path as upstream's field.Path prints it. */
export function parseFieldPath(path: string): PathPart[] {
  const out: PathPart[] = [];
  let i = 0;
  let cur = '';
  while (i < path.length) {
    const c = path[i];
    if (c === '.') {
      if (cur) out.push(cur);
      cur = '';
      i++;
    } else if (c === '[') {
      if (cur) out.push(cur);
      cur = '';
      const end = path.indexOf(']', i);
      const inner = path.slice(i + 1, end < 0 ? path.length : end);
      out.push(/^\d+$/.test(inner) ? Number(inner) : inner);
      i = end < 0 ? path.length : end + 1;
    } else {
      cur += c;
      i++;
    }
  }
  if (cur) out.push(cur);
  return out;
}

/** The text offset of the path's deepest part that is in the document (its key, for a map entry). */
export function offsetOf(text: string, path: PathPart[]): number {
  const doc = parseDocument(text, { keepSourceTokens: false });
  let node: Node | null | undefined = doc.contents as Node | null;
  let offset = 0;
  for (const part of path) {
    if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(part));
      if (!pair) break;
      offset = (isScalar(pair.key) && pair.key.range?.[0]) || offset;
      node = pair.value as Node | null;
    } else if (isSeq(node)) {
      const item = (typeof part === 'number' ? node.items[part] : itemWithKey(node.items as Node[], part)) as Node | undefined;
      if (!item) break;
      offset = item.range?.[0] ?? offset;
      node = item;
    } else break;
  }
  return offset;
}

/** The item of an associative list that a structured-merge-diff key names (`port=80`, `name="web"`). */
function itemWithKey(items: Node[], key: string): Node | undefined {
  const m = /^([\w$-]+)=(.*)$/.exec(key);
  if (!m) return undefined;
  let want = m[2];
  try {
    want = String(JSON.parse(want));
  } catch {
    // unquoted
  }
  return items.find((item) => isMap(item) && item.items.some((p) => isScalar(p.key) && String(p.key.value) === m[1] && isScalar(p.value) && String(p.value.value) === want));
}

/**
 * The path of the mapping the cursor's line belongs to, read from indentation (the text may not parse while it
 * is being typed): each line above with less indentation is a parent; `- ` items count as list entries.
 */
export function pathAt(text: string, pos: number): { path: PathPart[]; inValueOf?: string } {
  const lines = text.slice(0, pos).split('\n');
  const current = lines[lines.length - 1];
  const valueMatch = /^\s*(?:- )?([\w.\-/]+):\s+\S*$/.exec(current);
  const ownDash = /^(\s*)- /.exec(current);
  // The column the cursor line's keys start at (an item's keys are indented past its dash).
  let target = ownDash ? ownDash[1].length + 2 : current.search(/\S|$/);
  const path: PathPart[] = ownDash ? [0] : [];
  if (ownDash) target = ownDash[1].length;
  // After a list item, its list's key may stand at the same indentation as the dash.
  let afterDash = ownDash !== null;
  for (let i = lines.length - 2; i >= 0 && (target > 0 || afterDash); i--) {
    const line = lines[i];
    const trimmed = line.trim();
    if (!trimmed || trimmed.startsWith('#')) continue;
    const indent = line.search(/\S/);
    const dash = /^(\s*)- (.*)$/.exec(line);
    if (dash && indent < target) {
      // `- key:` with the cursor under it: inside that key of the item.
      const itemKey = /^([\w.\-/]+):\s*$/.exec(dash[2]);
      if (itemKey && indent + 2 < target) path.unshift(itemKey[1]);
      // Inside this item: its keys are at indent + 2.
      path.unshift(0);
      target = indent;
      afterDash = true;
      continue;
    }
    const key = /^\s*([\w.\-/]+):\s*$/.exec(line);
    if (key && (indent < target || (afterDash && indent === target))) {
      path.unshift(key[1]);
      target = indent;
      afterDash = false;
    }
  }
  return { path, inValueOf: valueMatch ? valueMatch[1] : undefined };
}

/**
 * The fields a 400 names, each with what is said of it: a strict decoding's `unknown field "spec.foo"` (and
 * `duplicate field`), and server-side apply's typed-patch errors, `.spec.replicas: expected numeric…` (one, or
 * several on lines of their own) and conflicts, whose paths are structured-merge-diff's (`.spec.ports[port=80]`).
 */
export function fieldsInMessage(whole: string): Array<{ path: string; message: string }> {
  // A message can echo what was sent: its first 8,000 characters are read, and a bracket at most 256 on.
  const message = whole.slice(0, 8000);
  const out: Array<{ path: string; message: string }> = [];
  const strict = /(?:unknown|duplicate) field "([^"]+)"/g;
  for (let m = strict.exec(message); m; m = strict.exec(message)) out.push({ path: m[1], message: m[0] });
  // A conflict names its fields alone (`conflict with "kubectl" using v1: .spec.replicas`): the message is the whole.
  const typed = /(?:^|\s)((?:\.[\w$-]+|\[[^\]\n]{0,256}\])+)(?:: ([^\n]*))?(?=\n|$)/g;
  for (let m = typed.exec(message); m; m = typed.exec(message)) out.push({ path: m[1].replace(/^\./, ''), message: m[2] === undefined ? message : `${m[1]}: ${m[2]}` });
  return out;
}
