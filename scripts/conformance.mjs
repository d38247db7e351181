#!/usr/bin/env node
/**
 * `npm run conformance`: the `[sig-api-machinery] [Conformance]` specs of the 1.20 e2e suite against kapi plus the
 * real kube-controller-manager, and against kube-apiserver 1.20.2 plus etcd plus the same kube-controller-manager,
 * in the same setup: no kubelet (a Node is kept Ready by a heartbeat here, as a kubelet would post it) and no
 * scheduler. Prints each spec's outcome on both and the counts. Not part of `npm test` (it takes tens of minutes).
 *
 * Left out, on both: the specs that run webhook or aggregator images (AdmissionWebhook,
 * CustomResourceConversionWebhook, Aggregator) and those that need a kubelet to run pods (NodeConformance, and
 * the namespace deletion that waits for a pod to run).
 *
 *   node scripts/conformance.mjs [--only kapi|kube-apiserver] [--focus <regex>]
 *
 * Builds what it needs first (scripts/control-plane.sh, scripts/conformance-build.sh: Debian's Go and kubernetes
 * source; etcd and kubectl 1.20 from scripts/test-tools.sh).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
// Built by `npm run build` (npm run conformance builds first).
import { freePort, startProcess, startReference, until } from '../dist/bench/lib/reference-server.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = join(root, '.cache', 'bin');
const arg = (name) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined);
const FOCUS = arg('--focus') ?? '\\[sig-api-machinery\\].*\\[Conformance\\]';
const SKIP = 'AdmissionWebhook|CustomResourceConversionWebhook|Aggregator|NodeConformance|all pods are removed when a namespace is deleted';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A client of the server under test (JSON over HTTPS with a bearer token; the CA may be absent: then not verified). */
function client(url, token, ca) {
  const agent = new https.Agent({ ca, rejectUnauthorized: ca !== undefined, keepAlive: true });
  return (method, path, body, type = 'application/json') =>
    new Promise((resolve, reject) => {
      const req = https.request(new URL(path, url), { method, agent, headers: { authorization: `Bearer ${token}`, 'content-type': type } }, (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode, json: text.startsWith('{') ? JSON.parse(text) : undefined }));
      });
      req.on('error', reject);
      req.end(body === undefined ? undefined : JSON.stringify(body));
    });
}

/** The Node a kubelet would keep: Ready, its status and its kube-node-lease Lease renewed every 10 s. Resolves once it is untainted (schedulable). */
async function keepNode(request) {
  const name = 'n1';
  const resources = { cpu: '4', memory: '8Gi', pods: '110' };
  await request('POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64' } } });
  const beat = async () => {
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const conditions = [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status', lastHeartbeatTime: now, lastTransitionTime: now }];
    await request('PATCH', `/api/v1/nodes/${name}/status`, { status: { capacity: resources, allocatable: resources, conditions } }, 'application/strategic-merge-patch+json');
    const renewTime = new Date().toISOString().replace('Z', '000Z');
    const lease = await request('GET', `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${name}`);
    if (lease.status === 404) await request('POST', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases', { metadata: { name }, spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime } });
    else await request('PATCH', `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${name}`, { spec: { renewTime } }, 'application/merge-patch+json');
  };
  await beat();
  const timer = setInterval(() => beat().catch(() => {}), 10_000);
  await until('the Node to be schedulable', async () => ((await request('GET', `/api/v1/nodes/${name}`)).json?.spec?.taints ?? []).length === 0);
  return () => clearInterval(timer);
}

function controllerManager(dir, kubeconfig, saKey, rootCA) {
  return startProcess(dir, 'kube-controller-manager', join(bin, 'kube-controller-manager'), [
    `--kubeconfig=${kubeconfig}`,
    '--leader-elect=true',
    '--port=0',
    '--secure-port=0',
    '--use-service-account-credentials=true',
    `--service-account-private-key-file=${saKey}`,
    `--root-ca-file=${rootCA}`,
    '--concurrent-gc-syncs=5',
    '--v=1',
  ]);
}

/** kapi with its copies of kube-controller-manager's controllers off and the removed versions the 1.20 control plane lists on. */
async function kapiSetup(dir) {
  const port = await freePort();
  const data = join(dir, 'data');
  const kapi = startProcess(dir, 'kapi', process.execPath, [
    join(root, 'bin', 'kapi.js'),
    'serve',
    '--data-dir',
    data,
    '--secure-port',
    String(port),
    '--controllers',
    'validatingadmissionpolicy-status-controller',
    '--runtime-config',
    'batch/v1beta1=true,policy/v1beta1=true,discovery.k8s.io/v1beta1=true',
  ]);
  await until('kapi to serve', async () => /serving on/.test(kapi.output()));
  const pki = join(data, 'pki');
  const kubeconfig = join(data, 'admin.kubeconfig');
  const request = client(`https://127.0.0.1:${port}`, readFileSync(join(data, 'admin.token'), 'utf8').trim(), readFileSync(join(pki, 'ca.crt')));
  return { kubeconfig, request, processes: [controllerManager(dir, kubeconfig, join(pki, 'sa.key'), join(pki, 'ca.crt')), kapi] };
}

/** kube-apiserver 1.20.2 on etcd (bench/lib/reference-server.ts), and the same kube-controller-manager. */
async function kubeApiserverSetup(dir) {
  const ref = await startReference(dir);
  const request = client(ref.url, ref.token, undefined);
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(
    kubeconfig,
    `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "${ref.url}", insecure-skip-tls-verify: true}}]\nusers: [{name: u, user: {token: "${ref.token}"}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n`,
  );
  const cm = controllerManager(dir, kubeconfig, ref.saKey, join(ref.certs, 'apiserver.crt'));
  return { kubeconfig, request, processes: [cm, ref.kubeApiserver, ref.etcd] };
}

/** The suite against one setup: each spec's outcome (passed, failed) by name, from its JUnit report. */
async function run(name, setup) {
  const dir = mkdtempSync(join(tmpdir(), `kapi-conformance-${name}-`));
  const s = await setup(dir);
  const stopNode = await keepNode(s.request);
  const started = Date.now();
  const e2e = startProcess(dir, 'e2e', join(bin, 'e2e.test'), [
    `--kubeconfig=${s.kubeconfig}`,
    '--provider=skeleton',
    // The suite's own kubectl (1.20.2, Debian's): a newer one validates on the server where the server can, which
    // 1.20's specs do not expect (their messages are kubectl's client-side validation's).
    `--kubectl-path=${join(bin, 'kubectl')}`,
    '--ginkgo.noColor',
    `--ginkgo.focus=${FOCUS}`,
    `--ginkgo.skip=${SKIP}`,
    `--report-dir=${join(dir, 'report')}`,
  ]);
  await new Promise((resolve) => {
    const wait = setInterval(() => {
      if (/^(PASS|FAIL)$/m.test(e2e.output()) || /Ran \d+ of \d+ Specs/.test(e2e.output())) {
        clearInterval(wait);
        resolve();
      }
    }, 1000);
  });
  await sleep(1000);
  stopNode();
  for (const p of [e2e, ...s.processes]) await p.stop();
  const outcomes = new Map();
  const reports = existsSync(join(dir, 'report')) ? readdirSync(join(dir, 'report')).filter((f) => f.endsWith('.xml')) : [];
  for (const file of reports) {
    const xml = readFileSync(join(dir, 'report', file), 'utf8');
    for (const m of xml.matchAll(/<testcase name="([^"]*)"[^>]*?(\/>|>([\s\S]*?)<\/testcase>)/g)) {
      const spec = m[1].replace(/&#34;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&').trim();
      const body = m[3] ?? '';
      if (/<skipped/.test(body) || spec.startsWith('[BeforeSuite]') || spec.startsWith('[AfterSuite]')) continue;
      outcomes.set(spec, /<failure/.test(body) ? 'failed' : 'passed');
    }
  }
  console.error(`${name}: ${outcomes.size} specs in ${Math.round((Date.now() - started) / 1000)} s (logs in ${dir})`);
  return outcomes;
}

execFileSync('bash', [join(root, 'scripts', 'control-plane.sh')], { stdio: 'inherit' });
execFileSync('bash', [join(root, 'scripts', 'conformance-build.sh')], { stdio: 'inherit' });
for (const tool of ['etcd', 'kubectl']) if (!existsSync(join(bin, tool))) throw new Error(`${tool} is missing from .cache/bin: run scripts/test-tools.sh first`);
const only = arg('--only');
const results = {};
if (only !== 'kube-apiserver') results.kapi = await run('kapi', kapiSetup);
if (only !== 'kapi') results['kube-apiserver'] = await run('kube-apiserver', kubeApiserverSetup);
const names = Object.keys(results);
const specs = [...new Set(names.flatMap((n) => [...results[n].keys()]))].sort();
const short = (spec) => spec.replace(/^\[sig-api-machinery\] /, '').replace(/ \[Conformance\]$/, '');
for (const spec of specs) console.log(`${names.map((n) => (results[n].get(spec) ?? '-').padEnd(8)).join(' ')} ${short(spec)}`);
console.log(`${names.map((n) => `${n}: ${[...results[n].values()].filter((v) => v === 'passed').length}/${results[n].size} passed`).join('   ')}`);
if (names.length === 2) {
  const worse = specs.filter((s) => results.kapi.get(s) === 'failed' && results['kube-apiserver'].get(s) === 'passed');
  console.log(worse.length === 0 ? 'kapi passes every spec kube-apiserver passes' : `failed on kapi only: ${worse.map(short).join('; ')}`);
}
