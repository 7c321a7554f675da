#!/usr/bin/env node
/**
 * `sable serve [--host H] [--port N] [--data-dir DIR]` and
 * `sable keys create --org NAME [--role admin|member] | list | revoke KEY_ID [--data-dir DIR]`.
 */
import { ControlStore } from '../catalog/store.js';
import { configError, SableError } from '../errors/codes.js';
import { startService } from './app.js';
import { createKey, ensureOrg, listKeys, revokeKey } from './auth/keys.js';
import { loadConfig, parseArgs } from './config.js';

const USAGE = `usage:
  sable serve [--host H] [--port N] [--data-dir DIR]
  sable keys create --org NAME [--role admin|member] [--data-dir DIR]
  sable keys list [--data-dir DIR]
  sable keys revoke KEY_ID [--data-dir DIR]`;

async function main(argv: string[]): Promise<number> {
  const { positionals, flags } = parseArgs(argv);
  const config = loadConfig(flags, process.env);
  const [command, sub, arg] = positionals;
  if (command === 'serve') {
    const service = await startService(config);
    if (service.createdAdminKey) {
      console.log(`admin key (shown once, also written to ${config.dataDir}/admin.key): ${service.createdAdminKey}`);
    }
    console.log(`sable listening on ${service.url}`);
    console.error(`sable: http adapter ${service.adapter}, uploads at ${service.uploadUrl}, data directory ${config.dataDir}`);
    const stop = () => void service.close().then(() => process.exit(0));
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    return -1;
  }
  if (command === 'keys') {
    const store = new ControlStore(config.dataDir);
    try {
      if (sub === 'create') {
        if (!flags.org) throw configError('keys create needs --org NAME');
        const role = flags.role ?? 'member';
        if (role !== 'admin' && role !== 'member') throw configError('--role must be admin or member');
        const org = await ensureOrg(store, flags.org);
        const { key, record } = await createKey(store, org.id, role);
        console.log(JSON.stringify({ org_id: org.id, key, role, key_id: record.key_id }));
        return 0;
      }
      if (sub === 'list') {
        for (const k of listKeys(store)) console.log(JSON.stringify(k));
        return 0;
      }
      if (sub === 'revoke') {
        if (!arg) throw configError('keys revoke needs KEY_ID');
        if (!(await revokeKey(store, arg))) {
          console.error(`no key with id ${arg}`);
          return 1;
        }
        console.log(JSON.stringify({ key_id: arg, revoked: true }));
        return 0;
      }
    } finally {
      await store.close();
    }
  }
  console.error(USAGE);
  return 2;
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
