#!/usr/bin/env node
// The kapi command: dist/kapi.mjs is the bundle `npm run build` (run by `npm install`) makes
// from src/cli/main.ts; one file loads far faster than hundreds of modules.
import '../dist/kapi.mjs';
