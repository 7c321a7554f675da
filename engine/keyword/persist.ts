/**
 * The keyword index is not stored: the text it indexes is already durable in each row's
 * metadata (`meta` [uid, id]), so opening a dataset rebuilds it from there.
 */
import type { Key, LmdbStore } from '../lmdb-store.js';
import { KeywordIndex } from './bm25.js';

const CHUNK = 4096;

/**
 * Indexes every stored row of dataset `uid` whose metadata field `textField` is a non-empty
 * string. Reads in chunks and yields to the event loop between them, so run it where no write of
 * the dataset can interleave (on open, or inside the dataset's write queue).
 */
export async function rebuildKeywordIndex(storage: LmdbStore, uid: number, textField = 'text'): Promise<KeywordIndex> {
  const index = new KeywordIndex();
  const end: Key = [uid, '\uffff'];
  let start: Key = [uid];
  let last: number | undefined;
  for (;;) {
    let seen = 0;
    for (const { key, value } of storage.meta.getRange({ start, end, limit: CHUNK })) {
      seen++;
      const id = key[1] as number;
      // Each chunk restarts at the previous chunk's last key, which was already indexed.
      if (id === last) continue;
      last = id;
      const text = value?.[textField];
      if (typeof text === 'string' && text.length > 0) index.add(id, text);
    }
    if (seen < CHUNK || last === undefined) break;
    start = [uid, last];
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  index.compact();
  return index;
}
