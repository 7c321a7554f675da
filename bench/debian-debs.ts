// Debian packages for the benches' corpora: `apt-get download` (never installed) into a cache
// folder, with one refresh of the package lists when a fresh container has none.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** The .deb of `name` in `dir` (the last by name if several), if any. */
export function debOf(dir: string, name: string): string | undefined {
  const file = readdirSync(dir)
    .filter((f) => f.startsWith(`${name}_`) && f.endsWith('.deb'))
    .sort()
    .pop();
  return file && join(dir, file);
}

/** Downloads the packages `dir` lacks (one apt-get call); throws with apt-get's message. */
export function downloadDebs(dir: string, names: readonly string[], log: (m: string) => void): void {
  mkdirSync(dir, { recursive: true });
  const missing = names.filter((name) => !debOf(dir, name));
  if (missing.length === 0) return;
  log(`apt-get download ${missing.join(' ')} (once; cached in ${dir})`);
  const download = () => spawnSync('apt-get', ['download', ...missing], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  let r = download();
  if (r.status !== 0) {
    spawnSync('apt-get', ['update'], { stdio: 'ignore' });
    r = download();
  }
  if (r.error || r.status !== 0) throw new Error(`apt-get download ${missing.join(' ')} failed: ${r.error?.message ?? String(r.stderr).trim()}`);
}

/** The package `name` unpacked (dpkg-deb -x, once) into `dir`/`name`, from its .deb in `debs`; returns that folder. */
export function unpackedDeb(debs: string, dir: string, name: string): string {
  const into = join(dir, name);
  if (!existsSync(into)) {
    const deb = debOf(debs, name);
    if (!deb) throw new Error(`${name}: no .deb in ${debs}`);
    mkdirSync(into, { recursive: true });
    const r = spawnSync('dpkg-deb', ['-x', deb, into], { stdio: ['ignore', 'ignore', 'pipe'] });
    if (r.status !== 0) throw new Error(`dpkg-deb -x ${deb}: ${String(r.stderr)}`);
  }
  return into;
}
