/** A line diff (longest common subsequence), for the review of an edit: objects are a few hundred lines. */
export interface DiffLine {
  op: 'same' | 'add' | 'del';
  text: string;
}

/** Above this many lines on either side the diff is the whole old text removed and the new added. */
const MAX_LINES = 4000;

export function lineDiff(before: string, after: string): DiffLine[] {
  const a = before ? before.replace(/\n$/, '').split('\n') : [];
  const b = after.replace(/\n$/, '').split('\n');
  // Common head and tail first: an edit usually touches a few lines.
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const midA = a.slice(head, a.length - tail);
  const midB = b.slice(head, b.length - tail);
  const out: DiffLine[] = a.slice(0, head).map((text) => ({ op: 'same', text }));
  if (midA.length > MAX_LINES || midB.length > MAX_LINES || midA.length * midB.length > 4_000_000) {
    out.push(...midA.map((text) => ({ op: 'del' as const, text })), ...midB.map((text) => ({ op: 'add' as const, text })));
  } else {
    const n = midA.length;
    const m = midB.length;
    const lcs = new Uint32Array((n + 1) * (m + 1));
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        lcs[i * (m + 1) + j] = midA[i] === midB[j] ? lcs[(i + 1) * (m + 1) + j + 1] + 1 : Math.max(lcs[(i + 1) * (m + 1) + j], lcs[i * (m + 1) + j + 1]);
      }
    }
    let i = 0;
    let j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && midA[i] === midB[j]) {
        out.push({ op: 'same', text: midA[i] });
        i++;
        j++;
      } else if (i < n && (j === m || lcs[(i + 1) * (m + 1) + j] >= lcs[i * (m + 1) + j + 1])) {
        // What goes before what comes, as diff prints them.
        out.push({ op: 'del', text: midA[i++] });
      } else {
        out.push({ op: 'add', text: midB[j++] });
      }
    }
  }
  out.push(...a.slice(a.length - tail).map((text) => ({ op: 'same' as const, text })));
  return out;
}
