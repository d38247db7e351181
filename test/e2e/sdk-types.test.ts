/**
 * The SDK's types as a TypeScript user meets them: a field with a schema default is optional when written and there
 * when read, and is not `required` in the CRD (kubectl explain does not mark it); readonly lists of resources are
 * taken; kapi's declarations compile under `exactOptionalPropertyTypes` without skipLibCheck.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { defineResource, t, version, type InputOf, type TypeOf } from '../../src/sdk/index.js';
import { startTestServer, type TestServer } from '../../src/testing/index.js';

const v1 = version('v1', {
  spec: t.object({
    size: t.integer({ minimum: 0, default: 3, description: 'How many.' }),
    name: t.string(),
    note: t.optional(t.string()),
  }),
});
type Gadget = TypeOf<typeof v1>;
type GadgetInput = InputOf<typeof v1>;
const Gadget = defineResource<Gadget>({ group: 'types.example.com', kind: 'Gadget', versions: [v1] });
const resources = [Gadget] as const;

/** kubectl (from .cache/bin, as the e2e harness runs it) against the test server. */
async function kubectl(s: TestServer, args: string[]): Promise<{ stdout: string }> {
  return promisify(execFile)(resolve('.cache/bin/kubectl'), ['--kubeconfig', s.kubeconfigPath, ...args], { timeout: 60_000 });
}

describe('SDK types', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ resources });
  });
  after(() => s.stop());

  it('leaves a defaulted field out of required: optional to write, there when read', async () => {
    const schema = (Gadget.crd.spec as any).versions[0].schema.openAPIV3Schema.properties.spec;
    assert.deepEqual(schema.required, ['name']);
    const gadgets = s.client().resource<Gadget, GadgetInput>(Gadget);
    const input: GadgetInput = { apiVersion: 'types.example.com/v1', kind: 'Gadget', metadata: { name: 'g' }, spec: { name: 'g' } };
    const created: Gadget = await gadgets.create('default', input);
    const size: number = created.spec.size;
    assert.equal(size, 3);
    const explained = await kubectl(s, ['explain', 'gadgets.spec']);
    assert.match(explained.stdout, /name\s+<string> -required-/);
    assert.match(explained.stdout, /size\s+<integer>\s*\n/, 'size is not marked required');
  });

  it('compiles against kapi\'s declarations with exactOptionalPropertyTypes and no skipLibCheck', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kapi-types-'));
    try {
      mkdirSync(join(dir, 'node_modules'));
      symlinkSync(resolve('.'), join(dir, 'node_modules', 'kapi'));
      writeFileSync(
        join(dir, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, exactOptionalPropertyTypes: true, skipLibCheck: false, noEmit: true, types: ['node'], typeRoots: [resolve('node_modules/@types')] },
          include: ['a.ts'],
        }),
      );
      writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
      writeFileSync(
        join(dir, 'a.ts'),
        `import { defineResource, t, version, type InputOf, type TypeOf } from 'kapi/sdk';
import { startTestServer } from 'kapi/testing';
import { start } from 'kapi';
const v1 = version('v1', { spec: t.object({ size: t.integer({ default: 1 }), note: t.optional(t.string()) }) });
type Thing = TypeOf<typeof v1>;
const Thing = defineResource<Thing>({ group: 'things.example.com', kind: 'Thing', versions: [v1] });
const input: InputOf<typeof v1> = { metadata: { name: 'a' }, spec: {} };
const read = (x: Thing): number => x.spec.size;
export const run = async () => [await startTestServer({ resources: [Thing] as const }), start, input, read];
`,
      );
      const tsc = resolve('node_modules/typescript/bin/tsc');
      const r = await promisify(execFile)(process.execPath, [tsc, '-p', dir], { timeout: 120_000 }).catch((e: { stdout: string; stderr: string }) => e);
      assert.equal(r.stdout + r.stderr, '', 'tsc reports nothing');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
