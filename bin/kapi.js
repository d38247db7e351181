#!/usr/bin/env -S node --max-semi-space-size=8
// The kapi command: dist/kapi.mjs is the bundle `npm run build` (run by `npm install`) makes
// from src/cli/main.ts; one file loads far faster than hundreds of modules.
// --max-semi-space-size=8 (MB; Node's default is 16) caps V8's young generation: about
// 20 MB less resident memory under load for no measurable throughput. V8 reads it only
// at start, so it is a node flag here (and in `npm start`), not a setting in the code.
import '../dist/kapi.mjs';
