/**
 * kapi as a package: `npm pack` gives a tarball that installs into any project, whose `kapi` command serves and
 * scaffolds; a project `kapi init` makes there depends on the same tarball (no checkout next to it), and lets npm
 * run install scripts (better-sqlite3 needs its own).
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import https from 'node:https';
import { after, before, describe, it } from 'node:test';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const run = promisify(execFile);
const NATIVE = join('node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node');
const version = (dir: string, pkg: string) => (JSON.parse(readFileSync(join(dir, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string }).version;

describe('the npm package', () => {
  let dir: string;
  let app: string;
  let tarball: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kapi-pack-'));
    // The built tree as it is (npm test built it): prepare would build it again.
    const packed = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], { cwd: repo, encoding: 'utf8', timeout: 120_000 });
    tarball = join(dir, (JSON.parse(packed.stdout) as Array<{ filename: string }>)[0].filename);
    app = join(dir, 'app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), '{ "name": "app", "private": true }\n');
    await run('npm', ['install', tarball, '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund'], { cwd: app, timeout: 300_000 });
    // better-sqlite3's install script builds its native module (or downloads a prebuilt one); this test takes the
    // one this checkout built for the same version rather than compile it again.
    assert.equal(version(app, 'better-sqlite3'), version(repo, 'better-sqlite3'));
    mkdirSync(dirname(join(app, NATIVE)), { recursive: true });
    copyFileSync(join(repo, NATIVE), join(app, NATIVE));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const kapi = (args: string[], cwd: string) => run(process.execPath, [join(app, 'node_modules', 'kapi', 'bin', 'kapi.js'), ...args], { cwd, encoding: 'utf8', timeout: 60_000 });

  it('installs from its tarball with the built code and no sources or tests', () => {
    const files = readdirSync(join(app, 'node_modules', 'kapi', 'dist'));
    assert.ok(files.includes('kapi.cjs') && files.includes('sqlite-writer.js') && files.includes('yaml-worker.js'), files.join(' '));
    assert.equal(existsSync(join(app, 'node_modules', 'kapi', 'src')), false);
    assert.equal(existsSync(join(app, 'node_modules', 'kapi', 'dist', 'test')), false);
  });

  it('serves from the installed package', async () => {
    assert.match((await kapi(['--version'], app)).stdout, /^Kubernetes v1\.\d+\.\d+-kapi\.\d+\.\d+\.\d+\n$/);
    const server = spawn(process.execPath, [join(app, 'node_modules', 'kapi', 'bin', 'kapi.js'), 'serve', '--data-dir', join(app, '.kapi'), '--secure-port', '0'], { cwd: app, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      let out = '';
      const url = await new Promise<string>((resolveUrl, reject) => {
        const timer = setTimeout(() => reject(new Error(`no "serving" line in 30 s:\n${out}`)), 30_000);
        const seen = (chunk: Buffer) => {
          out += chunk.toString();
          const m = /serving on (https:\/\/\S+)/.exec(out);
          if (m) {
            clearTimeout(timer);
            resolveUrl(m[1]);
          }
        };
        server.stdout.on('data', seen);
        server.stderr.on('data', seen);
        server.once('exit', (code) => reject(new Error(`kapi serve exited (${code}):\n${out}`)));
      });
      const token = readFileSync(join(app, '.kapi', 'admin.token'), 'utf8').trim();
      const ca = readFileSync(join(app, '.kapi', 'pki', 'ca.crt'));
      const ns = await new Promise<{ status: number; body: string }>((resolveGet, reject) => {
        https
          .get(`${url}/api/v1/namespaces/default`, { ca, headers: { authorization: `Bearer ${token}` } }, (res) => {
            let body = '';
            res.on('data', (c: Buffer) => (body += c.toString()));
            res.on('end', () => resolveGet({ status: res.statusCode ?? 0, body }));
          })
          .on('error', reject);
      });
      assert.equal(ns.status, 200, ns.body);
      assert.equal(JSON.parse(ns.body).metadata.name, 'default');
    } finally {
      server.kill('SIGTERM');
    }
  });

  it('makes projects that depend on the same tarball, with install scripts on', async () => {
    await kapi(['init', 'fleet', '--domain', 'example.com'], app);
    const pkg = JSON.parse(readFileSync(join(app, 'fleet', 'package.json'), 'utf8')) as { dependencies: Record<string, string>; scripts: Record<string, string> };
    assert.equal(pkg.dependencies.kapi, `file:../../${tarball.slice(dir.length + 1)}`);
    assert.equal(existsSync(join(app, 'fleet', '.npmrc')), false, 'no ignore-scripts: better-sqlite3 must build');
    assert.match(pkg.scripts.serve, /&& exec kapi serve/);
    // --kapi names another source: a version range from the registry, or a checkout (linked: scripts off).
    await kapi(['init', 'pinned', '--domain', 'example.com', '--kapi', '^0.1.0'], app);
    assert.equal((JSON.parse(readFileSync(join(app, 'pinned', 'package.json'), 'utf8')) as { dependencies: Record<string, string> }).dependencies.kapi, '^0.1.0');
    await kapi(['init', 'linked', '--domain', 'example.com', '--kapi', repo], app);
    assert.match((JSON.parse(readFileSync(join(app, 'linked', 'package.json'), 'utf8')) as { dependencies: Record<string, string> }).dependencies.kapi, /^file:\.\.\//);
    assert.equal(readFileSync(join(app, 'linked', '.npmrc'), 'utf8'), 'ignore-scripts=true\n');
  });
});
