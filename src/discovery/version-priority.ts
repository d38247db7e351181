/**
 * Kubernetes' version ordering for discovery: GA before beta before alpha,
 * higher numbers first, then names that are not Kubernetes-like, alphabetically.
 */
const KUBE_VERSION = /^v(\d+)(?:(alpha|beta)(\d+))?$/;

function rank(v: string): [number, number, number, string] {
  const m = KUBE_VERSION.exec(v);
  if (!m) return [3, 0, 0, v];
  const major = Number(m[1]);
  if (!m[2]) return [0, -major, 0, v];
  return [m[2] === 'beta' ? 1 : 2, -major, -Number(m[3]), v];
}

export function compareKubeAwareVersions(a: string, b: string): number {
  const ra = rank(a);
  const rb = rank(b);
  for (let i = 0; i < 3; i++) if (ra[i] !== rb[i]) return (ra[i] as number) - (rb[i] as number);
  return ra[3] < rb[3] ? -1 : ra[3] > rb[3] ? 1 : 0;
}
