/**
 * Finds the native uWebSockets.js binary for the running Node and loads it, or says why none
 * loads. Only a `.node` file is ever loaded: the alias package's main module falls back to a JS
 * emulation of uWS where it has no binary, and that emulation threw `Invalid URL` on the first
 * request under Node 24 and ended the process. node:http is the fallback, never the emulation.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

export type Uws = typeof import('uWebSockets.js');

interface BinarySource {
  /** The package's folder name under node_modules. */
  pkg: string;
  /** Its folder of binaries, each named uws_<platform>_<arch>_<Node ABI>.node. */
  dir: string;
  /**
   * sha256 of the binaries that may load from this package; a binary not named here is never
   * loaded. Absent: every binary it ships may load (npm's lock integrity is the only check).
   */
  pinned?: Record<string, string>;
}

/**
 * In order of preference. The alias (`@trufflesuite/uws-js-unofficial`) ships ABIs 93, 108 and 115
 * (Node 16, 18, 20). `uws-pack` is an older uWS repacked by one maintainer, with ABI 127 (Node 22)
 * binaries built on glibc 2.27: only the one tested here loads, and only with this hash.
 */
export const UWS_SOURCES: readonly BinarySource[] = [
  { pkg: 'uWebSockets.js', dir: 'binaries' },
  { pkg: 'uws-pack', dir: 'dist/bin', pinned: { 'uws_linux_x64_127.node': '8cabc918bbf9a07323e54f89a33882491080b2eb35df0607f473ccdb1f3c31af' } },
];

export interface LoadedUws {
  uws: Uws;
  /** Which file of which package, e.g. `uws-pack 20.0.8 uws_linux_x64_127.node`. */
  source: string;
}

let loaded: LoadedUws | Error | undefined;

/** The native uWS for this Node (loaded once per process), or the reason there is none. */
export function loadUws(): LoadedUws | Error {
  return (loaded ??= findAndLoad());
}

function findAndLoad(): LoadedUws | Error {
  const file = binaryName(process.versions.modules);
  const tried: string[] = [];
  for (const source of UWS_SOURCES) {
    const root = packageRoot(source.pkg);
    if (!root) {
      tried.push(`${source.pkg} is not installed`);
      continue;
    }
    const name = `${source.pkg} ${packageVersion(root)}`;
    const path = join(root, source.dir, file);
    if (!existsSync(path)) {
      tried.push(`${name} ships ABI ${shippedAbis(join(root, source.dir)).join(', ') || 'none'}`);
      continue;
    }
    if (source.pinned) {
      const want = source.pinned[file];
      if (!want) {
        tried.push(`${name} ships ${file}, but only pinned binaries of it load (${Object.keys(source.pinned).join(', ')})`);
        continue;
      }
      const got = sha256(path);
      if (got !== want) {
        tried.push(`${name} ${file} has sha256 ${got}, not the pinned ${want}: refused`);
        continue;
      }
    }
    try {
      const uws = createRequire(import.meta.url)(path) as Uws;
      if (typeof uws.App !== 'function' || typeof uws.us_socket_local_port !== 'function') {
        tried.push(`${name} ${file} loaded but is not uWS`);
        continue;
      }
      return { uws, source: `${name} ${file}` };
    } catch (e) {
      tried.push(`${name} ${file} does not load: ${(e as Error).message.split('\n')[0]}`);
    }
  }
  return new Error(
    `no native uWebSockets.js binary loads on Node ${process.version} (ABI ${process.versions.modules}, ${process.platform}-${process.arch}): ${tried.join('; ')}`,
  );
}

/** Every pinned binary that is installed, checked against its hash: what the install verifies. */
export function verifyPinnedUws(): { ok: string[]; bad: string[] } {
  const ok: string[] = [];
  const bad: string[] = [];
  for (const source of UWS_SOURCES) {
    if (!source.pinned) continue;
    const root = packageRoot(source.pkg);
    for (const [file, want] of Object.entries(source.pinned)) {
      const path = root && join(root, source.dir, file);
      if (!path || !existsSync(path)) {
        bad.push(`${source.pkg} ${file} is missing`);
        continue;
      }
      const got = sha256(path);
      (got === want ? ok : bad).push(`${source.pkg} ${packageVersion(root)} ${file} sha256 ${got === want ? 'ok' : `${got}, pinned ${want}`}`);
    }
  }
  return { ok, bad };
}

function binaryName(abi: string): string {
  return `uws_${process.platform}_${process.arch}_${abi}.node`;
}

/** The package's folder: found on Node's search path, not resolved (uws-pack exports only ESM). */
function packageRoot(pkg: string): string | undefined {
  const paths = createRequire(import.meta.url).resolve.paths(pkg) ?? [];
  return paths.map((p) => join(p, pkg)).find((dir) => existsSync(join(dir, 'package.json')));
}

function packageVersion(root: string): string {
  return (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
}

function shippedAbis(dir: string): string[] {
  const prefix = `uws_${process.platform}_${process.arch}_`;
  const files = existsSync(dir) ? readdirSync(dir) : [];
  return files.filter((f) => f.startsWith(prefix) && f.endsWith('.node')).map((f) => f.slice(prefix.length, -5)).sort((a, b) => Number(a) - Number(b));
}

function sha256(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}
