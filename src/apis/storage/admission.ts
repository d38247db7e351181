/**
 * The storage admission plugins: DefaultStorageClass (a new claim that names no class gets the default
 * StorageClass), StorageObjectInUseProtection (new claims and volumes get the protection finalizer the
 * protection controllers remove once nothing uses them) and PersistentVolumeClaimResize.
 */
import type { KObject } from '../../api/object.js';
import { admissionForbidden, type AdmissionPluginDefinition } from '../admission-plugins.js';
import { amountOf } from '../core/quota-amounts.js';
import { defaultClass } from '../default-class.js';
import { objectForScan } from '../../cache/watch-cache.js';

const isCreateOf = (a: { operation: string; subresource: string; resource: { group: string; resource: string } }, resource: string) =>
  a.operation === 'CREATE' && !a.subresource && a.resource.group === '' && a.resource.resource === resource;

/** The StorageClasses' store (undefined while not served: --runtime-config). */
const storageClasses = (ctx: Parameters<NonNullable<AdmissionPluginDefinition['make']>>[0]) => ctx.registry.lookup('storage.k8s.io', 'v1', 'storageclasses')?.store;

/** PersistentVolumeClaimResize: a claim grows only when bound, and only where its StorageClass allows expansion. */
const pvcResize: AdmissionPluginDefinition = {
  name: 'PersistentVolumeClaimResize',
  caches: (ctx) => [storageClasses(ctx)].filter((x) => x !== undefined),
  make: (ctx) => {
    const store = storageClasses(ctx);
    const classOf = (pvc: KObject | undefined): string => {
      const cls = pvc?.spec?.storageClassName ?? pvc?.metadata?.annotations?.['volume.beta.kubernetes.io/storage-class'];
      return typeof cls === 'string' ? cls : '';
    };
    return {
      name: 'PersistentVolumeClaimResize',
      validate(a) {
        if (a.operation !== 'UPDATE' || a.subresource || a.resource.group !== '' || a.resource.resource !== 'persistentvolumeclaims') return;
        const size = amountOf(a.object?.spec?.resources?.requests?.storage);
        const before = amountOf(a.oldObject?.spec?.resources?.requests?.storage);
        if (!size || (before && size.q.cmp(before.q) <= 0)) return;
        if (a.oldObject?.status?.phase !== 'Bound') throw admissionForbidden(a, 'Only bound persistent volume claims can be expanded');
        const cls = classOf(a.object);
        const sc = cls && cls === classOf(a.oldObject) && store ? store.cache.get(store.key(undefined, cls))?.object : undefined;
        if (sc?.allowVolumeExpansion !== true) throw admissionForbidden(a, 'only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize');
      },
    };
  },
};

export const STORAGE_ADMISSION: AdmissionPluginDefinition[] = [
  {
    name: 'DefaultStorageClass',
    caches: (ctx) => [storageClasses(ctx)].filter((x) => x !== undefined),
    make: (ctx) => {
      const store = storageClasses(ctx);
      return {
        name: 'DefaultStorageClass',
        reportsChanges: true,
        admit(a) {
          const pvc = a.object;
          if (!pvc || !store || !isCreateOf(a, 'persistentvolumeclaims')) return;
          // A class asked for, even "" (no class), or the beta annotation: left as it is.
          if (pvc.spec?.storageClassName !== undefined && pvc.spec?.storageClassName !== null) return;
          if (pvc.metadata?.annotations?.['volume.beta.kubernetes.io/storage-class'] !== undefined) return;
          const def = defaultClass(store.cache.list().items.map(objectForScan), ['storageclass.kubernetes.io/is-default-class', 'storageclass.beta.kubernetes.io/is-default-class']);
          if (!def) return;
          pvc.spec = { ...(pvc.spec ?? {}), storageClassName: def.metadata.name };
          a.defaulter?.(pvc);
        },
      };
    },
  },
  {
    name: 'StorageObjectInUseProtection',
    make: () => ({
      name: 'StorageObjectInUseProtection',
      reportsChanges: true,
      admit(a) {
        const obj = a.object;
        if (!obj) return;
        const finalizer = isCreateOf(a, 'persistentvolumeclaims') ? 'kubernetes.io/pvc-protection' : isCreateOf(a, 'persistentvolumes') ? 'kubernetes.io/pv-protection' : undefined;
        if (!finalizer) return;
        const finalizers: unknown[] = Array.isArray(obj.metadata.finalizers) ? obj.metadata.finalizers : [];
        if (finalizers.includes(finalizer)) return;
        obj.metadata.finalizers = [...finalizers, finalizer];
        a.defaulter?.(obj);
      },
    }),
  },
  pvcResize,
];

