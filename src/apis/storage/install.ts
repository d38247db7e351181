/** The storage.k8s.io group's resources: its rows of the built-in table (see resource-table.ts). */
import { storageClassPrinter } from '../../printing/index.js';
import { res, plain, withStatus, type BuiltinResource } from '../resource-table.js';

/** The resources of storage.k8s.io kapi serves. */
export const STORAGE_RESOURCES: BuiltinResource[] = [
  res('storage.k8s.io', 'v1', 'storageclasses', 'StorageClass', false, { printer: storageClassPrinter, shortNames: ['sc'], strategy: plain }),
  res('storage.k8s.io', 'v1', 'csidrivers', 'CSIDriver', false, { strategy: plain }),
  res('storage.k8s.io', 'v1', 'csinodes', 'CSINode', false, { strategy: plain }),
  res('storage.k8s.io', 'v1', 'volumeattachments', 'VolumeAttachment', false, { status: true, strategy: withStatus }),
];
