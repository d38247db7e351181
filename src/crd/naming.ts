/**
 * The status a CRD should have, from the pure controllers of the apiextensions
 * package run in upstream's order: naming (accepted names, NamesAccepted),
 * establishing (Established), API approval, and Terminating while it is deleted.
 */
import { establish, reconcileAPIApproval, reconcileNames, setCondition } from '../apis/apiextensions/names.js';
import type { CustomResourceDefinitionV1 } from '../apis/apiextensions/types.js';
import type { KObject } from '../registry/types.js';

export { isConditionTrue, setCondition } from '../apis/apiextensions/names.js';

export const CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';

/** The CRD with the status its controllers would give it (a copy; the input is not changed). */
export function desiredState(crd: KObject, others: KObject[]): KObject {
  const siblings = others as CustomResourceDefinitionV1[];
  let cur = structuredClone(crd) as CustomResourceDefinitionV1;
  cur = reconcileNames(cur, siblings) ?? cur;
  cur = establish(cur) ?? cur;
  cur = reconcileAPIApproval(cur) ?? cur;
  const terminating = cur.status?.conditions?.find((c) => c.type === 'Terminating');
  if (crd.metadata.deletionTimestamp && terminating?.status !== 'False') {
    setCondition(cur, { type: 'Terminating', status: 'True', reason: 'InstanceDeletionInProgress', message: 'CustomResource deletion is in progress' });
  }
  return cur as KObject;
}
