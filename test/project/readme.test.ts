// Every code block of README.md runs, as pasted, against a fresh service: the shell blocks in
// one bash session (`set -euo pipefail`, so a failing command or extraction fails the test), in
// a scratch directory where `npm start` starts the service as the project's does; the only
// change is the port (a free one instead of 8080, given to the service and the examples as
// SABLE_PORT and SABLE_URL). JavaScript blocks run with node, importing the
// package by its name. Blocks that cannot run here say why in a `<!-- not run: ... -->` line.
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = join(__dirname, '..', '..');

interface Block {
  lang: string;
  code: string;
  line: number;
  notRun: string | null;
}

function blocks(markdown: string): Block[] {
  const out: Block[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i]);
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i] !== '```'; i++) body.push(lines[i]);
    const before = lines.slice(0, start).reverse().find((l) => l.trim() !== '') ?? '';
    const notRun = /^<!-- not run: (.+) -->$/.exec(before.trim());
    out.push({ lang: open[1], code: body.join('\n'), line: start + 1, notRun: notRun ? notRun[1] : null });
  }
  return out;
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

describe('README.md', () => {
  const all = blocks(readFileSync(join(ROOT, 'README.md'), 'utf8'));
  const dir = mkdtempSync(join(tmpdir(), 'sable-readme-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('marks every block it does not run, with a reason', () => {
    for (const b of all) {
      if (b.lang === '') continue; // diagrams
      expect(['sh', 'js'], `line ${b.line}: a code block needs sh or js`).toContain(b.lang);
    }
    expect(all.filter((b) => b.lang === 'sh' && !b.notRun).length).toBeGreaterThanOrEqual(3);
  });

  it('runs every shell and JavaScript block against a fresh service', async () => {
    const port = await freePort();
    // The scratch directory stands for the project's root: `npm start` is the project's start
    // script, examples/ and the package (by its name) are the project's.
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'readme-check', private: true, type: 'module', scripts: { start: pkg.scripts.start.replace('dist/', `${ROOT}/dist/`) } }));
    symlinkSync(join(ROOT, 'examples'), join(dir, 'examples'));
    mkdirSync(join(dir, 'node_modules'));
    symlinkSync(ROOT, join(dir, 'node_modules', pkg.name));

    const shell = all.filter((b) => b.lang === 'sh' && !b.notRun).map((b) => `# README.md line ${b.line}\n${b.code}`);
    const script = ['set -euo pipefail', ...shell].join('\n').replaceAll(/(localhost|127\.0\.0\.1):8080/g, `127.0.0.1:${port}`);
    writeFileSync(join(dir, 'readme.sh'), script);
    const env = { ...process.env, SABLE_PORT: String(port), SABLE_UPLOAD_PORT: '0', SABLE_URL: `http://127.0.0.1:${port}` };
    const bash = spawn('bash', ['readme.sh'], { cwd: dir, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    bash.stdout.on('data', (c: Buffer) => (stdout += String(c)));
    bash.stderr.on('data', (c: Buffer) => (stderr += String(c)));
    const code = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => process.kill(-bash.pid!, 'SIGKILL'), 120_000);
      bash.on('exit', (c) => (clearTimeout(timer), resolve(c)));
    });
    try {
      expect(code, `the README's shell blocks failed:\n${stderr.slice(-3000)}\n--- stdout ---\n${stdout.slice(-3000)}`).toBe(0);
      expect(stdout).toContain('"external_id":"doc-2"');
      expect(stdout).toContain('"doc_value":"Boil pasta in plenty of salted water."');
      expect(stdout).toMatch(/^10000$/m);
      expect(stdout).toMatch(/^\/v1\/jobs\/[0-9a-f-]+$/m);
      for (const b of all.filter((x) => x.lang === 'js' && !x.notRun)) {
        const file = join(dir, `block-${b.line}.mjs`);
        writeFileSync(file, b.code.replaceAll(/(localhost|127\.0\.0\.1):8080/g, `127.0.0.1:${port}`));
        const out = execFileSync(process.execPath, [file], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
        expect(out, `README.md line ${b.line}`).not.toBe('');
        if (b.code.includes('searchBatch')) expect(out).toContain('[ 1, 2 ] exact');
        if (b.code.includes('sable-retrieval/client')) expect(out).toMatch(/^crane\nThe harbour crane lifts twelve containers an hour\. \[1\]$/m);
      }
    } finally {
      // The background `npm start` of the first block, and the service it started.
      try {
        process.kill(-bash.pid!, 'SIGTERM');
      } catch {
        /* the group is gone */
      }
    }
  }, 180_000);
});
