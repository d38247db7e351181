#!/usr/bin/env node
// The kapi command, compiled by `npm install` (prepare) into dist/.
import '../dist/src/cli/main.js';
