// The `sable` command helps: --help for every command (exit 0) with every flag, its variable and
// its default; unknown commands, flags and bad values exit 2 naming the nearest right one.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SETTINGS } from '../../dist/control-plane/config.js';
import { SERVICE_NODE_FLAGS } from '../../dist/control-plane/node-flags.js';

const CLI = join(__dirname, '..', '..', 'dist', 'control-plane', 'cli.js');
const dir = mkdtempSync(join(tmpdir(), 'sable-cli-'));
const sable = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { cwd: dir, encoding: 'utf8', timeout: 20_000 });

describe('sable (the command)', () => {
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('answers --help for itself and each command, exit 0, starting nothing', () => {
    for (const args of [['--help'], ['-h'], ['help'], ['serve', '--help'], ['keys', '--help'], ['keys', 'create', '--help']]) {
      const r = sable(...args);
      expect(r.status, args.join(' ')).toBe(0);
      expect(r.stdout, args.join(' ')).toMatch(/usage/);
    }
    const serve = sable('serve', '--help').stdout;
    for (const s of SETTINGS) {
      expect(serve).toContain(`--${s.flag} `);
      expect(serve).toContain(s.env);
      if (s.default !== undefined) expect(serve).toContain(`(default ${s.default})`);
    }
    expect(serve).toContain('SABLE_MASTER_KEY');
    expect(serve).toMatch(/max-body-bytes.*64 MiB/);
    expect(sable('--version').stdout).toMatch(/^sable-retrieval \d+\.\d+\.\d+/);
    expect(spawnSync('ls', ['-A', dir], { encoding: 'utf8' }).stdout).toBe('');
  });

  it('runs with its Node flags however it is started: the executable (shebang) and npm start', () => {
    const pkg = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as { scripts: Record<string, string>; bin: Record<string, string> };
    expect(pkg.bin.sable).toBe('dist/control-plane/cli.js');
    expect(pkg.scripts.start).toBe(`node ${SERVICE_NODE_FLAGS.join(' ')} dist/control-plane/cli.js serve`);
    // Run as users run the command: the file itself, through its shebang.
    const preload = join(__dirname, '..', 'support', 'print-exec-argv.cjs');
    const r = spawnSync(CLI, ['--version'], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: `--require ${preload}` } });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([...SERVICE_NODE_FLAGS]);
  });

  it('refuses unknown commands, flags and bad values with exit 2, naming the nearest', () => {
    const cases: [string[], RegExp][] = [
      [['serve', '--prot', '18140'], /unknown flag --prot \(did you mean --port\?\)/],
      [['serve', '--port', 'abc'], /--port must be an integer from 0 to 65535 \(got 'abc'\)/],
      [['serve', '--http-adapter', 'fast'], /--http-adapter must be auto, uws, node \(got 'fast'\)/],
      [['srve'], /unknown command 'srve' \(did you mean 'serve'\?\)/],
      [['keys', 'craete', '--org', 'x'], /unknown keys command 'craete' \(did you mean 'create'\?\)/],
      [['keys', 'create', '--org', 'x', '--rol', 'admin'], /unknown flag --rol \(did you mean --role\?\)/],
      [['keys', 'create', '--org', 'x', '--role', 'root'], /--role must be admin or member \(got 'root'\)/],
      [['keys', 'create'], /keys create needs --org NAME/],
      [[], /usage/],
    ];
    for (const [args, message] of cases) {
      const r = sable(...args);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(message);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
    expect(spawnSync('ls', ['-A', dir], { encoding: 'utf8' }).stdout).toBe('');
  });
});
