import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  AcceptedNamesIndex,
  apiApprovalCondition,
  calculateNamesAndConditions,
  compareKubeAwareVersionStrings,
  establish,
  getCondition,
  isServable,
  reconcileAPIApproval,
  reconcileNames,
  servedVersions,
  setCondition,
  sortVersionsByKubeAwarePriority,
  storageVersion,
} from '../../../src/apis/apiextensions/names.js';
import { defaultV1, prepareCRDForCreate } from '../../../src/apis/apiextensions/defaults.js';
import type { CustomResourceDefinitionV1 } from '../../../src/api/apiextensions.js';
import { noxu, noxu2, noxuWithSubresources } from './fixtures.js';

const T0 = '2024-01-01T00:00:00Z';
const T1 = '2024-01-01T00:00:05Z';
const created = (crd: CustomResourceDefinitionV1): CustomResourceDefinitionV1 => prepareCRDForCreate(defaultV1(crd));

/** Runs the naming and establishing controllers once, as after a create. */
function register(crd: CustomResourceDefinitionV1, others: CustomResourceDefinitionV1[] = [], now = T0): CustomResourceDefinitionV1 {
  const named = reconcileNames(crd, others, now) ?? crd;
  return establish(named, now) ?? named;
}

describe('naming controller (A-04)', () => {
  it('accepts all names of a fresh CRD and marks it Installing', () => {
    const crd = created(noxu());
    const result = calculateNamesAndConditions(crd, []);
    assert.deepEqual(result.acceptedNames, crd.spec!.names);
    assert.deepEqual(result.namesAccepted, { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' });
    assert.deepEqual(result.established, { type: 'Established', status: 'False', reason: 'Installing', message: 'the initial names have been accepted' });
  });

  it('then the establishing controller sets Established True', () => {
    const crd = register(created(noxu()));
    assert.deepEqual(crd.status?.acceptedNames, {
      plural: 'noxus',
      singular: 'nonenglishnoxu',
      shortNames: ['foo', 'bar', 'abc', 'def'],
      kind: 'WishIHadChosenNoxu',
      listKind: 'NoxuItemList',
      categories: ['all'],
    });
    assert.deepEqual(crd.status?.conditions, [
      { type: 'NamesAccepted', status: 'True', lastTransitionTime: T0, reason: 'NoConflicts', message: 'no conflicts found' },
      { type: 'Established', status: 'True', lastTransitionTime: T0, reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' },
    ]);
    assert.equal(isServable(crd), true);
    assert.equal(establish(crd), null);
  });

  it('does nothing once spec names equal accepted names', () => {
    const crd = register(created(noxu()));
    assert.equal(reconcileNames(crd, []), null);
  });
});

describe('name conflicts (A-06, A-07)', () => {
  it('short names taken by another CRD of the group: NamesAccepted False, not established', () => {
    const first = register(created(noxu()));
    const second = register(created(noxu2()), [first]);
    assert.deepEqual(getCondition(second, 'NamesAccepted'), {
      type: 'NamesAccepted',
      status: 'False',
      lastTransitionTime: T0,
      reason: 'ShortNamesConflict',
      message: '["foo" is already in use, "bar" is already in use, "abc" is already in use, "def" is already in use]',
    });
    assert.deepEqual(getCondition(second, 'Established'), {
      type: 'Established',
      status: 'False',
      lastTransitionTime: T0,
      reason: 'NotAccepted',
      message: 'not all names are accepted',
    });
    assert.deepEqual(second.status?.acceptedNames, {
      plural: 'noxus2',
      singular: 'nonenglishnoxu2',
      kind: 'WishIHadChosenNoxu2',
      listKind: 'Noxu2ItemList',
      categories: ['all'],
    });
    assert.equal(isServable(second), false);
  });

  it('the conflict resolves when the other CRD is gone', () => {
    const first = register(created(noxu()));
    const second = register(created(noxu2()), [first]);
    const resolved = register(second, [], T1);
    assert.deepEqual(resolved.status?.acceptedNames?.shortNames, ['foo', 'bar', 'abc', 'def']);
    assert.equal(getCondition(resolved, 'NamesAccepted')?.status, 'True');
    assert.equal(getCondition(resolved, 'NamesAccepted')?.lastTransitionTime, T1);
    assert.equal(getCondition(resolved, 'Established')?.status, 'True');
  });

  it('one conflict is reported bare; the last conflicting field gives the reason', () => {
    const first = register(created(noxu()));
    const clash = created(noxu2());
    clash.spec!.names = { plural: 'noxus', singular: 'x', shortNames: ['foo'], kind: 'WishIHadChosenNoxu', listKind: 'NoxuItemList' };
    const result = calculateNamesAndConditions(clash, [first]);
    assert.deepEqual(result.namesAccepted, { type: 'NamesAccepted', status: 'False', reason: 'ListKindConflict', message: '"NoxuItemList" is already in use' });
    assert.deepEqual(result.acceptedNames, { plural: '', singular: 'x', kind: '' });
  });

  it('only CRDs of the same group conflict', () => {
    const other = register(created(noxu()));
    other.spec!.group = 'othergroup.example.com';
    const result = calculateNamesAndConditions(created(noxu2()), [other]);
    assert.equal(result.namesAccepted.status, 'True');
  });

  it('keeps names already accepted for this CRD', () => {
    const crd = register(created(noxu()));
    crd.spec!.names!.shortNames = ['foo', 'new'];
    const result = calculateNamesAndConditions(crd, [register(created(noxu2()), [crd])]);
    assert.deepEqual(result.acceptedNames.shortNames, ['foo', 'new']);
    assert.equal(result.established.status, 'True');
  });

  it('decides the same from the index of accepted names as from the list of CRDs, as CRDs come and go', () => {
    const first = register(created(noxu()));
    const other = register(created(noxu()));
    other.metadata!.name = 'noxus.othergroup.example.com';
    other.spec!.group = 'othergroup.example.com';
    const clash = created(noxu2());
    clash.spec!.names = { plural: 'noxus', singular: 'x', shortNames: ['foo'], kind: 'WishIHadChosenNoxu', listKind: 'NoxuItemList' };
    const index = new AcceptedNamesIndex();
    // The index as the cache has them: the clashing CRD itself is in it too (its own names never conflict).
    for (const crd of [first, other, clash]) index.set(crd);
    assert.deepEqual(calculateNamesAndConditions(clash, index), calculateNamesAndConditions(clash, [first, other]));
    assert.equal(calculateNamesAndConditions(clash, index).namesAccepted.reason, 'ListKindConflict');
    assert.deepEqual(index.members('mygroup.example.com').sort(), [clash.metadata!.name, first.metadata!.name].sort());
    // The first goes: its names are free.
    index.remove(first.metadata!.name!);
    assert.deepEqual(calculateNamesAndConditions(clash, index), calculateNamesAndConditions(clash, [other]));
    assert.equal(calculateNamesAndConditions(clash, index).namesAccepted.status, 'True');
    // A CRD's own accepted names, changed since the index saw it, count as they are now.
    const renamed = register(created(noxu()));
    index.set(renamed);
    const next = structuredClone(renamed);
    next.spec!.names!.shortNames = ['foo', 'new'];
    assert.deepEqual(calculateNamesAndConditions(next, index), calculateNamesAndConditions(next, []));
  });
});

describe('API approval condition (A-16)', () => {
  const approval = (annotation?: string): CustomResourceDefinitionV1 => {
    const crd = created(noxu());
    crd.spec!.group = 'mygroup.k8s.io';
    crd.metadata = { name: 'noxus.mygroup.k8s.io', annotations: annotation === undefined ? undefined : { 'api-approved.kubernetes.io': annotation } };
    return crd;
  };

  it('is absent for unprotected groups', () => {
    assert.equal(apiApprovalCondition(created(noxu())), null);
    assert.equal(reconcileAPIApproval(created(noxu())), null);
  });

  it('True for a URL, False for unapproved, missing or invalid values', () => {
    assert.deepEqual(apiApprovalCondition(approval('https://github.com/kubernetes/kubernetes/pull/78458')), {
      type: 'KubernetesAPIApprovalPolicyConformant',
      status: 'True',
      reason: 'ApprovedAnnotation',
      message: 'approved in https://github.com/kubernetes/kubernetes/pull/78458',
    });
    assert.deepEqual(apiApprovalCondition(approval('unapproved, test-only')), {
      type: 'KubernetesAPIApprovalPolicyConformant',
      status: 'False',
      reason: 'UnapprovedAnnotation',
      message: 'not approved: "unapproved, test-only"',
    });
    assert.equal(apiApprovalCondition(approval())?.reason, 'MissingAnnotation');
    assert.equal(apiApprovalCondition(approval('ftp:/nohost'))?.reason, 'InvalidAnnotation');
  });

  it('reconcile sets it once', () => {
    const crd = reconcileAPIApproval(approval('https://example.com/pr'), T0);
    assert.equal(getCondition(crd!, 'KubernetesAPIApprovalPolicyConformant')?.lastTransitionTime, T0);
    assert.equal(reconcileAPIApproval(crd!, T1), null);
  });
});

describe('setCondition', () => {
  it('keeps lastTransitionTime while the status stays the same', () => {
    const crd = created(noxu());
    setCondition(crd, { type: 'Established', status: 'False', reason: 'Installing', message: 'm1' }, T0);
    setCondition(crd, { type: 'Established', status: 'False', reason: 'NotAccepted', message: 'm2' }, T1);
    assert.deepEqual(crd.status?.conditions, [{ type: 'Established', status: 'False', lastTransitionTime: T0, reason: 'NotAccepted', message: 'm2' }]);
    setCondition(crd, { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'm3' }, new Date('2024-01-01T00:00:09.123Z'));
    assert.equal(crd.status?.conditions?.[0].lastTransitionTime, '2024-01-01T00:00:09Z');
  });

  it('appends conditions of new types', () => {
    const crd = created(noxu());
    setCondition(crd, { type: 'NamesAccepted', status: 'True' }, T0);
    setCondition(crd, { type: 'Established', status: 'True' }, T0);
    assert.deepEqual(crd.status?.conditions?.map((c) => c.type), ['NamesAccepted', 'Established']);
  });
});

describe('versions', () => {
  it('storageVersion and servedVersions', () => {
    const crd = noxuWithSubresources();
    crd.spec!.versions!.push({ name: 'v0', served: false, storage: false });
    assert.equal(storageVersion(crd), 'v1beta1');
    assert.deepEqual(servedVersions(crd), ['v1beta1', 'v1']);
    assert.equal(storageVersion({ spec: { versions: [{ name: 'v1', storage: false }] } }), undefined);
  });

  it('sorts by Kubernetes version priority', () => {
    assert.deepEqual(sortVersionsByKubeAwarePriority(['v1alpha1', 'foo', 'v1', 'v1beta2', 'v2', 'v10beta3', 'v1beta1', 'bar', 'v11alpha2', 'v12alpha1']), [
      'v2',
      'v1',
      'v10beta3',
      'v1beta2',
      'v1beta1',
      'v12alpha1',
      'v11alpha2',
      'v1alpha1',
      'bar',
      'foo',
    ]);
    assert.deepEqual(sortVersionsByKubeAwarePriority(['v1beta1', 'v1beta2', 'v0']), ['v0', 'v1beta2', 'v1beta1']);
  });

  it('compareKubeAwareVersionStrings signs', () => {
    assert.ok(compareKubeAwareVersionStrings('v1', 'v1beta1') > 0);
    assert.ok(compareKubeAwareVersionStrings('foo', 'v1alpha1') < 0);
    assert.ok(compareKubeAwareVersionStrings('a', 'b') > 0);
    assert.equal(compareKubeAwareVersionStrings('v1', 'v1'), 0);
  });
});
