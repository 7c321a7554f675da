// hyparquet (pure JavaScript Parquet reader) with hyparquet-compressors (snappy and the rest),
// measured beside parquet-wasm as a decoder. Not a dependency of the project: installed on first
// use into bench/.cache/hyparquet, at exact versions, like bench/ann/env.ts installs LanceDB.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { paths } from '../ann/paths.js';

export const HYPARQUET_VERSION = '1.31.5';
export const HYPARQUET_COMPRESSORS_VERSION = '1.1.2';
export const HYPARQUET_PREFIX = join(paths.cache, 'hyparquet');

function installedVersion(name: string): string | null {
  const pkg = join(HYPARQUET_PREFIX, 'node_modules', name, 'package.json');
  return existsSync(pkg) ? (JSON.parse(readFileSync(pkg, 'utf8')) as { version: string }).version : null;
}

/** Installs the pinned versions when missing; throws with npm's last line when it cannot. */
export function ensureHyparquet(): void {
  if (installedVersion('hyparquet') === HYPARQUET_VERSION && installedVersion('hyparquet-compressors') === HYPARQUET_COMPRESSORS_VERSION) return;
  mkdirSync(HYPARQUET_PREFIX, { recursive: true });
  if (!existsSync(join(HYPARQUET_PREFIX, 'package.json'))) writeFileSync(join(HYPARQUET_PREFIX, 'package.json'), '{"name":"bench-hyparquet","private":true}\n');
  process.stderr.write(`[setup] installing hyparquet ${HYPARQUET_VERSION} and hyparquet-compressors ${HYPARQUET_COMPRESSORS_VERSION} into ${HYPARQUET_PREFIX}\n`);
  const r = spawnSync('npm', ['install', '--no-audit', '--no-fund', '-E', `hyparquet@${HYPARQUET_VERSION}`, `hyparquet-compressors@${HYPARQUET_COMPRESSORS_VERSION}`], { cwd: HYPARQUET_PREFIX, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`npm install of hyparquet failed: ${(r.stderr || r.stdout).trim().split('\n').pop()}`);
}

/** Imports an installed package (both are ES modules) by its resolved entry point. */
export async function importInstalled<T>(name: string): Promise<T> {
  const entry = createRequire(join(HYPARQUET_PREFIX, 'package.json')).resolve(name);
  return (await import(pathToFileURL(entry).href)) as T;
}
