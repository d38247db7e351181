/**
 * The status a CRD should have, from the pure controllers of the apiextensions
 * package run in upstream's order: naming (accepted names, NamesAccepted),
 * establishing (Established), API approval, and Terminating while it is deleted.
 */
import { AcceptedNamesIndex, establish, reconcileAPIApproval, reconcileNames, removeCondition, setCondition } from '../apis/apiextensions/names.js';
import { aggregateMessage, field, type FieldError } from '../machinery/field-errors.js';
import { validateStructuralSchema } from '../schema/crd-hook.js';
import type { CustomResourceDefinitionV1 } from '../api/apiextensions.js';
import type { KObject } from '../api/object.js';
import { deepCloneMutable } from '../machinery/json.js';

export { isConditionTrue, setCondition } from '../apis/apiextensions/names.js';

export const CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';

/**
 * Why a CRD's schemas are not structural (v1beta1 accepts such CRDs and reports them in the
 * NonStructuralSchema condition), as the nonstructuralschema controller's calculateCondition finds
 * them on the v1 form: preserveUnknownFields set, then each version's schema under its own path.
 */
function structuralViolations(crd: KObject): FieldError[] {
  const errs: FieldError[] = [];
  if (crd.spec?.preserveUnknownFields === true) errs.push(field.invalid('spec.preserveUnknownFields', true, 'must be false'));
  const versions: KObject[] = crd.spec?.versions ?? [];
  versions.forEach((v, i) => {
    const schema = v?.schema?.openAPIV3Schema;
    if (!schema) return;
    errs.push(...validateStructuralSchema(schema, `spec.versions[${i}].schema.openAPIV3Schema`, { hasOtherErrors: false, requirePrunedDefaults: false, skipCelCost: true }));
  });
  return errs;
}

/** The CRD with the status its controllers would give it (a copy; the input is not changed). */
export function desiredState(crd: KObject, others: KObject[] | AcceptedNamesIndex): KObject {
  const siblings = others instanceof AcceptedNamesIndex ? others : (others as CustomResourceDefinitionV1[]);
  let cur = deepCloneMutable(crd) as CustomResourceDefinitionV1;
  cur = reconcileNames(cur, siblings) ?? cur;
  cur = establish(cur) ?? cur;
  cur = reconcileAPIApproval(cur) ?? cur;
  const violations = structuralViolations(crd);
  if (violations.length > 0) {
    setCondition(cur, { type: 'NonStructuralSchema', status: 'True', reason: 'Violations', message: aggregateMessage(violations) });
  } else if (cur.status?.conditions?.some((c) => c.type === 'NonStructuralSchema')) {
    removeCondition(cur, 'NonStructuralSchema');
  }
  const terminating = cur.status?.conditions?.find((c) => c.type === 'Terminating');
  if (crd.metadata.deletionTimestamp && terminating?.status !== 'False') {
    setCondition(cur, { type: 'Terminating', status: 'True', reason: 'InstanceDeletionInProgress', message: 'CustomResource deletion is in progress' });
  }
  return cur as KObject;
}
