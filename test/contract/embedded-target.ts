// The embedded target: `startService` in this process on a fresh data directory, keys made by the
// CLI on that directory while the service runs (as an operator would).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startService, type Service } from '../../dist/control-plane/app.js';
import { loadConfig } from '../../dist/control-plane/config.js';
import { walk } from '../support/walk.js';
import type { ContractTarget, TargetProfile } from './target.js';

const CLI = join(__dirname, '..', '..', 'dist', 'control-plane', 'cli.js');

export function embeddedProfile(adapter: TargetProfile['adapter']): TargetProfile {
  return { kind: 'embedded', adapter, can: new Set(['embedding', 'own-service']) };
}

export interface EmbeddedTarget extends ContractTarget {
  embedded: { service: Service; dir: string };
  /** Stops the service, keeping its data directory (what a stop leaves can be read), and starts it again on it. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops the service and removes its directory. */
  close(): Promise<void>;
}

/** Starts the service with `flags` (loadConfig's) on top of the suite's, `env` (SABLE_* variables: the settings read from the environment only, keys) and `hooks`. */
export async function startEmbedded(
  adapter: TargetProfile['adapter'],
  flags: Record<string, string> = {},
  env: Record<string, string> = {},
  /** What only a service in this process takes: the test's clock. */
  hooks: Parameters<typeof startService>[1] = {},
): Promise<EmbeddedTarget> {
  const dir = mkdtempSync(join(tmpdir(), 'sable-contract-'));
  const boot = () => startService(loadConfig({ port: '0', 'data-dir': dir, 'http-adapter': adapter, ...flags }, env), hooks);
  let service = await boot();
  let running = true;
  const cli = (...args: string[]) => execFileSync(process.execPath, [CLI, 'keys', ...args, '--data-dir', dir]).toString();
  return {
    url: () => service.url,
    urls: () => [service.url],
    admin: readFileSync(join(dir, 'admin.key'), 'utf8').trim(),
    adminKeyFile: join(dir, 'admin.key'),
    newKey: async (org, role) => JSON.parse(cli('create', '--org', org, '--role', role)),
    revokeKey: async (keyId) => void cli('revoke', keyId),
    settle: async () => {},
    catalogFiles: () => [join(dir, 'control.mdb')],
    uploadFiles: () => walk(join(dir, 'uploads')),
    get embedded() {
      return { service, dir };
    },
    async startOwn(own) {
      const t = await startEmbedded(adapter, own);
      return { url: t.url(), admin: t.admin, close: t.close };
    },
    async stop() {
      running = false;
      await service.close();
    },
    async start() {
      service = await boot();
      running = true;
    },
    async close() {
      if (running) await service.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
