// The layer rules (.dependency-cruiser.cjs) fail on planted violations: a tree of a few files in a
// scratch directory, checked with the project's own config, must be refused rule by rule.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '..', '..');
const depcruise = join(root, 'node_modules', '.bin', 'depcruise');

function check(files: Record<string, string>): { ok: boolean; rules: string[] } {
  const dir = mkdtempSync(join(tmpdir(), 'sable-layers-'));
  dirs.push(dir);
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext' } }));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  const folders = [...new Set(Object.keys(files).map((p) => p.split('/')[0]!))];
  // The json reporter exits 0 whatever it finds: the violations are read from its report.
  const out = execFileSync(depcruise, [...folders, '--config', join(root, '.dependency-cruiser.cjs'), '--output-type', 'json'], { cwd: dir, encoding: 'utf8', maxBuffer: 1 << 26 });
  const violations = (JSON.parse(out) as { summary: { violations: { rule: { name: string } }[] } }).summary.violations;
  return { ok: violations.length === 0, rules: [...new Set(violations.map((v) => v.rule.name))].sort() };
}
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('layer rules', () => {
  it('pass a tree that keeps them', () => {
    expect(check({
      'control-plane/app.ts': "import { search } from '../retrieval/search.js';\nexport const app = search;\n",
      'retrieval/search.ts': "import { Engine } from '../engine/index.js';\nexport const search = Engine;\n",
      'engine/index.ts': "export const Engine = 1;\n",
    })).toEqual({ ok: true, rules: [] });
  });

  it('refuse an upward import, a reach past the engine index, a worker imported and a pool outside a pool file', () => {
    expect(check({
      'engine/index.ts': "import { app } from '../control-plane/app.js';\nexport const Engine = app;\n",
      'control-plane/app.ts': "export const app = 1;\n",
      'retrieval/search.ts': "import { x } from '../engine/inside.js';\nimport parse from '../ingest/parse/parse-worker.js';\nexport const search = [x, parse];\n",
      'engine/inside.ts': "export const x = 1;\n",
      'ingest/parse/parse-worker.ts': "export default function parse() {}\n",
      'bulk/loader.ts': "import { Piscina } from 'piscina';\nexport const p = Piscina;\n",
      'jobs/a.ts': "import { b } from './b.js';\nexport const a = () => b;\n",
      'jobs/b.ts': "import { a } from './a.js';\nexport const b = () => a;\n",
    })).toEqual({
      ok: false,
      rules: ['engine-through-its-index', 'layer-engine', 'layer-retrieval', 'no-circular', 'pools-in-pool-files', 'thread-entry-by-url'],
    });
  });

  it('refuse code (not types) of the service in the client', () => {
    expect(check({
      'client/client.ts': "import type { Hit } from '../engine/index.js';\nimport { Engine } from '../engine/index.js';\nexport type H = Hit;\nexport const e = Engine;\n",
      'engine/index.ts': "export interface Hit { id: number }\nexport const Engine = 1;\n",
    })).toEqual({ ok: false, rules: ['client-types-only'] });
  });
});

describe('tests and benchmarks', () => {
  it('do not import each other: what both need is in testkit/', () => {
    const files = execFileSync('git', ['ls-files', 'test', 'bench', 'testkit'], { cwd: root, encoding: 'utf8' }).split('\n').filter((f) => /\.(ts|mjs|cjs|js)$/.test(f));
    const crossing: string[] = [];
    for (const f of files) {
      const from = f.split('/')[0]!;
      for (const m of readFileSync(join(root, f), 'utf8').matchAll(/(?:from|import\(|require\()\s*'(\.[^']+)'/g)) {
        const to = resolve(root, dirname(f), m[1]!).slice(root.length + 1).replace(/^dist\//, '').split('/')[0]!;
        const apart = (a: string, b: string) => (from === a && to === b) || (from === b && to === a);
        if (apart('test', 'bench') || (from === 'testkit' && (to === 'test' || to === 'bench'))) crossing.push(`${f} -> ${m[1]}`);
      }
    }
    expect(crossing).toEqual([]);
    expect(files.length).toBeGreaterThan(100);
  });
});
