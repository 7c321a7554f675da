/**
 * Finds the native uWebSockets.js binary for the running Node and loads it, or says why none
 * loads. Only a `.node` file is ever loaded: the alias package's main module falls back to a JS
 * emulation of uWS where it has no binary, and that emulation threw `Invalid URL` on the first
 * request under Node 24 and ended the process. node:http is the fallback, never the emulation.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

export type Uws = typeof import('uWebSockets.js');

/**
 * The alias `uWebSockets.js` (`@trufflesuite/uws-js-unofficial`) ships binaries for ABIs 93, 108
 * and 115 (Node 16, 18, 20): Node 22 and 24 serve on node:http. (uws-pack 20.0.8 has a Node 22
 * binary that loads here, but its uWS answers malformed requests with HTML pages, refuses HTTP/1.0
 * with 505 and caps headers at 4 KB: 141 contract violations in the fuzz suite.)
 */
const PACKAGE = 'uWebSockets.js';
const BINARIES = 'binaries';

export interface LoadedUws {
  uws: Uws;
  /** Which file of which package, e.g. `uWebSockets.js 20.30.0-unofficial.0 uws_linux_x64_115.node`. */
  source: string;
}

let loaded: LoadedUws | Error | undefined;

/** The native uWS for this Node (loaded once per process), or the reason there is none. */
export function loadUws(): LoadedUws | Error {
  return (loaded ??= findAndLoad());
}

function findAndLoad(): LoadedUws | Error {
  const file = `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
  const none = (why: string) =>
    new Error(`no native uWebSockets.js binary loads on Node ${process.version} (ABI ${process.versions.modules}, ${process.platform}-${process.arch}): ${why}`);
  const root = packageRoot(PACKAGE);
  if (!root) return none(`${PACKAGE} is not installed`);
  const name = `${PACKAGE} ${packageVersion(root)}`;
  const path = join(root, BINARIES, file);
  if (!existsSync(path)) return none(`${name} ships ABI ${shippedAbis(join(root, BINARIES)).join(', ') || 'none'}`);
  try {
    const uws = createRequire(import.meta.url)(path) as Uws;
    if (typeof uws.App !== 'function' || typeof uws.us_socket_local_port !== 'function') return none(`${name} ${file} loaded but is not uWS`);
    return { uws, source: `${name} ${file}` };
  } catch (e) {
    return none(`${name} ${file} does not load: ${(e as Error).message.split('\n')[0]}`);
  }
}

/** The package's folder, found on Node's search path (its main module is never resolved). */
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
