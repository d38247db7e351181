/**
 * Kubernetes' version-name priority (apimachinery version.CompareKubeAwareVersionStrings):
 * GA > beta > alpha, higher major then higher minor first; names that are not
 * kube-like (`v1`, `v2beta1`, `v1alpha3`) sort after them, alphabetically.
 * Discovery uses it to order a group's versions and pick the preferred one.
 */

const KUBE_VERSION = /^v(\d+)(?:(alpha|beta)(\d+))?$/;
const TYPE_RANK = { alpha: 0, beta: 1, ga: 2 } as const;

interface KubeVersion {
  major: number;
  rank: number;
  minor: number;
}

function parse(v: string): KubeVersion | undefined {
  const m = KUBE_VERSION.exec(v);
  if (!m) return undefined;
  const major = Number(m[1]);
  const minor = m[3] === undefined ? 0 : Number(m[3]);
  // strconv.Atoi fails beyond 64 bits; Number would silently round
  if (!Number.isSafeInteger(major) || !Number.isSafeInteger(minor)) return undefined;
  return { major, rank: TYPE_RANK[(m[2] as 'alpha' | 'beta' | undefined) ?? 'ga'], minor };
}

/** > 0 when `a` has the higher priority, < 0 when `b` has, 0 when equal. */
export function compareKubeAwareVersionStrings(a: string, b: string): number {
  if (a === b) return 0;
  const va = parse(a);
  const vb = parse(b);
  if (!va && !vb) return b < a ? -1 : b > a ? 1 : 0;
  if (!va) return -1;
  if (!vb) return 1;
  if (va.rank !== vb.rank) return va.rank - vb.rank;
  if (va.major !== vb.major) return va.major - vb.major;
  return va.minor - vb.minor;
}

/** A new array, highest priority first: [v2, v1, v1beta2, v1beta1, v1alpha1, foo, zed]. */
export function sortVersionsByKubeAwarePriority(versions: readonly string[]): string[] {
  return [...versions].sort((a, b) => compareKubeAwareVersionStrings(b, a));
}
