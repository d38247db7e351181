/** The certificates.k8s.io group's resources: its rows of the built-in table (see resource-table.ts). */
import { certificateSigningRequestPrinter } from '../../printing/index.js';
import { res, withStatus, type BuiltinResource } from '../resource-table.js';
import { validatePathSegmentName } from '../../machinery/validation.js';

/** The resources of certificates.k8s.io kapi serves. */
export const CERTIFICATES_RESOURCES: BuiltinResource[] = [
  res('certificates.k8s.io', 'v1', 'certificatesigningrequests', 'CertificateSigningRequest', false, { printer: certificateSigningRequestPrinter, shortNames: ['csr'], status: true, strategy: { ...withStatus, nameRule: validatePathSegmentName } }),
];
