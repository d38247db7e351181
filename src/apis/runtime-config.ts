/**
 * `--runtime-config` (kube-apiserver's flag, as k8s.io/apiserver's resourceconfig reads it): which built-in group
 * versions are served. `api/all`, then `api/ga`, `api/beta` and `api/alpha` (versions of that stability), then
 * `<group>/<version>` (`v1` or `api/v1` for the core group); a key without a value is `true`. A group kapi does not
 * serve is skipped, as upstream skips a group it does not know; an unknown version of a served group is an error.
 * By default every version is served but the removed ones (removed-versions.ts); the versions kapi itself uses
 * (core v1, RBAC, admission registration, leases...) cannot be turned off.
 */
import type { BuiltinResource } from './resource-table.js';

/** Group versions the server itself stores in or serves from (bootstrap objects, RBAC, leases, admission, reviews). */
const REQUIRED = new Set(['/v1', 'rbac.authorization.k8s.io/v1', 'admissionregistration.k8s.io/v1', 'coordination.k8s.io/v1', 'apiregistration.k8s.io/v1', 'flowcontrol.apiserver.k8s.io/v1', 'scheduling.k8s.io/v1', 'discovery.k8s.io/v1', 'authentication.k8s.io/v1', 'authorization.k8s.io/v1']);

const STABILITY: Record<string, RegExp> = { 'api/ga': /^v\d+$/, 'api/beta': /^v\d+beta\d+$/, 'api/alpha': /^v\d+alpha\d+$/ };

/** strconv.ParseBool ('' is true: a key without a value). */
function flag(key: string, value: string): boolean {
  if (['', '1', 't', 'T', 'TRUE', 'true', 'True'].includes(value)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(value)) return false;
  throw new Error(`invalid value of ${key}: ${value}, err: strconv.ParseBool: parsing ${JSON.stringify(value)}: invalid syntax`);
}

/** Whether each resource of the table is served under these overrides (throws upstream's error for a bad one). */
export function servedByRuntimeConfig(overrides: Readonly<Record<string, string>>, table: readonly BuiltinResource[]): (r: BuiltinResource) => boolean {
  const groupVersions = new Set(table.map((r) => `${r.names.group}/${r.version}`));
  const groups = new Set(table.map((r) => r.names.group));
  const all = overrides['api/all'] === undefined ? undefined : flag('api/all', overrides['api/all']);
  const byStability = Object.entries(STABILITY).flatMap(([key, pattern]) => (overrides[key] === undefined ? [] : [{ pattern, on: flag(key, overrides[key]) }]));
  const explicit = new Map<string, boolean>();
  for (const [key, value] of Object.entries(overrides)) {
    if (key === 'api/all' || Object.hasOwn(STABILITY, key)) continue;
    const tokens = key.split('/');
    // The core group: `v1` or `api/v1` (its legacy prefix).
    const [group, version] = tokens.length === 1 ? ['', tokens[0]] : tokens[0] === 'api' && tokens.length === 2 ? ['', tokens[1]] : [tokens[0], tokens[1]];
    if (tokens.length > 3 || !version) throw new Error(`invalid key ${key}`);
    // A key naming one resource (upstream's group/version/resource) is not one kapi can switch: refused, not taken for its version.
    if (tokens.length === 3 && tokens[0] !== 'api') throw new Error(`invalid key ${key}: kapi turns group versions on and off, not single resources`);
    if (!groups.has(group)) continue;
    if (!groupVersions.has(`${group}/${version}`)) throw new Error(`group version ${group ? `${group}/` : ''}${version} that has not been registered`);
    explicit.set(`${group}/${version}`, flag(key, value));
  }
  const served = (r: BuiltinResource) => {
    const gv = `${r.names.group}/${r.version}`;
    const set = explicit.get(gv);
    if (set !== undefined) return set;
    // A removed version is served only when named (api/beta or api/all do not bring back what 1.36 removed).
    if (r.removed) return false;
    const stable = byStability.find((s) => s.pattern.test(r.version));
    if (stable) return stable.on;
    return all ?? true;
  };
  const off = [...new Set(table.filter((r) => !served(r)).map((r) => `${r.names.group}/${r.version}`))].filter((gv) => REQUIRED.has(gv));
  if (off.length > 0) throw new Error(`${off.map((gv) => (gv.startsWith('/') ? gv.slice(1) : gv)).join(', ')} cannot be turned off: kapi itself stores in or serves from ${off.length > 1 ? 'them' : 'it'}`);
  return served;
}

/** A `--runtime-config` value (`key=value,key`) as its overrides. */
export function parseRuntimeConfig(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of text.split(',')) {
    const item = part.trim();
    if (!item) continue;
    const eq = item.indexOf('=');
    if (eq < 0) out[item] = '';
    else out[item.slice(0, eq)] = item.slice(eq + 1);
  }
  return out;
}
