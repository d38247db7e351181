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
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = join(root, '.cache', 'bin');
const arg = (name) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined);
const FOCUS = arg('--focus') ?? '\\[sig-api-machinery\\].*\\[Conformance\\]';
const SKIP = 'AdmissionWebhook|CustomResourceConversionWebhook|Aggregator|NodeConformance|all pods are removed when a namespace is deleted';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const freePort = () =>
  new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

/** A process of the setup, its output in a log file; stopped by its pid. */
function start(dir, name, command, args) {
  const log = join(dir, `${name}.log`);
  const p = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  const keep = (c) => {
    text += c;
    if (text.length > 4_000_000) text = text.slice(-2_000_000);
  };
  p.stdout.on('data', keep);
  p.stderr.on('data', keep);
  return {
    output: () => text,
    stop: async () => {
      writeFileSync(log, text);
      if (p.exitCode !== null) return;
      p.kill('SIGTERM');
      await Promise.race([new Promise((r) => p.once('exit', r)), sleep(10_000)]);
      if (p.exitCode === null) p.kill('SIGKILL');
    },
  };
}

async function until(what, check, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(250);
  }
}

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
  return start(dir, 'kube-controller-manager', join(bin, 'kube-controller-manager'), [
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
  const kapi = start(dir, 'kapi', process.execPath, [
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

/** kube-apiserver 1.20.2 on etcd, a token in system:masters, RBAC on, its default admission plugins. */
async function kubeApiserverSetup(dir) {
  const [port, etcdPort, peerPort] = [await freePort(), await freePort(), await freePort()];
  const etcd = start(dir, 'etcd', join(bin, 'etcd'), [
    `--data-dir=${join(dir, 'etcd')}`,
    `--listen-client-urls=http://127.0.0.1:${etcdPort}`,
    `--advertise-client-urls=http://127.0.0.1:${etcdPort}`,
    `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
  ]);
  const saKey = join(dir, 'sa.key');
  const saPub = join(dir, 'sa.pub');
  execFileSync('openssl', ['genrsa', '-out', saKey, '2048'], { stdio: 'ignore' });
  execFileSync('openssl', ['rsa', '-in', saKey, '-pubout', '-out', saPub], { stdio: 'ignore' });
  const token = execFileSync('openssl', ['rand', '-hex', '16']).toString().trim();
  writeFileSync(join(dir, 'tokens.csv'), `${token},admin,admin,system:masters\n`);
  const certs = join(dir, 'certs');
  const issuer = 'https://kubernetes.default.svc.cluster.local';
  const kas = start(dir, 'kube-apiserver', join(bin, 'kube-apiserver'), [
    `--etcd-servers=http://127.0.0.1:${etcdPort}`,
    `--secure-port=${port}`,
    '--insecure-port=0',
    '--bind-address=127.0.0.1',
    `--cert-dir=${certs}`,
    `--token-auth-file=${join(dir, 'tokens.csv')}`,
    '--authorization-mode=Node,RBAC',
    `--service-account-key-file=${saPub}`,
    `--service-account-signing-key-file=${saKey}`,
    `--service-account-issuer=${issuer}`,
    `--api-audiences=${issuer}`,
    '--service-cluster-ip-range=10.0.0.0/24',
  ]);
  const url = `https://127.0.0.1:${port}`;
  const request = client(url, token, undefined);
  await until('kube-apiserver to be ready', async () => (await request('GET', '/readyz')).status === 200, 120_000);
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(
    kubeconfig,
    `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "${url}", insecure-skip-tls-verify: true}}]\nusers: [{name: u, user: {token: "${token}"}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n`,
  );
  return { kubeconfig, request, processes: [controllerManager(dir, kubeconfig, saKey, join(certs, 'apiserver.crt')), kas, etcd] };
}

/** The suite against one setup: each spec's outcome (passed, failed) by name, from its JUnit report. */
async function run(name, setup) {
  const dir = mkdtempSync(join(tmpdir(), `kapi-conformance-${name}-`));
  const s = await setup(dir);
  const stopNode = await keepNode(s.request);
  const started = Date.now();
  const e2e = start(dir, 'e2e', join(bin, 'e2e.test'), [
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
