// Every example runs against a fresh service and does what its README says; without a service,
// or without a key, it stops with one line that says what to do (no stack trace).
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type Service } from '../../dist/control-plane/app.js';
import { loadConfig } from '../../dist/control-plane/config.js';

const EXAMPLES = join(__dirname, '..', '..', 'examples');

function run(example: string, args: string[], env: Record<string, string>, cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [join(EXAMPLES, example), ...args], { cwd, env: { ...process.env, ...env }, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe('examples', () => {
  let dir: string;
  let svc: Service;
  let env: Record<string, string>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sable-examples-'));
    svc = await startService(loadConfig({ port: '0', 'data-dir': join(dir, '.sable-data') }, {}));
    env = { SABLE_URL: svc.url };
  });
  afterAll(async () => {
    await svc.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('examples/README.md lists every example', () => {
    const readme = readFileSync(join(EXAMPLES, 'README.md'), 'utf8');
    for (const name of ['search.mjs', 'bulk-load.mjs', 'ingest-folder.mjs', 'ask.mjs', 'sable.mjs']) expect(readme).toContain(`\`${name}`);
  });

  it('ask.mjs streams a cited answer through the typed client', async () => {
    const r = await run('ask.mjs', [], env, dir);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^A: The lighthouse keeper climbs 217 steps every evening to light the lamp\. \[1\]/m);
    expect(r.stdout).toMatch(/\[1\] lighthouse\.txt \(relevance 0\.\d+\)/);
  });

  it('search.mjs finds the pasta note for a cooking question, with its text, from the data directory key', async () => {
    // No SABLE_API_KEY: the key is read from ./.sable-data/admin.key, as after `npm start`.
    const r = await run('search.mjs', [], env, dir);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    const top = lines[lines.findIndex((l) => l.includes('how do I cook spaghetti?')) + 1];
    expect(top).toMatch(/note-1\s+Boil pasta/);
    expect(r.stdout).toMatch(/only topic=kitchen:\n\s+[\d.]+\s+Sourdough/);
  });

  it('bulk-load.mjs loads its demo file with progress lines and removes the file', async () => {
    const before = new Set(readdirTmp());
    const r = await run('bulk-load.mjs', ['--rows', '3000'], env, dir);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/completed: 3,000 vectors \(100%\), [\d,]+ vectors\/s/);
    expect(r.stdout).toContain('3000 vectors loaded');
    expect(readdirTmp().filter((f) => !before.has(f) && f.startsWith('sable-demo-'))).toEqual([]);
  });

  it('bulk-load.mjs --write-only writes a Parquet file and needs no service', async () => {
    const out = join(dir, 'v.parquet');
    const r = await run('bulk-load.mjs', ['--write-only', out, '--rows', '100'], { SABLE_URL: 'http://127.0.0.1:9' }, dir);
    expect(r.code).toBe(0);
    expect(existsSync(out) && statSync(out).size).toBeGreaterThan(100 * 384 * 4 * 0.5);
    expect(readFileSync(out).subarray(0, 4).toString()).toBe('PAR1');
  });

  it('ingest-folder.mjs ingests its demo folder and answers from it, then skips an unchanged folder on the second run', async () => {
    const demo = await run('ingest-folder.mjs', [], env, dir);
    expect(demo.stderr).toBe('');
    expect(demo.code).toBe(0);
    expect(demo.stdout).toContain('3 ingested, 0 unchanged, 0 failed');
    const answer = demo.stdout.split('\n');
    expect(answer[answer.findIndex((l) => l.includes('How many steps')) + 1]).toMatch(/lighthouse\.md: .*217 steps/);

    const folder = join(dir, 'papers');
    mkdirSync(join(folder, 'sub'), { recursive: true });
    writeFileSync(join(folder, 'a.md'), '# Alpha\n\nAlpha particles are helium nuclei.');
    writeFileSync(join(folder, 'sub', 'b.txt'), 'Beta decay turns a neutron into a proton.');
    writeFileSync(join(folder, 'broken.pdf'), 'not a pdf at all');
    const first = await run('ingest-folder.mjs', [folder, 'what is an alpha particle?'], env, dir);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/failed broken\.pdf: corrupt_file: /);
    expect(first.stdout).toContain('2 ingested, 0 unchanged, 1 failed');
    expect(first.stdout).toMatch(/a\.md: Alpha/);
    const second = await run('ingest-folder.mjs', [folder, 'beta decay'], env, dir);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('0 ingested, 2 unchanged, 1 failed');
    expect(second.stdout).toMatch(/sub\/b\.txt: Beta decay/);
  });

  it('says in one line what to do when no service answers or no key is found', async () => {
    for (const example of ['search.mjs', 'bulk-load.mjs', 'ingest-folder.mjs']) {
      const down = await run(example, [], { SABLE_URL: 'http://127.0.0.1:9', SABLE_API_KEY: 'sable_x' }, dir);
      expect(down.code).toBe(1);
      expect(down.stderr.trim().split('\n')).toHaveLength(1);
      expect(down.stderr).toMatch(/^no Sable service answers at http:\/\/127\.0\.0\.1:9 .*npm start/);
      const keyless = await run(example, [], env, tmpdir());
      expect(keyless.code).toBe(1);
      expect(keyless.stderr.trim()).toMatch(/^no \.sable-data\/admin\.key here: .*SABLE_API_KEY$/);
    }
  });
});

function readdirTmp(): string[] {
  return readdirSync(tmpdir());
}
