/** The certificates.k8s.io group's resources (its rows of the built-in table, see resource-table.ts) and admission plugins. */
import { certificateSigningRequestPrinter } from '../../printing/index.js';
import { res, withStatus, type BuiltinResource } from '../resource-table.js';
import { validatePathSegmentName } from '../../machinery/validation.js';
import type { SubresourceStrategy } from '../../registry/subresources.js';
export { CERTIFICATES_ADMISSION } from './admission.js';

/** /approval writes status.conditions only (approvalStrategy: the spec and the rest of the status are the stored ones). */
const approvalWrite: SubresourceStrategy = {
  prepareForUpdate(obj, old) {
    const managed = obj.metadata?.managedFields;
    const metadata = { ...old.metadata, resourceVersion: obj.metadata?.resourceVersion, managedFields: managed };
    if (managed === undefined) delete metadata.managedFields;
    const status = { ...(old.status ?? {}), conditions: obj.status?.conditions };
    if (status.conditions === undefined) delete status.conditions;
    return { ...old, metadata, status };
  },
};

/** The resources of certificates.k8s.io kapi serves. */
export const CERTIFICATES_RESOURCES: BuiltinResource[] = [
  res('certificates.k8s.io', 'v1', 'certificatesigningrequests', 'CertificateSigningRequest', false, {
    printer: certificateSigningRequestPrinter,
    shortNames: ['csr'],
    status: true,
    subresources: [{ name: 'approval', kind: 'CertificateSigningRequest', verbs: ['get', 'patch', 'update'] }],
    strategy: { ...withStatus, nameRule: validatePathSegmentName, subresourceStrategies: { approval: approvalWrite } },
  }),
];
