#!/usr/bin/env -S node --max-semi-space-size=16 --heap-growing-percent=100
/**
 * The `sable` command: `serve` runs the service, `keys` manages API keys (also while the service
 * runs on the same data directory). `--help` anywhere prints the usage of that command; an
 * unknown command or flag, or a bad value, exits 2 with a message naming it.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ControlStore } from '../catalog/store.js';
import { CatalogLog } from '../cluster/catalog-log.js';
import { Notifications } from '../cluster/notifications.js';
import { openPool } from '../outbound/postgres/pool.js';
import { configError, SableError } from '../errors/codes.js';
import { startService } from './app.js';
import { createKey, ensureOrg, listKeys, revokeKey } from './auth/keys.js';
import { checkFlags, loadConfig, nearest, parseArgs, SECRET_ENV, SETTINGS } from './config.js';
import { SableApiError } from '../client/client.js';
import { markdown } from './tune/report.js';
import { tune } from './tune/tune.js';
import { TUNE_HELP, tuneOptions } from './tune/options.js';

const COMMANDS = ['serve', 'keys', 'tune'];
const KEY_COMMANDS = ['create', 'list', 'revoke'];
const DATA_DIR_HELP = `  --data-dir DIR      ${'SABLE_DATA_DIR'.padEnd(32)} the service's data directory (default ./.sable-data)`;

const HELP = {
  main: `sable: a retrieval service (datasets, vector and text search, bulk loads)

usage:
  sable serve [flags]                              run the HTTP service
  sable keys create --org NAME [--role admin|member]  create an API key (and the organization)
  sable keys list                                  list API keys (ids, roles, prefixes; never keys)
  sable keys revoke KEY_ID                         revoke a key
  sable tune --dataset ID [flags]                  recall against p99 latency of a dataset, and the SLA to set
  sable --version

Run \`sable serve --help\`, \`sable keys --help\` or \`sable tune --help\` for their flags.`,
  serve: () => {
    const rows = SETTINGS.map((s) => {
      const flag = `  --${s.flag} ${s.takes}`.padEnd(36);
      return `${flag}${s.env.padEnd(34)}${s.help}${s.default !== undefined ? ` (default ${s.default})` : ''}`;
    });
    const secrets = SECRET_ENV.map(([env, help]) => `  ${env.padEnd(34)}${help}`);
    return `usage: sable serve [flags]

Runs the HTTP service. The first start on an empty data directory creates the organization
\`default\` and an admin key, writes it to DATA_DIR/admin.key (0600) and prints where (never the
key itself) before the service listens; then it prints \`sable listening on http://HOST:PORT\`.
Each flag can be given as its environment variable instead; a flag wins over the variable.

${'flag'.padEnd(36)}${'variable'.padEnd(34)}what it does
${rows.join('\n')}

environment only:
${secrets.join('\n')}`;
  },
  keys: `usage:
  sable keys create --org NAME [--role admin|member] [--data-dir DIR]
      creates the organization when missing and a key; prints {"org_id","key","role","key_id"}
  sable keys list [--data-dir DIR]
      one JSON line per key: key_id, org_id, role, prefix, created_at, revoked_at
  sable keys revoke KEY_ID [--data-dir DIR]

  --org NAME          the organization of the new key
  --role ROLE         admin or member (default member); admin keys may change schemas
${DATA_DIR_HELP}`,
  tune: TUNE_HELP,
};

async function main(argv: string[]): Promise<number> {
  const { positionals, flags } = parseArgs(argv);
  const [command, sub, arg, ...extra] = positionals;
  const help = flags.help === 'true';
  delete flags.help;
  if (flags.version === 'true' && command === undefined) {
    console.log(version());
    return 0;
  }
  if (command === undefined || command === 'help') {
    console[help || command === 'help' ? 'log' : 'error'](HELP.main);
    return help || command === 'help' ? 0 : 2;
  }
  if (!COMMANDS.includes(command)) throw usage(`unknown command '${command}'${suggest(command, COMMANDS)}`);

  if (command === 'serve') {
    if (help) return print(HELP.serve());
    if (sub !== undefined) throw usage(`sable serve takes no argument '${sub}'`);
    const config = loadConfig(flags, process.env);
    const service = await startService(config);
    // Where the key is, never the key: output ends up in logs, and no log line may carry a secret.
    if (service.createdAdminKey) console.log(`admin key of organization default written to ${join(config.dataDir, 'admin.key')} (mode 0600)`);
    console.log(`sable listening on ${service.url}`);
    console.error(`sable: http adapter ${service.adapter} (${service.adapterDetail}) on Node ${process.version}, uploads at ${service.uploadUrl}, data directory ${config.dataDir}`);
    const stop = () => void service.close().then(() => process.exit(0));
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    return -1;
  }

  if (command === 'tune') {
    if (help) return print(HELP.tune);
    if (sub !== undefined) throw usage(`sable tune takes no argument '${sub}'`);
    const options = tuneOptions(flags, process.env);
    let run: Awaited<ReturnType<typeof tune>>;
    try {
      run = await tune(options, (line) => console.error(`sable tune: ${line}`));
    } catch (e) {
      // The service's refusal in one line (status, code, message), not a stack.
      if (!(e instanceof SableApiError)) throw e;
      console.error(`sable tune: ${e.status} ${e.message}`);
      return 1;
    }
    const { files, result } = run;
    console.log(markdown(result, files[1]!.split('/').pop()!));
    console.error(`sable tune: wrote ${files.join(', ')}`);
    return result.choice && !result.choice.chosen ? 1 : 0;
  }

  if (help || sub === undefined) {
    if (help) return print(HELP.keys);
    throw usage(`sable keys needs a command: ${KEY_COMMANDS.join(', ')}`);
  }
  if (!KEY_COMMANDS.includes(sub)) throw usage(`unknown keys command '${sub}'${suggest(sub, KEY_COMMANDS)}`);
  checkFlags(flags, sub === 'create' ? ['org', 'role', 'data-dir'] : ['data-dir']);
  if (extra.length > 0 || (arg !== undefined && sub !== 'revoke')) throw usage(`unexpected argument '${extra[0] ?? arg}'`);
  const role = flags.role ?? 'member';
  if (sub === 'create') {
    if (!flags.org || flags.org === 'true') throw configError('keys create needs --org NAME');
    if (role !== 'admin' && role !== 'member') throw configError(`--role must be admin or member (got '${role}')`);
  }
  if (sub === 'revoke' && !arg) throw configError('keys revoke needs KEY_ID (see `sable keys list`)');
  const cluster = process.env.SABLE_DATABASE_URL ? await catalogOfCluster(process.env.SABLE_DATABASE_URL) : undefined;
  const store = cluster?.store ?? new ControlStore(resolve(flags['data-dir'] ?? process.env.SABLE_DATA_DIR ?? './.sable-data'));
  try {
    if (sub === 'create') {
      const org = await ensureOrg(store, flags.org);
      const { key, record } = await createKey(store, org.id, role as 'admin' | 'member');
      console.log(JSON.stringify({ org_id: org.id, key, role, key_id: record.key_id }));
      return 0;
    }
    if (sub === 'list') {
      for (const k of listKeys(store)) console.log(JSON.stringify(k));
      return 0;
    }
    if (!(await revokeKey(store, arg!))) {
      console.error(`sable: no key with id ${arg}`);
      return 1;
    }
    console.log(JSON.stringify({ key_id: arg, revoked: true }));
    return 0;
  } finally {
    if (cluster) await cluster.close();
    else await store.close();
  }
}

/**
 * Cluster mode (SABLE_DATABASE_URL): the keys commands work on a copy of the cluster's catalog
 * rebuilt from its log in a scratch directory, and write through the log like any node. A
 * node's own control.mdb is never written beside its service (two copies applying one log
 * would race).
 */
async function catalogOfCluster(url: string): Promise<{ store: ControlStore; close(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'sable-keys-'));
  const store = new ControlStore(dir);
  const pool = openPool(url, { max: 2, applicationName: 'sable keys' });
  const notifications = new Notifications(url);
  const log = new CatalogLog(store, { pool, notifications, nodeId: `sable-keys-${process.pid}` });
  const close = async () => {
    await log.stop();
    await notifications.close();
    await pool.end();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await log.start();
  } catch (e) {
    await close();
    throw configError(`the cluster database (SABLE_DATABASE_URL) cannot be used: ${(e as Error).message}`);
  }
  return { store, close };
}

function print(text: string): number {
  console.log(text);
  return 0;
}

function usage(message: string): SableError {
  return configError(`${message} (see \`sable --help\`)`);
}

function suggest(word: string, options: string[]): string {
  const near = nearest(word, options);
  return near ? ` (did you mean '${near}'?)` : '';
}

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { name: string; version: string };
  return `${pkg.name} ${pkg.version}`;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (e) => {
    const config = e instanceof SableError && e.code === 'invalid_configuration';
    console.error(config ? `sable: ${e.message}` : e);
    process.exit(config ? 2 : 1);
  },
);
