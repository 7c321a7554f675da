/**
 * Which shard of a dataset holds a vector in cluster mode: murmur3 (x86, 32-bit, seed 0) of the
 * id's canonical string, modulo the dataset's shard count (fixed when the dataset is created), as
 * Elasticsearch routes documents. The canonical string of an integer id is its decimal form; a
 * string id is first mapped to its integer (catalog/datasets/ids). Every node must agree on this
 * for as long as the data lives: a test pins it to golden values, and changing it means moving
 * every vector of every sharded dataset.
 */

const C1 = 0xcc9e2d51;
const C2 = 0x1b873593;

/** MurmurHash3_x86_32 of `bytes`, as an unsigned 32-bit integer. */
export function murmur3x86_32(bytes: Uint8Array, seed = 0): number {
  let h = seed >>> 0;
  const blocks = bytes.length >>> 2;
  for (let i = 0; i < blocks; i++) {
    const at = i << 2;
    let k = bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24);
    k = Math.imul(k, C1);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, C2);
    h ^= k;
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  const tail = blocks << 2;
  let k = 0;
  switch (bytes.length & 3) {
    case 3:
      k ^= bytes[tail + 2]! << 16;
    // falls through
    case 2:
      k ^= bytes[tail + 1]! << 8;
    // falls through
    case 1:
      k ^= bytes[tail]!;
      k = Math.imul(k, C1);
      k = (k << 15) | (k >>> 17);
      k = Math.imul(k, C2);
      h ^= k;
  }
  h ^= bytes.length;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

const utf8 = new TextEncoder();

/** The shard (0 .. shards - 1) of integer id `id` in a dataset of `shards` shards. */
export function shardOf(id: number, shards: number): number {
  if (!Number.isSafeInteger(id)) throw new RangeError(`id ${id} is not a safe integer`);
  if (!Number.isInteger(shards) || shards < 1) throw new RangeError(`a dataset has a whole number of shards, at least 1 (got ${shards})`);
  return murmur3x86_32(utf8.encode(String(id))) % shards;
}
