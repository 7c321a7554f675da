#!/usr/bin/env node
/**
 * Builds the dashboard (dashboard/) into dist/dashboard/: type-checks it with its own tsconfig
 * (browser lib, Preact's JSX), bundles dashboard/src/main.tsx with esbuild (minified, names that
 * carry their content's hash; what is imported dynamically, as msgpackr by the client, in chunks
 * of its own that load on first use), writes index.html from dashboard/index.html, a .gz beside
 * every file (the service sends it as is to callers that accept gzip) and prints the page's
 * weight: what a first load fetches, and every file.
 * The build goes to a scratch directory first and replaces dist/dashboard/ whole, so a running
 * service never reads half of one.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = join(ROOT, 'dist', 'dashboard');
const SCRATCH = `${OUT}.building-${process.pid}`;
/** The page's weight the issue asks to stay under, gzipped. */
const BUDGET_BYTES = 200 * 1024;

const started = Date.now();
// esbuild strips types without checking them.
execFileSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(ROOT, 'dashboard', 'tsconfig.json')], { stdio: 'inherit' });

rmSync(SCRATCH, { recursive: true, force: true });
const result = await build({
  absWorkingDir: ROOT,
  entryPoints: ['dashboard/src/main.tsx'],
  bundle: true,
  minify: true,
  format: 'esm',
  splitting: true,
  platform: 'browser',
  target: ['chrome111', 'firefox114', 'safari16.4'],
  tsconfig: 'dashboard/tsconfig.json',
  outdir: join(SCRATCH, 'assets'),
  entryNames: '[name]-[hash]',
  assetNames: '[name]-[hash]',
  chunkNames: 'chunk-[hash]',
  metafile: true,
  legalComments: 'none',
  logLevel: 'warning',
});

const [js, script] = Object.entries(result.metafile.outputs).find(([, o]) => o.entryPoint === 'dashboard/src/main.tsx') ?? [];
if (!js || !script.cssBundle) throw new Error('the build wrote no script or no stylesheet');
const href = (file) => `./assets/${basename(file)}`;
const html = readFileSync(join(ROOT, 'dashboard', 'index.html'), 'utf8').replace('{{css}}', href(script.cssBundle)).replace('{{js}}', href(js));
writeFileSync(join(SCRATCH, 'index.html'), html);

// What a first load fetches: the page, its stylesheet, its script and the chunks it imports statically.
const firstLoad = new Set([join(SCRATCH, 'index.html'), join(ROOT, script.cssBundle)]);
const addScript = (file) => {
  if (firstLoad.has(join(ROOT, file))) return;
  firstLoad.add(join(ROOT, file));
  for (const i of result.metafile.outputs[file].imports) if (i.kind === 'import-statement') addScript(i.path);
};
addScript(js);

let allBytes = 0;
let firstLoadBytes = 0;
const rows = [];
for (const entry of readdirSync(SCRATCH, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile()) continue;
  const file = join(entry.parentPath, entry.name);
  const gz = gzipSync(readFileSync(file), { level: 9 });
  writeFileSync(`${file}.gz`, gz);
  allBytes += gz.length;
  if (firstLoad.has(file)) firstLoadBytes += gz.length;
  rows.push(`  ${relative(SCRATCH, file).padEnd(32)} ${kb(statSync(file).size).padStart(9)} ${kb(gz.length).padStart(9)} gzipped${firstLoad.has(file) ? '' : ' (on first use)'}`);
}
rmSync(OUT, { recursive: true, force: true });
renameSync(SCRATCH, OUT);

console.log(`dashboard built into ${relative(ROOT, OUT)}/ in ${Date.now() - started} ms:\n${rows.join('\n')}`);
console.log(`page weight: ${kb(firstLoadBytes)} gzipped at first load, ${kb(allBytes)} every file (budget ${kb(BUDGET_BYTES)})`);
if (allBytes > BUDGET_BYTES) {
  console.error('the dashboard is over its weight budget');
  process.exit(1);
}

function kb(bytes) {
  return `${(bytes / 1024).toFixed(1)} KB`;
}
