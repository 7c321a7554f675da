import { join } from 'node:path';
import { open } from 'lmdb';

/** LMDB's id of the last committed transaction of the engine's store in `dir`. */
export function lastTxn(dir: string): number {
  const env = open({ path: join(dir, 'sable.mdb'), readOnly: true });
  try {
    return env.getStats().lastTxnId as number;
  } finally {
    void env.close();
  }
}
