// Adds lock entries for optional platform packages the registry mirror does not serve, so
// `npm ci` accepts the lock; npm skips them at install (optional, and the wrong platform).
import { readFileSync, writeFileSync } from 'node:fs';
const lockPath = process.argv[2];
const lock = JSON.parse(readFileSync(lockPath, 'utf8'));
const pkgs = lock.packages;
let added = 0;
for (const [path, meta] of Object.entries(pkgs)) {
  for (const [name, range] of Object.entries(meta.optionalDependencies ?? {})) {
    // npm resolves a dependency from the nearest node_modules up the tree
    const key = 'node_modules/' + name;
    if (pkgs[key] || pkgs[(path ? path + '/' : '') + key]) continue;
    pkgs[key] = { version: range.replace(/^[\^~]/, ''), optional: true };
    added++;
  }
}
writeFileSync(lockPath, JSON.stringify(lock, null, 2) + '\n');
console.log('added', added);
