#!/usr/bin/env node
/**
 * Generated files are what their generators make (run by `npm run lint`):
 * - every file whose first line marks it generated has an intact header (scripts/generated.mjs: a hand
 *   edit changes the digest), and the files kapi generates are all marked;
 * - generators whose input is in the repo run again and their output must not differ
 *   (the bootstrap policy from its YAML, the built-in kinds' TypeScript types from the Go type model; the API
 *   report is checked by scripts/api-report.mjs).
 * The Go type model and the apiextensions OpenAPI definitions come from upstream's sources, which CI does
 * not have: their generators (gen-builtin-types.mjs, openapi-v3-to-v2.mjs) are run by hand with them.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HEADER, headerProblem } from './generated.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const GENERATED = ['src/api/go-types.ts', 'src/api/go-type-docs.ts', 'src/openapi/apiextensions-v1-definitions.ts', 'src/apis/rbac/bootstrap-policy.ts'];

const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard', 'src', 'test', 'bench'], { cwd: root, encoding: 'utf8' })
  .split('\n')
  .filter((f) => f.endsWith('.ts'));
let failed = false;
for (const f of files) {
  let text;
  try {
    text = readFileSync(join(root, f), 'utf8');
  } catch {
    continue; // deleted in the work tree
  }
  const marked = HEADER.test(text.slice(0, text.indexOf('\n')));
  if (!marked && !GENERATED.includes(f)) continue;
  const problem = marked ? headerProblem(text) : 'it is generated but not marked';
  if (problem) {
    console.error(`${f}: ${problem}`);
    failed = true;
  }
}
for (const generator of ['scripts/gen-bootstrap-policy.mjs', 'scripts/gen-kind-types.mjs']) {
  try {
    execFileSync(process.execPath, [join(root, generator), '--check'], { stdio: 'inherit' });
  } catch {
    failed = true;
  }
}
if (failed) process.exit(1);
