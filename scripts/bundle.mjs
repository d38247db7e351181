#!/usr/bin/env node
/**
 * Builds what the `kapi` command runs (`npm run bundle`, part of `npm run build`):
 * - dist/kapi.cjs: the CLI and server in one CommonJS file (with its source map). bin/kapi.js compiles it
 *   with V8's code cache (dist/kapi-<digest>-<node version>.v8cache, written by the first `kapi serve`), which Node 20 has
 *   no flag for and an ES module cannot use: a cold compile of the bundle costs about 45 ms, the cache about 10.
 *   Its first line names the digest of the rest, so a cache is only ever read by the bundle it was made from.
 *   The etcd client and its gRPC modules are required when `--etcd-servers` asks for them, not at start.
 * - dist/sqlite-writer.js and dist/yaml-worker.js: the worker threads' entry points (ES modules).
 * - dist/console: the web console (scripts/build-console.mjs).
 * Every non-ASCII character of the sources is written as an escape (`\uXXXX`), so the bundle is ASCII and
 * bin/kapi.js reads it as a one-byte string (a UTF-8 decode of the 3 MB costs 7 ms, latin1 3).
 */
import { build } from 'esbuild';
import { isAscii } from 'node:buffer';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const EXTERNAL = ['better-sqlite3', '@grpc/grpc-js', '@grpc/proto-loader', 'protobufjs'];
const REQUIRE_BANNER = "import { createRequire as __kapiRequire } from 'node:module'; const require = __kapiRequire(import.meta.url);";

for (const f of readdirSync(dist)) if (/^kapi[.-]/.test(f)) rmSync(join(dist, f));

/**
 * Loads every source with its non-ASCII characters as `\uXXXX` escapes: the same value in a string, regular
 * expression, template or identifier. In a raw template (`String.raw`) it would not be, unless the text is
 * JSON, as the generated go-type-docs.ts is; the build fails on any other raw template with such characters.
 */
const asciiSources = {
  name: 'ascii-sources',
  setup(b) {
    b.onLoad({ filter: /\.(ts|js|mjs|cjs)$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      if (!/[^\x00-\x7f]/.test(text)) return undefined;
      if (text.includes('String.raw') && !args.path.endsWith('go-type-docs.ts')) throw new Error(`${args.path}: a raw template with non-ASCII text`);
      const escaped = text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
      return { contents: escaped, loader: args.path.endsWith('.ts') ? 'ts' : 'js' };
    });
  },
};

const common = { bundle: true, platform: 'node', target: 'node20', minifyWhitespace: true, minifySyntax: true, logLevel: 'warning' };

await build({
  ...common,
  entryPoints: [join(root, 'src', 'cli', 'main.ts')],
  format: 'cjs',
  outfile: join(dist, 'kapi.cjs'),
  external: EXTERNAL,
  sourcemap: true,
  charset: 'ascii',
  plugins: [asciiSources],
  // The modules find their files (the worker threads' entry points, the console) beside the bundle.
  define: { 'import.meta.url': '__kapiUrl' },
  banner: { js: "'use strict'; const __kapiUrl = require('node:url').pathToFileURL(__filename).href;" },
});
const bundle = readFileSync(join(dist, 'kapi.cjs'));
if (!isAscii(bundle)) throw new Error('dist/kapi.cjs is not ASCII');
const digest = createHash('sha256').update(bundle).digest('hex').slice(0, 16);
// The digest line keeps the source map's lines: the map is shifted by one line (";" at its start).
writeFileSync(join(dist, 'kapi.cjs'), Buffer.concat([Buffer.from(`//kapi-bundle ${digest}\n`), bundle]));
const map = JSON.parse(readFileSync(join(dist, 'kapi.cjs.map'), 'utf8'));
map.mappings = `;${map.mappings}`;
writeFileSync(join(dist, 'kapi.cjs.map'), JSON.stringify(map));

await build({ ...common, entryPoints: [join(root, 'src', 'storage', 'sqlite', 'sqlite-writer.ts')], format: 'esm', outfile: join(dist, 'sqlite-writer.js'), external: ['better-sqlite3'] });
await build({ ...common, entryPoints: [join(root, 'src', 'server', 'yaml-worker.ts')], format: 'esm', outfile: join(dist, 'yaml-worker.js'), banner: { js: REQUIRE_BANNER } });
await import('./build-console.mjs');
