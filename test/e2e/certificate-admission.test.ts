/**
 * The certificates admission plugins (#41): a request for the kube-apiserver-client signer may not ask for
 * system:masters (CertificateSubjectRestriction); approving through /approval needs `approve` on the signer
 * (CertificateApproval), and writing a certificate through /status needs `sign` (CertificateSigning), by the
 * signer's name or its domain's wildcard, whatever else RBAC allows.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from './harness.js';

const CSRS = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const USER = 'approver-token';

describe('certificate admission', () => {
  let s: TestServer;
  let dir: string;
  /** A certificate request (base64 of its PEM) for this subject. */
  const csr = (subject: string) => {
    execFileSync('openssl', ['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'k.pem', '-out', 'r.pem', '-subj', subject], { cwd: dir, stdio: 'pipe' });
    return readFileSync(join(dir, 'r.pem')).toString('base64');
  };
  const request = (name: string, signerName: string, subject: string) => ({
    metadata: { name },
    spec: { request: csr(subject), signerName, usages: ['client auth'] },
  });

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kapi-csr-'));
    writeFileSync(join(dir, 'tokens.csv'), `${USER},carol,2001,"approvers"\n`);
    s = await startTestServer({ tokenAuthFile: join(dir, 'tokens.csv') });
    // carol may read and update requests, their approval and status: the signers decide the rest.
    const role = { metadata: { name: 'csr-writer' }, rules: [{ apiGroups: ['certificates.k8s.io'], resources: ['certificatesigningrequests', 'certificatesigningrequests/approval', 'certificatesigningrequests/status'], verbs: ['get', 'list', 'update', 'patch'] }] };
    assert.equal((await s.request('POST', `${RBAC}/clusterroles`, { body: role })).status, 201);
    const binding = { metadata: { name: 'csr-writer' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'csr-writer' }, subjects: [{ kind: 'Group', name: 'approvers' }] };
    assert.equal((await s.request('POST', `${RBAC}/clusterrolebindings`, { body: binding })).status, 201);
  });
  after(async () => {
    await s.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a kube-apiserver-client request for system:masters, and takes others', async () => {
    const masters = await s.request('POST', CSRS, { body: request('masters', 'kubernetes.io/kube-apiserver-client', '/CN=mallory/O=dev/O=system:masters') });
    assert.equal(masters.status, 403, masters.text);
    assert.equal(masters.json.message, 'certificatesigningrequests.certificates.k8s.io "masters" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed');
    assert.equal((await s.request('POST', CSRS, { body: request('other-signer', 'example.com/any', '/CN=ok/O=system:masters') })).status, 201, 'another signer may');
    assert.equal((await s.request('POST', CSRS, { body: request('dev', 'kubernetes.io/kube-apiserver-client', '/CN=dev/O=dev') })).status, 201);
  });

  it('lets only those who may approve (or sign) for a signer approve (or sign)', async () => {
    assert.equal((await s.request('POST', CSRS, { body: request('app', 'example.com/app', '/CN=app') })).status, 201);
    const current = (await s.request('GET', `${CSRS}/app`)).json;
    const approved = { ...current, status: { conditions: [{ type: 'Approved', status: 'True', reason: 'ByCarol', message: 'ok' }] } };
    const refused = await s.request('PUT', `${CSRS}/app/approval`, { body: approved, token: USER });
    assert.equal(refused.status, 403, refused.text);
    assert.equal(refused.json.message, 'certificatesigningrequests.certificates.k8s.io "app" is forbidden: user not permitted to approve requests with signerName "example.com/app"');
    // approve on the signer's domain wildcard.
    const signers = { metadata: { name: 'example-signers' }, rules: [{ apiGroups: ['certificates.k8s.io'], resources: ['signers'], resourceNames: ['example.com/*'], verbs: ['approve'] }] };
    assert.equal((await s.request('POST', `${RBAC}/clusterroles`, { body: signers })).status, 201);
    const binding = { metadata: { name: 'example-signers' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'example-signers' }, subjects: [{ kind: 'User', name: 'carol' }] };
    assert.equal((await s.request('POST', `${RBAC}/clusterrolebindings`, { body: binding })).status, 201);
    const ok = await s.request('PUT', `${CSRS}/app/approval`, { body: approved, token: USER });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.json.status.conditions[0].type, 'Approved');

    execFileSync('openssl', ['req', '-x509', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'c.key', '-out', 'c.pem', '-subj', '/CN=app', '-days', '1'], { cwd: dir, stdio: 'pipe' });
    const certificate = readFileSync(join(dir, 'c.pem')).toString('base64');
    const signed = await s.request('PUT', `${CSRS}/app/status`, { body: { ...ok.json, status: { ...ok.json.status, certificate } }, token: USER });
    assert.equal(signed.status, 403, signed.text);
    assert.equal(signed.json.message, 'certificatesigningrequests.certificates.k8s.io "app" is forbidden: user not permitted to sign requests with signerName "example.com/app"');
  });
});
