/**
 * The ids a load job has seen, to refuse duplicates across its files: an open-addressing set
 * over a Float64Array (18 bytes per id at the worst load), where a Set of numbers would cost
 * several times that for millions of ids.
 */
export class IdSet {
  private slots = new Float64Array(1024);
  private used = new Uint8Array(1024);
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Adds `id`; false when it was there already. */
  add(id: number): boolean {
    if ((this.count + 1) * 2 > this.slots.length) this.grow();
    const mask = this.slots.length - 1;
    for (let s = hash(id) & mask; ; s = (s + 1) & mask) {
      if (!this.used[s]) {
        this.slots[s] = id;
        this.used[s] = 1;
        this.count++;
        return true;
      }
      if (this.slots[s] === id) return false;
    }
  }

  private grow(): void {
    const old = this.slots;
    const oldUsed = this.used;
    this.slots = new Float64Array(old.length * 2);
    this.used = new Uint8Array(old.length * 2);
    const mask = this.slots.length - 1;
    for (let i = 0; i < old.length; i++) {
      if (!oldUsed[i]) continue;
      let s = hash(old[i]) & mask;
      while (this.used[s]) s = (s + 1) & mask;
      this.slots[s] = old[i];
      this.used[s] = 1;
    }
  }
}

/** Mixes the high and low 32 bits: dense ids and ids spaced by powers of two both spread. */
function hash(id: number): number {
  const lo = id >>> 0;
  const hi = Math.floor(id / 4294967296) | 0;
  let h = Math.imul(lo ^ Math.imul(hi, 0x9e3779b1), 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}
