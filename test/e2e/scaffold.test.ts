/**
 * Scaffolding as apiserver-boot's: `kapi init` and `kapi create resource` make a project whose own `npm test`
 * passes right after generation (it installs kapi from this checkout and typescript from the registry), and
 * `kapi build config` writes the manifests that run it on a cluster.
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { freePort } from '../../bench/lib/reference-server.js';

const bin = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'bin', 'kapi.js');
const run = promisify(execFile);
const kapi = (args: string[], cwd: string) => run(process.execPath, [bin, ...args], { cwd, encoding: 'utf8', timeout: 30_000 });

/** Where a manager's HTTP server answers, and what. */
function httpGet(address: string, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolveGet, reject) => {
    const req = request(`http://${address}${path}`, { agent: false, timeout: 10_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolveGet({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error(`${path}: no answer in 10 s`)));
    req.on('error', reject);
    req.end();
  });
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('kapi init, create resource, build config', () => {
  let dir: string;
  let project: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'kapi-scaffold-'));
    project = join(dir, 'shop');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('makes a project whose tests pass right after generation', async () => {
    const init = await kapi(['init', 'shop', '--domain', 'example.com'], dir);
    assert.match(init.stdout, /wrote package\.json\n/);
    const created = await kapi(['create', 'resource', '--group', 'orders', '--version', 'v1', '--kind', 'Order'], project);
    assert.match(created.stdout, /wrote src\/apis\/orders\/v1\/order\.ts\nwrote src\/controllers\/order\.ts\nwrote test\/order\.test\.ts\n/);
    assert.match(readFileSync(join(project, 'src', 'resources.ts'), 'utf8'), /const resources: ResourceDefinition<any>\[\] = \[Order\];\nexport default resources;/);
    const again = await kapi(['create', 'resource', '--group', 'orders', '--version', 'v1', '--kind', 'Order'], project).catch((err: { stderr: string; code: number }) => err);
    assert.match((again as { stderr: string }).stderr, /Order\.orders\.example\.com exists already/);
    const badKind = await kapi(['create', 'resource', '--group', 'orders', '--version', 'v1', '--kind', 'order'], project).catch((err: { stderr: string }) => err);
    assert.match((badKind as { stderr: string }).stderr, /--kind "order": UpperCamelCase/);
    // A cluster-scoped one beside it (kubebuilder's --namespaced=false).
    await kapi(['create', 'resource', '--group', 'orders', '--version', 'v1', '--kind', 'Region', '--cluster'], project);
    assert.match(readFileSync(join(project, 'src', 'apis', 'orders', 'v1', 'region.ts'), 'utf8'), /kind: 'Region',\n  scope: 'Cluster',/);
    // A second version of Order, stored as it (kubebuilder's create api --version).
    const v2 = await kapi(['create', 'api', '--group', 'orders', '--kind', 'Order', '--version', 'v2', '--storage'], project);
    assert.match(v2.stdout, /wrote src\/apis\/orders\/v2\/order\.ts\nwrote src\/apis\/orders\/v1\/order\.ts\n/);
    assert.match(readFileSync(join(project, 'src', 'apis', 'orders', 'v1', 'order.ts'), 'utf8'), /import \{ v2 \} from '\.\.\/v2\/order\.js';[\s\S]*  versions: \[v1, v2\],/);
    // Its admission hooks as stubs (kubebuilder's create webhook), spread into its strategy.
    const hooks = await kapi(['create', 'webhook', '--group', 'orders', '--kind', 'Order', '--defaulting', '--programmatic-validation'], project);
    assert.match(hooks.stdout, /wrote src\/webhooks\/order\.ts\nwrote test\/order-webhooks\.test\.ts\nwrote src\/apis\/orders\/v1\/order\.ts\n/);
    assert.match(readFileSync(join(project, 'src', 'apis', 'orders', 'v1', 'order.ts'), 'utf8'), /import \{ orderWebhooks \} from '\.\.\/\.\.\/\.\.\/webhooks\/order\.js';[\s\S]*    \.\.\.orderWebhooks,\n  \},\n\}\);/);
    const twice = await kapi(['create', 'webhook', '--group', 'orders', '--kind', 'Order', '--defaulting'], project).catch((err: { stderr: string }) => err);
    assert.match((twice as { stderr: string }).stderr, /Order has webhooks already/);
    const none = await kapi(['create', 'webhook', '--group', 'orders', '--kind', 'Region'], project).catch((err: { stderr: string }) => err);
    assert.match((none as { stderr: string }).stderr, /say which hooks/);
    await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], { cwd: project, timeout: 180_000 });
    // The project's own test runner, not a child of this one (which would report to this runner, not print TAP).
    const env = { ...process.env };
    delete env.NODE_TEST_CONTEXT;
    const test = await run('npm', ['test'], { cwd: project, env, encoding: 'utf8', timeout: 180_000 });
    assert.match(test.stdout, /# pass 7\n# fail 0\n/);
  });

  /** The project's controller manager (`node dist/src/main.js`, built by its tests) against a server: its probes and metrics, then stopped. */
  const runManager = async (kubeconfig: string) => {
    const args = ['dist/src/main.js', '--kubeconfig', kubeconfig, '--health-probe-bind-address', '127.0.0.1:0', '--metrics-bind-address', '127.0.0.1:0'];
    const manager = spawn(process.execPath, args, { cwd: project, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    try {
      const running = await new Promise<RegExpMatchArray>((resolveRunning, reject) => {
        const timer = setTimeout(() => reject(new Error(`the manager did not run in 30 s:\n${out}`)), 30_000);
        const seen = (chunk: Buffer) => {
          out += chunk.toString();
          const m = /controller manager running \(probes (\S+), metrics (\S+)\)/.exec(out);
          if (m) {
            clearTimeout(timer);
            resolveRunning(m);
          }
        };
        manager.stdout.on('data', seen);
        manager.stderr.on('data', seen);
        manager.once('exit', (code) => reject(new Error(`the manager exited (${code}):\n${out}`)));
      });
      assert.deepEqual(await httpGet(running[1], '/readyz?verbose'), { status: 200, body: '[+]readyz ok\nhealthz check passed\n' });
      assert.deepEqual(await httpGet(running[1], '/healthz'), { status: 200, body: 'ok' });
      assert.match((await httpGet(running[2], '/metrics')).body, /^controller_runtime_max_concurrent_reconciles\{controller="order"\} 1$/m);
      const exited = new Promise((r) => manager.once('exit', r));
      manager.kill('SIGTERM');
      assert.equal(await exited, 0, out);
    } finally {
      if (manager.exitCode === null) manager.kill('SIGKILL');
    }
  };

  it('stops the server when `npm run serve` is stopped', async () => {
    const npm = spawn('npm', ['run', 'serve', '--', '--secure-port', '0', '--data-dir', join(dir, 'serve-data')], { cwd: project, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const serving = new Promise<void>((resolveServing, reject) => {
      const timer = setTimeout(() => reject(new Error(`not serving after 120 s:\n${out}`)), 120_000);
      const seen = (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('serving on')) {
          clearTimeout(timer);
          resolveServing();
        }
      };
      npm.stdout.on('data', seen);
      npm.stderr.on('data', seen);
    });
    await serving;
    await runManager(join(dir, 'serve-data', 'admin.kubeconfig'));
    // The server is npm's child (exec): find it, stop npm, and see it go.
    const children = (await run('pgrep', ['-P', String(npm.pid)], { encoding: 'utf8' })).stdout.trim().split('\n').map(Number);
    assert.equal(children.length, 1, `npm's children: ${children.join(' ')}`);
    const cmdline = readFileSync(`/proc/${children[0]}/cmdline`, 'utf8');
    assert.match(cmdline, /kapi(\.js)?\0serve\0/, 'the child is kapi serve itself, not a shell');
    const exited = new Promise((r) => npm.once('exit', r));
    npm.kill('SIGTERM');
    await exited;
    const gone = async () => {
      for (let i = 0; i < 100; i++) {
        if (!existsSync(`/proc/${children[0]}`)) return true;
        await new Promise((r) => setTimeout(r, 50));
      }
      return false;
    };
    try {
      assert.ok(await gone(), 'kapi serve ended with npm');
    } finally {
      // Left running (the failure above), it would hold this runner open through the pipes.
      if (existsSync(`/proc/${children[0]}`)) process.kill(children[0], 'SIGKILL');
      npm.stdout.destroy();
      npm.stderr.destroy();
    }
  });

  it('runs as CRDs on any cluster: generate manifests, apply them, and run the manager under their RBAC', async () => {
    const generated = await kapi(['generate', 'manifests'], project);
    assert.match(generated.stdout, /wrote config\/crd\/bases\/orders\.example\.com_orders\.yaml\n/);
    const role = parseAllDocuments(readFileSync(join(project, 'config', 'rbac', 'role.yaml'), 'utf8'))[0].toJSON();
    assert.deepEqual(role.rules, [
      { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
      { apiGroups: ['admissionregistration.k8s.io'], resources: ['mutatingwebhookconfigurations'], resourceNames: ['shop-mutating-webhook-configuration'], verbs: ['get', 'update'] },
      { apiGroups: ['admissionregistration.k8s.io'], resources: ['validatingwebhookconfigurations'], resourceNames: ['shop-validating-webhook-configuration'], verbs: ['get', 'update'] },
      { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], resourceNames: ['orders.orders.example.com'], verbs: ['get', 'update'] },
      { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] },
      { apiGroups: ['orders.example.com'], resources: ['orders'], verbs: ['get', 'list', 'patch', 'update', 'watch'] },
      { apiGroups: ['orders.example.com'], resources: ['orders/finalizers'], verbs: ['update'] },
      { apiGroups: ['orders.example.com'], resources: ['orders/status'], verbs: ['get', 'patch', 'update'] },
      { apiGroups: ['orders.example.com'], resources: ['regions'], verbs: ['get', 'list', 'patch', 'update', 'watch'] },
      { apiGroups: ['orders.example.com'], resources: ['regions/finalizers'], verbs: ['update'] },
      { apiGroups: ['orders.example.com'], resources: ['regions/status'], verbs: ['get', 'patch', 'update'] },
    ]);
    // The project's own files are not written over; the generated ones are.
    const managerFile = join(project, 'config', 'manager', 'manager.yaml');
    writeFileSync(managerFile, readFileSync(managerFile, 'utf8').replace("cpu: 10m", "cpu: 20m"));
    const again = await kapi(['generate', 'manifests'], project);
    assert.doesNotMatch(again.stdout, /manager\.yaml/);
    assert.match(again.stdout, /wrote config\/rbac\/role\.yaml\n/);
    assert.match(readFileSync(managerFile, 'utf8'), /cpu: 20m/);

    // A cluster that knows nothing of the project: kapi serving no resources of its own.
    const data = join(dir, 'crd-mode');
    const server = spawn(process.execPath, [bin, 'serve', '--data-dir', data, '--secure-port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let serverOut = '';
    server.stdout.on('data', (c: Buffer) => (serverOut += c));
    server.stderr.on('data', (c: Buffer) => (serverOut += c));
    let manager: ReturnType<typeof spawn> | undefined;
    try {
      await until('kapi to serve', async () => serverOut.includes('serving on'));
      const admin = join(data, 'admin.kubeconfig');
      const kubectl = (args: string[], kubeconfig = admin) => run('kubectl', ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'crd-mode-cache'), ...args], { cwd: project, encoding: 'utf8', timeout: 60_000 });
      const applied = await kubectl(['apply', '-k', 'config/default']);
      assert.match(applied.stdout, /customresourcedefinition\.apiextensions\.k8s\.io\/orders\.orders\.example\.com created/);
      assert.match(applied.stdout, /deployment\.apps\/shop-controller-manager created/);
      await until('the Order CRD to be served', async () => (await kubectl(['get', 'orders', '-A']).then(() => true, () => false)));
      // The manager with its ServiceAccount's token: nothing but the generated RBAC lets it work.
      const token = (await kubectl(['create', 'token', 'shop-controller-manager', '-n', 'shop-system'])).stdout.trim();
      const cluster = parseAllDocuments(readFileSync(admin, 'utf8'))[0].toJSON().clusters[0];
      const saConfig = join(dir, 'sa.kubeconfig');
      writeFileSync(
        saConfig,
        JSON.stringify({ apiVersion: 'v1', kind: 'Config', clusters: [cluster], users: [{ name: 'sa', user: { token } }], contexts: [{ name: 'sa', context: { cluster: cluster.name, user: 'sa' } }], 'current-context': 'sa' }),
      );
      // The Order's validate hook runs as the manager's webhook: its Service reaches the manager (no kubelet here:
      // its Endpoints are written as a cluster's would be), its certificate the manager's own (in a Secret).
      const webhookPort = await freePort();
      const endpoints = join(dir, 'endpoints.json');
      writeFileSync(endpoints, JSON.stringify({ apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'shop-webhook-service', namespace: 'shop-system' }, subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'webhook-server', port: webhookPort }] }] }));
      await kubectl(['apply', '-f', endpoints]);
      manager = spawn(process.execPath, ['dist/src/main.js', '--kubeconfig', saConfig, '--leader-elect', '--health-probe-bind-address', '127.0.0.1:0', '--webhook-port', String(webhookPort)], {
        cwd: project,
        env: { ...process.env, POD_NAMESPACE: 'shop-system' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let managerOut = '';
      manager.stdout!.on('data', (c: Buffer) => (managerOut += c));
      manager.stderr!.on('data', (c: Buffer) => (managerOut += c));
      await until('the manager to run', async () => managerOut.includes('controller manager running'));
      const order = join(dir, 'order.yaml');
      writeFileSync(order, 'apiVersion: orders.example.com/v1\nkind: Order\nmetadata:\n  name: first\n  namespace: default\nspec: {}\n');
      await kubectl(['apply', '-f', order]);
      const ready = async () => (await kubectl(['get', 'order', 'first', '-n', 'default', '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}'])).stdout === 'True';
      await until('the Order to be Ready', ready).catch((err: Error) => {
        throw new Error(`${err.message}; the manager said: ${managerOut}`);
      });
      // Stored as v2, read as either: the manager's conversion webhook, through its Service.
      assert.equal((await kubectl(['get', 'orders.v2.orders.example.com', 'first', '-n', 'default', '-o', 'jsonpath={.apiVersion}'])).stdout, 'orders.example.com/v2');
      assert.equal((await kubectl(['get', 'orders.v1.orders.example.com', 'first', '-n', 'default', '-o', 'jsonpath={.apiVersion}'])).stdout, 'orders.example.com/v1');
      // The cluster-scoped kind too, under the same RBAC.
      const region = join(dir, 'region.yaml');
      writeFileSync(region, 'apiVersion: orders.example.com/v1\nkind: Region\nmetadata:\n  name: west\nspec: {}\n');
      await kubectl(['apply', '-f', region]);
      await until('the Region to be Ready', async () => (await kubectl(['get', 'region', 'west', '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}'])).stdout === 'True');
      const big = join(dir, 'big.yaml');
      writeFileSync(big, 'apiVersion: orders.example.com/v1\nkind: Order\nmetadata:\n  name: big\n  namespace: default\nspec:\n  replicas: 1001\n');
      const refused = await kubectl(['apply', '-f', big]).then(() => undefined, (err: { stderr: string }) => err.stderr);
      // Only the hook says so (the CRD's schema has no maximum); kubectl prints a 422's causes its own way.
      assert.match(String(refused), /The Order "big" is invalid: spec\.replicas: Invalid value: 1001: must be no more than 1000/);
      const bigJson = join(dir, 'big.json');
      writeFileSync(bigJson, JSON.stringify({ apiVersion: 'orders.example.com/v1', kind: 'Order', metadata: { name: 'big', namespace: 'default' }, spec: { replicas: 1001 } }));
      const status = await new Promise<{ code: number; message: string }>((resolvePost, reject) => {
        const req = httpsRequest(
          `${cluster.cluster.server}/apis/orders.example.com/v1/namespaces/default/orders`,
          { method: 'POST', ca: readFileSync(join(data, 'pki', 'ca.crt')), headers: { authorization: `Bearer ${readFileSync(join(data, 'admin.token'), 'utf8').trim()}`, 'content-type': 'application/json' } },
          (res) => {
            let body = '';
            res.on('data', (c: Buffer) => (body += c));
            res.on('end', () => resolvePost(JSON.parse(body)));
          },
        );
        req.on('error', reject);
        req.end(readFileSync(bigJson));
      });
      assert.deepEqual([status.code, status.message], [422, 'admission webhook "vorder.orders.example.com" denied the request: Order.orders.example.com "big" is invalid: spec.replicas: Invalid value: 1001: must be no more than 1000']);
      assert.doesNotMatch(managerOut, /forbidden/i);
    } finally {
      manager?.kill('SIGKILL');
      server.kill('SIGKILL');
    }
  });

  it('writes the manifests to run the project on a cluster', async () => {
    await kapi(['build', 'config', '--image', 'registry.example.com/shop:1'], project);
    // (beside the kustomize directories of generate manifests)
    const files = readdirSync(join(project, 'config')).filter((f) => f.endsWith('.yaml')).sort();
    assert.deepEqual(files, ['apiserver.yaml', 'apiservice.yaml', 'controller-manager.yaml', 'etcd.yaml', 'namespace.yaml', 'rbac.yaml']);
    const objects = files.flatMap((f) => parseAllDocuments(readFileSync(join(project, 'config', f), 'utf8')).map((d) => d.toJSON()));
    const kinds = objects.map((o) => `${o.kind}/${o.metadata.name}`).sort();
    assert.deepEqual(kinds, [
      'APIService/v1.orders.example.com',
      'APIService/v2.orders.example.com',
      'ClusterRole/shop:controller',
      'ClusterRoleBinding/shop:controller',
      'ClusterRoleBinding/shop:system:auth-delegator',
      'Deployment/shop-apiserver',
      'Deployment/shop-controller-manager',
      'Namespace/shop-system',
      'RoleBinding/shop:extension-apiserver-authentication-reader',
      'Service/etcd',
      'Service/shop-apiserver',
      'ServiceAccount/shop',
      'StatefulSet/etcd',
    ]);
    const apiserver = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'shop-apiserver');
    assert.ok(apiserver.spec.template.spec.containers[0].args.includes('--etcd-servers=http://etcd.shop-system.svc:2379'));
    assert.ok(apiserver.spec.template.spec.containers[0].args.includes('--resources=dist/src/resources.js'));
    // The aggregator verifies the apiserver: its certificate in a Secret, its CA written into the APIServices.
    assert.ok(apiserver.spec.template.spec.containers[0].args.includes('--serving-cert-service=shop-system/shop-apiserver'));
    for (const a of objects.filter((o) => o.kind === 'APIService')) assert.equal(a.spec.insecureSkipTLSVerify, undefined, a.metadata.name);
    const role = objects.find((o) => o.kind === 'ClusterRole' && o.metadata.name === 'shop:controller');
    assert.deepEqual(role.rules.find((r: { verbs: string[]; resources: string[] }) => r.verbs.includes('update') && r.resources.includes('apiservices')).resourceNames, ['v1.orders.example.com', 'v2.orders.example.com']);
    // The manager's probes, on the port its flags name; requests and limits on both.
    const manager = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'shop-controller-manager').spec.template.spec.containers[0];
    assert.ok(manager.command.includes('--health-probe-bind-address=:8081'));
    assert.deepEqual([manager.livenessProbe.httpGet, manager.readinessProbe.httpGet], [{ path: '/healthz', port: 8081 }, { path: '/readyz', port: 8081 }]);
    for (const c of [manager, apiserver.spec.template.spec.containers[0]]) assert.ok(c.resources.requests.memory && c.resources.limits.memory, `${c.name}: requests and limits`);
  });
});
