// Builds the web console (console/) into dist/console: one ES module bundle (Preact, CodeMirror, yaml), its
// stylesheet, page and icon. The server reads them from there (src/server/console.ts).
import { build } from 'esbuild';
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist', 'console');
mkdirSync(out, { recursive: true });
await build({
  entryPoints: [join(root, 'console', 'src', 'main.tsx')],
  bundle: true,
  format: 'esm',
  target: 'es2022',
  platform: 'browser',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  minify: true,
  sourcemap: false,
  legalComments: 'none',
  outfile: join(out, 'app.js'),
  logLevel: 'warning',
});
for (const f of ['index.html', 'app.css', 'favicon.svg']) copyFileSync(join(root, 'console', f), join(out, f));
