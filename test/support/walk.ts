// Every file under a directory, recursively ([] when it does not exist): what a store keeps at
// rest, for tests that read it or take something from under it.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

export function walk(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}
