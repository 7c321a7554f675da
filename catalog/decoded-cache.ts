/**
 * Records read on every request (API keys, dataset records), decoded once and reused while their
 * stored bytes are unchanged. Each read still looks the bytes up in LMDB, so a write by any
 * process (`sable keys revoke` beside the service) is seen at once; what it saves is the
 * decode, which for records with inline msgpack structures cost more than the lookup (the perf
 * profile of bench:http). Cached values are frozen: a caller that changes one throws instead of
 * changing what later readers get.
 */
import type { Database, Key } from 'lmdb';

export class DecodedCache<V, K extends Key> {
  private readonly entries = new Map<K, { bytes: Buffer; value: V }>();

  constructor(
    private readonly db: Database<V, K>,
    private readonly limit = 4096,
  ) {}

  get(key: K): V | undefined {
    const found = this.db.getBinaryFast(key);
    if (found === undefined) {
      this.entries.delete(key);
      return undefined;
    }
    // lmdb-js answers with its shared read buffer, its `length` set to the value's: a view of
    // exactly the value, copied before it is kept (the next read overwrites the buffer).
    const raw = found.subarray(0, found.length);
    const hit = this.entries.get(key);
    if (hit && raw.equals(hit.bytes)) return hit.value;
    const bytes = Buffer.from(raw);
    const value = this.db.get(key);
    if (value === undefined) return undefined;
    deepFreeze(value);
    if (this.entries.size >= this.limit) this.entries.clear();
    this.entries.set(key, { bytes, value });
    return value;
  }
}

function deepFreeze(v: unknown): void {
  if (v === null || typeof v !== 'object' || Object.isFrozen(v)) return;
  Object.freeze(v);
  for (const x of Object.values(v)) deepFreeze(x);
}
