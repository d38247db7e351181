#!/usr/bin/env node
// The kapi command: dist/kapi.mjs is the bundle `npm run build` (run by `npm install`) makes
// from src/cli/main.ts; one file loads far faster than hundreds of modules.
// V8's young generation keeps Node's default size (16 MB semi-spaces): at 8 MB, garbage
// collection cost a create 50 µs of CPU instead of 35 (bench/stages.ts), for 25 MB less RSS.
import '../dist/kapi.mjs';
