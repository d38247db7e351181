/**
 * Accessors over v1 CRDs (pkg/apihelpers): conditions with upstream's
 * lastTransitionTime rule, storage and served versions.
 */
import { isObject } from './json-util.js';
import type { AnyCRD, CRDCondition } from '../../api/apiextensions.js';

/** metav1.Time's wire form: RFC 3339 in UTC with second precision. */
export function formatTime(t: Date | string): string {
  return typeof t === 'string' ? t : t.toISOString().replace(/\.\d+Z$/, 'Z');
}

export function getCondition(crd: AnyCRD, type: string): CRDCondition | undefined {
  const conditions = crd.status?.conditions;
  return Array.isArray(conditions) ? conditions.find((c) => c?.type === type) : undefined;
}

export function isConditionTrue(crd: AnyCRD, type: string): boolean {
  return getCondition(crd, type)?.status === 'True';
}

export function isConditionFalse(crd: AnyCRD, type: string): boolean {
  return getCondition(crd, type)?.status === 'False';
}

/** Same type, status, reason and message (times ignored): IsCRDConditionEquivalent. */
export function conditionsEquivalent(a: CRDCondition | undefined | null, b: CRDCondition | undefined | null): boolean {
  if (!a || !b) return !a && !b;
  return a.type === b.type && a.status === b.status && (a.reason ?? '') === (b.reason ?? '') && (a.message ?? '') === (b.message ?? '');
}

/**
 * SetCRDCondition: appends the condition or overwrites the one of the same type.
 * lastTransitionTime moves to `now` only when the status changes (or was unset).
 * Mutates `crd` and returns it.
 */
export function setCondition<T extends AnyCRD>(crd: T, condition: CRDCondition, now: Date | string = new Date()): T {
  const time = formatTime(now);
  if (!isObject(crd.status)) crd.status = {};
  const status = crd.status;
  if (!Array.isArray(status.conditions)) status.conditions = [];
  const existing = status.conditions.find((c) => c?.type === condition.type);
  if (!existing) {
    const added: CRDCondition = { type: condition.type, status: condition.status, lastTransitionTime: time };
    if (condition.reason !== undefined) added.reason = condition.reason;
    if (condition.message !== undefined) added.message = condition.message;
    status.conditions.push(added);
    return crd;
  }
  if (existing.status !== condition.status || !existing.lastTransitionTime) existing.lastTransitionTime = time;
  existing.status = condition.status;
  existing.reason = condition.reason ?? '';
  existing.message = condition.message ?? '';
  return crd;
}

/** RemoveCRDCondition. Mutates `crd` and returns it. */
export function removeCondition<T extends AnyCRD>(crd: T, type: string): T {
  if (crd.status && Array.isArray(crd.status.conditions)) crd.status.conditions = crd.status.conditions.filter((c) => c?.type !== type);
  return crd;
}

/** The name of the version marked `storage: true`, if any. */
export function storageVersion(crd: AnyCRD): string | undefined {
  const versions = crd.spec?.versions;
  const v = Array.isArray(versions) ? versions.find((x) => x?.storage === true) : undefined;
  return v ? (v.name ?? '') : undefined;
}

/** Names of the served versions, in spec order. */
export function servedVersions(crd: AnyCRD): string[] {
  const versions = crd.spec?.versions;
  return Array.isArray(versions) ? versions.filter((v) => v?.served === true).map((v) => v.name ?? '') : [];
}

export function hasServedVersion(crd: AnyCRD, version: string): boolean {
  return servedVersions(crd).includes(version);
}

export function isStoredVersion(crd: AnyCRD, version: string): boolean {
  const stored = crd.status?.storedVersions;
  return Array.isArray(stored) && stored.includes(version);
}

