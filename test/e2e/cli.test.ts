/** `kapi serve` as a user runs it: a real process, its kubeconfig, a token file, SIGTERM. */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { it } from 'node:test';
import { execFile } from 'node:child_process';
import { KUBECTL } from './harness.js';
import { openStorage } from '../../src/storage/index.js';

const bin = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'bin', 'kapi.js');

function get(url: string, ca: string, token: string): Promise<{ status: number; body: string }> {
  return new Promise((res, rej) => {
    const req = https.get(url, { ca, headers: { Authorization: `Bearer ${token}` }, timeout: 5000 }, (r) => {
      let body = '';
      r.on('data', (c) => (body += c));
      r.on('end', () => res({ status: r.statusCode ?? 0, body }));
    });
    req.on('error', rej);
  });
}

it('serves with TLS and a kubeconfig, honors a token file, and stops cleanly on SIGTERM', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kapi-cli-'));
  const dataDir = join(dir, 'data');
  const tokenFile = join(dir, 'tokens.csv');
  writeFileSync(tokenFile, 'alice-token,alice,1001,"dev,ops"\n');
  const child = spawn(process.execPath, [bin, 'serve', '--data-dir', dataDir, '--secure-port', '0', '--token-auth-file', tokenFile], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    let out = '';
    const url = await new Promise<string>((res, rej) => {
      const timer = setTimeout(() => rej(new Error(`kapi did not start: ${out}`)), 10_000);
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString();
        const m = /kapi serving on (https:\/\/\S+)[^]*export KUBECONFIG=/.exec(out);
        if (m && out.endsWith('\n')) {
          clearTimeout(timer);
          res(m[1]);
        }
      });
      child.once('exit', (code) => rej(new Error(`kapi exited with ${code}: ${out}`)));
    });
    assert.match(out, new RegExp(`export KUBECONFIG=${join(dataDir, 'admin.kubeconfig').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    const ca = readFileSync(join(dataDir, 'pki', 'ca.crt'), 'utf8');
    const version = await get(`${url}/version`, ca, '');
    assert.equal(version.status, 200);
    assert.equal(JSON.parse(version.body).major, '1');
    const alice = await get(`${url}/api/v1/namespaces`, ca, 'alice-token');
    assert.equal(alice.status, 200);
    const stranger = await get(`${url}/api/v1/namespaces`, ca, 'nope');
    assert.equal(stranger.status, 401);
    const kubectlOut = await new Promise<string>((res, rej) =>
      execFile(KUBECTL, ['--kubeconfig', join(dataDir, 'admin.kubeconfig'), '--cache-dir', join(dir, 'cache'), 'get', 'ns', '-o', 'name'], { timeout: 20_000 }, (err, stdout, stderr) =>
        err ? rej(new Error(stderr)) : res(stdout),
      ),
    );
    assert.match(kubectlOut, /namespace\/kube-system/);
    child.kill('SIGTERM');
    const code = await new Promise<number | null>((res) => child.once('exit', res));
    assert.equal(code, 0);
    assert.match(out, /SIGTERM, shutting down/);
    // The store was closed: it opens again, with the namespaces created at first start.
    const storage = openStorage({ kind: 'sqlite', path: join(dataDir, 'state.db') });
    try {
      assert.ok(await storage.get('/registry/namespaces/default'));
    } finally {
      await storage.close();
    }
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});
