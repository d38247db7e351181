#!/usr/bin/env node
// The kapi command: dist/kapi.cjs is the bundle `npm run build` (run by `npm install`) makes from
// src/cli/main.ts (scripts/bundle.mjs); one file loads far faster than hundreds of modules.
// It is compiled with V8's code cache, dist/kapi-<digest>-<node version>.v8cache, which the first run that lasts two
// seconds (a `kapi serve`) writes beside it when it can: the bundle's compile then costs about 10 ms instead of
// 45 (Node 20 has no compile cache of its own). The digest, on the bundle's first line, ties a cache to the
// bundle it was made from; V8 refuses one made by another version or with other flags, and it is made again.
// V8 does not check the rest (a damaged cache can crash it): the file starts with the CRC-32 of what follows.
// V8's young generation keeps Node's default size (16 MB semi-spaces): at 8 MB, garbage
// collection cost a create 50 µs of CPU instead of 35 (bench/stages.ts), for 25 MB less RSS.
import { isAscii } from 'node:buffer';
import { readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import zlib from 'node:zlib';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';

const dist = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist');
const filename = join(dist, 'kapi.cjs');

/** The bundle compiled (from the cache when there is one); the file's bytes and text are not kept past it. */
function compile() {
  const bytes = readFileSync(filename);
  const source = bytes.toString(isAscii(bytes) ? 'latin1' : 'utf8');
  const digest = /^\/\/kapi-bundle ([0-9a-f]{16})\n/.exec(source.slice(0, 40))?.[1];
  // zlib's crc32 came with Node 20.15: before it, no cache. One cache per Node version (V8 refuses another's).
  const crc32 = zlib.crc32;
  const cacheFile = digest && crc32 ? join(dist, `kapi-${digest}-${process.version}.v8cache`) : undefined;
  let cachedData;
  try {
    // Only a cache as trusted as the bundle: the same owner, and nobody else may write it.
    const own = statSync(filename);
    const cache = cacheFile ? statSync(cacheFile) : undefined;
    if (cache && cache.uid === own.uid && (cache.mode & 0o022) === 0) {
      const file = readFileSync(cacheFile);
      if (file.length > 4 && file.readUInt32BE(0) === crc32(file.subarray(4))) cachedData = file.subarray(4);
    }
  } catch {
    // none yet
  }
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, { filename, cachedData });
  if (cacheFile && (!cachedData || script.cachedDataRejected)) {
    // Made after the start, the cache holds the functions a start compiles, not only the bundle's top level.
    setTimeout(() => {
      const temporary = `${cacheFile}.${process.pid}`;
      const data = script.createCachedData();
      const sum = Buffer.alloc(4);
      sum.writeUInt32BE(zlib.crc32(data));
      // A new file (never one someone left at that name), readable by all, written by its owner only.
      writeFile(temporary, Buffer.concat([sum, data]), { mode: 0o644, flag: 'wx' })
        .then(() => renameSync(temporary, cacheFile))
        .catch(() => rmSync(temporary, { force: true })); // a read-only installation runs without it
    }, 2000).unref();
  }
  return script;
}

const script = compile();
// A script from the cache has no import() of its own in Node 20: the bundle imports users' modules with this one.
globalThis[Symbol.for('kapi.import')] = (specifier) => import(specifier);
const module = { exports: {} };
script.runInThisContext()(module.exports, createRequire(filename), module, filename, dist);
