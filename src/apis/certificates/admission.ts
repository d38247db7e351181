/**
 * The certificates.k8s.io admission plugins (kubernetes plugin/pkg/admission/certificates): CertificateApproval (an
 * approval needs `approve` on the request's signer, `signers` of certificates.k8s.io, by name or `<domain>/*`),
 * CertificateSigning (a certificate or condition written through /status needs `sign` on it), and
 * CertificateSubjectRestriction (no `kubernetes.io/kube-apiserver-client` request for the system:masters group).
 */
import type { AdmissionUser, AdmissionAttributes } from '../../registry/admission.js';
import type { Authorizer } from '../../api/authorization.js';
import type { KObject } from '../../api/object.js';
import { deepEqual } from '../../util/deep-equal.js';
import { admissionForbidden, type AdmissionPluginDefinition } from '../admission-plugins.js';

const GROUP = 'certificates.k8s.io';
const KUBE_APISERVER_CLIENT = 'kubernetes.io/kube-apiserver-client';

const isCsr = (a: AdmissionAttributes) => a.resource.group === GROUP && a.resource.resource === 'certificatesigningrequests';

/** IsAuthorizedForSignerName: the verb on the signer by name, else on its domain's wildcard. */
async function authorizedForSigner(authorizer: Authorizer, user: AdmissionUser | undefined, verb: string, signerName: string): Promise<boolean> {
  for (const name of [signerName, `${signerName.split('/')[0]}/*`]) {
    const d = await authorizer.authorize({
      user: user && { name: user.name, uid: user.uid ?? '', groups: user.groups, extra: user.extra },
      verb,
      resourceRequest: true,
      path: '',
      apiGroup: GROUP,
      apiVersion: '*',
      resource: 'signers',
      subresource: '',
      namespace: '',
      name,
    });
    if (d.decision === 'allow') return true;
  }
  return false;
}

/** A DER element: its tag, and where its content starts and ends. */
interface Element {
  tag: number;
  start: number;
  end: number;
}

/** The element at `at` (undefined: not DER within `limit`). Lengths are read in one pass: linear. */
function element(der: Uint8Array, at: number, limit: number): Element | undefined {
  if (at + 2 > limit) return undefined;
  const tag = der[at];
  let length = der[at + 1];
  let start = at + 2;
  if (length & 0x80) {
    const bytes = length & 0x7f;
    if (bytes === 0 || bytes > 4 || start + bytes > limit) return undefined;
    length = 0;
    for (let i = 0; i < bytes; i++) length = length * 256 + der[start + i];
    start += bytes;
  }
  const end = start + length;
  return end > limit ? undefined : { tag, start, end };
}

/** The children of a constructed element. */
function children(der: Uint8Array, parent: Element): Element[] | undefined {
  const out: Element[] = [];
  for (let at = parent.start; at < parent.end; ) {
    const e = element(der, at, parent.end);
    if (!e) return undefined;
    out.push(e);
    at = e.end;
  }
  return out;
}

const ORGANIZATION = '2.5.4.10';

function oidText(der: Uint8Array, e: Element): string {
  const parts: number[] = [];
  let value = 0;
  for (let i = e.start; i < e.end; i++) {
    value = value * 128 + (der[i] & 0x7f);
    if (!(der[i] & 0x80)) {
      if (parts.length === 0) parts.push(Math.min(2, Math.floor(value / 40)), value - Math.min(2, Math.floor(value / 40)) * 40);
      else parts.push(value);
      value = 0;
    }
  }
  return parts.join('.');
}

/** The subject's Organization values of a PEM certificate request (undefined: it does not parse). */
export function csrOrganizations(pem: string): string[] | undefined {
  const m = /-----BEGIN (?:NEW )?CERTIFICATE REQUEST-----([A-Za-z0-9+/=\s]*)-----END (?:NEW )?CERTIFICATE REQUEST-----/.exec(pem);
  if (!m) return undefined;
  const der = Buffer.from(m[1].replace(/\s+/g, ''), 'base64');
  const outer = element(der, 0, der.length);
  const info = outer && children(der, outer)?.[0];
  const fields = info && children(der, info);
  const subject = fields?.[1];
  if (!subject || subject.tag !== 0x30) return undefined;
  const out: string[] = [];
  for (const rdn of children(der, subject) ?? []) {
    for (const atv of children(der, rdn) ?? []) {
      const [oid, value] = children(der, atv) ?? [];
      if (oid?.tag === 0x06 && value && oidText(der, oid) === ORGANIZATION) out.push(der.subarray(value.start, value.end).toString('utf8'));
    }
  }
  return out;
}

const conditionsAndCertificate = (csr: KObject | undefined) => ({ certificate: csr?.status?.certificate, conditions: csr?.status?.conditions ?? [] });

export const CERTIFICATES_ADMISSION: AdmissionPluginDefinition[] = [
  {
    name: 'CertificateApproval',
    make: (ctx) => ({
      name: 'CertificateApproval',
      async validate(a) {
        if (a.subresource !== 'approval' || !isCsr(a)) return;
        // Checked against the stored request (its signer cannot change through /approval).
        const signer = String(a.oldObject?.spec?.signerName ?? '');
        if (!(await authorizedForSigner(ctx.authorizer, a.user, 'approve', signer))) throw admissionForbidden(a, `user not permitted to approve requests with signerName ${JSON.stringify(signer)}`);
      },
    }),
  },
  {
    name: 'CertificateSigning',
    make: (ctx) => ({
      name: 'CertificateSigning',
      async validate(a) {
        if (a.subresource !== 'status' || !isCsr(a)) return;
        if (deepEqual(conditionsAndCertificate(a.oldObject), conditionsAndCertificate(a.object))) return;
        const signer = String(a.oldObject?.spec?.signerName ?? '');
        if (!(await authorizedForSigner(ctx.authorizer, a.user, 'sign', signer))) throw admissionForbidden(a, `user not permitted to sign requests with signerName ${JSON.stringify(signer)}`);
      },
    }),
  },
  {
    name: 'CertificateSubjectRestriction',
    make: () => ({
      name: 'CertificateSubjectRestriction',
      validate(a) {
        if (a.subresource || !isCsr(a) || !a.object || a.object.spec?.signerName !== KUBE_APISERVER_CLIENT) return;
        const request = a.object.spec?.request;
        const orgs = typeof request === 'string' ? csrOrganizations(Buffer.from(request, 'base64').toString('latin1')) : undefined;
        if (!orgs) throw admissionForbidden(a, 'failed to parse CSR: PEM block type must be CERTIFICATE REQUEST');
        if (orgs.includes('system:masters')) throw admissionForbidden(a, `use of ${KUBE_APISERVER_CLIENT} signer with system:masters group is not allowed`);
      },
    }),
  },
];
