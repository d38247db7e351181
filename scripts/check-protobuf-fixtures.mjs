#!/usr/bin/env node
/**
 * Checks kapi's protobuf codec against upstream's round-trip fixtures (kubernetes/api testdata/HEAD:
 * each type filled in, as JSON and as protobuf): decoding the .pb must give the .json, and encoding
 * the .json must give the .pb, byte for byte. Run after `npm run build`:
 *
 *   node scripts/check-protobuf-fixtures.mjs <folder with the *.pb and *.json files>
 */
import { readdirSync, readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { join } from 'node:path';
import { decodeEnvelope, encodeEnvelope } from '../dist/src/machinery/protobuf/envelope.js';
import { decodeStruct, encodeStruct, structOfKind } from '../dist/src/machinery/protobuf/codec.js';

const dir = process.argv[2];
let ok = 0;
let failed = 0;
let skipped = 0;
const firstDiff = (a, b, path = '') => {
  if (isDeepStrictEqual(a, b)) return undefined;
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      const d = firstDiff(a[k], b[k], `${path}.${k}`);
      if (d) return d;
    }
  }
  return `${path}: got ${JSON.stringify(a)?.slice(0, 120)}, want ${JSON.stringify(b)?.slice(0, 120)}`;
};
for (const f of readdirSync(dir).filter((n) => n.endsWith('.pb')).sort()) {
  const pb = readFileSync(join(dir, f));
  const json = JSON.parse(readFileSync(join(dir, f.replace(/\.pb$/, '.json')), 'utf8'));
  const env = decodeEnvelope(pb);
  const slash = env.apiVersion.lastIndexOf('/');
  const id = structOfKind(slash < 0 ? '' : env.apiVersion.slice(0, slash), env.apiVersion.slice(slash + 1), env.kind);
  if (!id) {
    skipped++;
    continue;
  }
  const problems = [];
  try {
    const decoded = { kind: json.kind, apiVersion: json.apiVersion, ...decodeStruct(id, env.raw) };
    const d = firstDiff(decoded, json);
    if (d) problems.push(`decode ${d}`);
  } catch (e) {
    problems.push(`decode threw ${e.message}`);
  }
  try {
    const { kind, apiVersion, ...rest } = json;
    const encoded = encodeEnvelope(apiVersion, kind, encodeStruct(id, rest));
    if (!Buffer.from(encoded).equals(pb)) {
      let i = 0;
      while (i < pb.length && encoded[i] === pb[i]) i++;
      problems.push(`encode differs at byte ${i} of ${pb.length} (got ${encoded.length} bytes)`);
    }
  } catch (e) {
    problems.push(`encode threw ${e.message}`);
  }
  if (problems.length) {
    failed++;
    console.log(`${f}:\n  ${problems.join('\n  ')}`);
  } else ok++;
}
console.log(`${ok} fixtures match, ${failed} differ, ${skipped} of packages kapi does not read`);
process.exit(failed ? 1 : 0);
