/**
 * An in-memory BM25 index over documents keyed by numeric ids.
 *
 * Documents live in slots, appended in order; an id maps to its current slot. Each term's
 * postings are (slot, tf) pairs in one shared arena, so a million terms cost a few typed-array
 * entries each rather than a million objects for the GC to walk. A forward list (the term ids of
 * each slot) keeps document frequencies exact on removal. Removal and replacement only mark the
 * slot dead; `compact()` (run automatically once enough is dead or abandoned) renumbers the live
 * slots and rewrites the arena.
 */
import { BM25_B as B, BM25_K1 as K1, bm25Idf } from './bm25-formula.js';
import { tokenize } from './tokenize.js';

/** Below this many dead slots cleanup is not worth a full pass, whatever the ratio. */
const MIN_DEAD = 1024;
const MIN_GARBAGE = 1 << 16;

export interface KeywordHit {
  id: number;
  score: number;
}

type Grown = Uint8Array | Uint32Array | Float64Array;

function grow<T extends Grown>(a: T, need: number): T {
  if (need <= a.length) return a;
  const next = new (a.constructor as new (n: number) => T)(Math.max(need, Math.ceil(a.length * 1.5) + 16));
  next.set(a);
  return next;
}

function trim<T extends Grown>(a: T, used: number): T {
  const want = used + (used >> 3) + 16;
  return a.length > want * 1.5 ? (a.slice(0, want) as T) : a;
}

export class KeywordIndex {
  // Terms: id by string; for each id its arena block (pair offset, pairs used, capacity) and df.
  private readonly termIds = new Map<string, number>();
  private readonly freeTerms: number[] = [];
  private termCount = 0;
  private termStart = new Uint32Array(256);
  private termLen = new Uint32Array(256);
  private termCap = new Uint32Array(256);
  private termDf = new Uint32Array(256);

  // The postings arena: pair p is post[2p] = slot, post[2p + 1] = term frequency.
  private post = new Uint32Array(1024);
  private postUsed = 0;
  private postGarbage = 0;

  // Slots: id, length in tokens, liveness, and the forward list fwd[fwdStart[s] .. fwdStart[s + 1]).
  private slotId = new Float64Array(256);
  private slotLen = new Uint32Array(256);
  private slotLive = new Uint8Array(256);
  private fwdStart = new Uint32Array(257);
  private fwd = new Uint32Array(1024);
  private slots = 0;
  private dead = 0;
  private readonly idSlot = new Map<number, number>();
  private totalLen = 0;

  // Reused per add and per search.
  private tfScratch = new Uint32Array(256);
  private readonly distinct: number[] = [];
  private acc = new Float64Array(0);
  private touched = new Uint32Array(0);
  private searching = false;

  /** Live documents. */
  get size(): number {
    return this.idSlot.size;
  }

  /** Sizes for stats: `bytes` counts the typed arrays, not the two maps (id and term lookup). */
  stats(): { documents: number; slots: number; terms: number; postings: number; bytes: number } {
    let bytes = 0;
    for (const a of [this.termStart, this.termLen, this.termCap, this.termDf, this.tfScratch, this.post]) bytes += a.byteLength;
    for (const a of [this.slotId, this.slotLen, this.slotLive, this.fwdStart, this.fwd, this.acc, this.touched]) bytes += a.byteLength;
    return { documents: this.size, slots: this.slots, terms: this.termIds.size, postings: this.fwdStart[this.slots], bytes };
  }

  has(id: number): boolean {
    return this.idSlot.has(id);
  }

  /** Indexes `text` under `id`, replacing the document that id had. */
  add(id: number, text: string): void {
    if (!Number.isSafeInteger(id)) throw new RangeError(`id ${String(id)} is not a safe integer`);
    if (typeof text !== 'string') throw new TypeError(`the text of ${id} must be a string`);
    const tokens = tokenize(text);
    this.kill(id);

    const distinct = this.distinct;
    distinct.length = 0;
    for (const tok of tokens) {
      let t = this.termIds.get(tok);
      if (t === undefined) t = this.newTerm(tok);
      if (this.tfScratch[t]++ === 0) distinct.push(t);
    }

    const slot = this.slots++;
    if (slot >= this.slotId.length) {
      this.slotId = grow(this.slotId, slot + 1);
      this.slotLen = grow(this.slotLen, slot + 1);
      this.slotLive = grow(this.slotLive, slot + 1);
    }
    this.fwdStart = grow(this.fwdStart, slot + 2);
    this.slotId[slot] = id;
    this.slotLen[slot] = tokens.length;
    this.slotLive[slot] = 1;
    let f = this.fwdStart[slot];
    this.fwd = grow(this.fwd, f + distinct.length);
    for (const t of distinct) {
      this.append(t, slot, this.tfScratch[t]);
      this.tfScratch[t] = 0;
      this.termDf[t]++;
      this.fwd[f++] = t;
    }
    this.fwdStart[slot + 1] = f;
    this.idSlot.set(id, slot);
    this.totalLen += tokens.length;
    this.maybeCompact();
  }

  /** Removes the document of `id`; false when there was none. */
  remove(id: number): boolean {
    if (!this.kill(id)) return false;
    this.maybeCompact();
    return true;
  }

  /**
   * The top `k` documents for `query` by BM25, best first, ties to the smaller id. `allow` is
   * asked only about documents that would enter the top k, so it may be costly (a metadata
   * lookup); it must not modify the index.
   */
  search(query: string, k: number, allow?: (id: number) => boolean): KeywordHit[] {
    if (!Number.isInteger(k) || k < 0) throw new RangeError('k must be a non-negative integer');
    const n = this.size;
    if (k === 0 || n === 0) return [];
    const terms = new Set<number>();
    for (const tok of tokenize(query)) {
      const t = this.termIds.get(tok);
      if (t !== undefined && this.termDf[t] > 0) terms.add(t);
    }
    if (terms.size === 0) return [];

    // A nested search (from inside `allow`) must not share the scratch of the outer one.
    const nested = this.searching;
    let acc = this.acc;
    let touched = this.touched;
    if (nested) {
      acc = new Float64Array(this.slots);
      touched = new Uint32Array(this.slots);
    } else if (acc.length < this.slots) {
      acc = this.acc = new Float64Array(Math.ceil(this.slots * 1.25));
      touched = this.touched = new Uint32Array(acc.length);
    }
    this.searching = true;
    let count = 0;
    try {
      // bm25TermScore with its per-term and per-document parts hoisted out of the posting loop.
      const avgdl = this.totalLen / n;
      const norm0 = K1 * (1 - B);
      const norm1 = (K1 * B) / avgdl;
      const { post, slotLive, slotLen } = this;
      for (const t of terms) {
        const df = this.termDf[t];
        const w = bm25Idf(n, df) * (K1 + 1);
        const end = 2 * (this.termStart[t] + this.termLen[t]);
        for (let p = 2 * this.termStart[t]; p < end; p += 2) {
          const slot = post[p];
          if (slotLive[slot] === 0) continue;
          const tf = post[p + 1];
          if (acc[slot] === 0) touched[count++] = slot;
          acc[slot] += (w * tf) / (tf + norm0 + norm1 * slotLen[slot]);
        }
      }
      return this.topK(acc, touched, count, k, allow);
    } finally {
      for (let i = 0; i < count; i++) acc[touched[i]] = 0;
      this.searching = nested;
    }
  }

  /** Drops dead slots and abandoned arena blocks, and forgets terms no document holds. */
  compact(): void {
    const oldSlots = this.slots;
    const remap = new Uint32Array(oldSlots);
    let live = 0;
    for (let s = 0; s < oldSlots; s++) if (this.slotLive[s]) remap[s] = live++;

    let pairs = 0;
    for (let t = 0; t < this.termCount; t++) {
      const df = this.termDf[t];
      pairs += df + (df >> 3);
    }
    const next = new Uint32Array(2 * pairs);
    let used = 0;
    let emptied = 0;
    for (let t = 0; t < this.termCount; t++) {
      const df = this.termDf[t];
      if (df === 0) {
        if (this.termCap[t] > 0) emptied++;
        this.termLen[t] = this.termCap[t] = 0;
        continue;
      }
      const start = used;
      const end = 2 * (this.termStart[t] + this.termLen[t]);
      for (let p = 2 * this.termStart[t]; p < end; p += 2) {
        const slot = this.post[p];
        if (!this.slotLive[slot]) continue;
        next[2 * used] = remap[slot];
        next[2 * used + 1] = this.post[p + 1];
        used++;
      }
      this.termStart[t] = start;
      this.termLen[t] = df;
      this.termCap[t] = df + (df >> 3);
      used = start + this.termCap[t];
    }
    this.post = next;
    this.postUsed = used;
    this.postGarbage = 0;
    if (emptied > 0) {
      for (const [term, t] of this.termIds) {
        if (this.termDf[t] === 0) {
          this.termIds.delete(term);
          this.freeTerms.push(t);
        }
      }
    }

    if (live < oldSlots) {
      let f = 0;
      for (let s = 0; s < oldSlots; s++) {
        if (!this.slotLive[s]) continue;
        const to = remap[s];
        const from = this.fwdStart[s];
        const fromEnd = this.fwdStart[s + 1];
        this.fwd.copyWithin(f, from, fromEnd);
        this.fwdStart[to] = f;
        f += fromEnd - from;
        this.slotId[to] = this.slotId[s];
        this.slotLen[to] = this.slotLen[s];
        this.slotLive[to] = 1;
        this.idSlot.set(this.slotId[s], to);
      }
      this.fwdStart[live] = f;
      this.slotLive.fill(0, live, oldSlots);
      this.slots = live;
      this.dead = 0;
    }
    this.slotId = trim(this.slotId, this.slots);
    this.slotLen = trim(this.slotLen, this.slots);
    this.slotLive = trim(this.slotLive, this.slots);
    this.fwdStart = trim(this.fwdStart, this.slots + 1);
    this.fwd = trim(this.fwd, this.fwdStart[this.slots]);
    if (this.acc.length > 2 * this.slots + 1024) {
      this.acc = new Float64Array(0);
      this.touched = new Uint32Array(0);
    }
  }

  /** Cleanup once a third of the slots are dead or half the arena is abandoned blocks. */
  private maybeCompact(): void {
    const deadHeavy = this.dead >= MIN_DEAD && this.dead * 3 >= this.slots;
    const garbageHeavy = this.postGarbage >= MIN_GARBAGE && this.postGarbage * 2 > this.postUsed;
    if (deadHeavy || garbageHeavy) this.compact();
  }

  private kill(id: number): boolean {
    const slot = this.idSlot.get(id);
    if (slot === undefined) return false;
    this.idSlot.delete(id);
    this.slotLive[slot] = 0;
    this.dead++;
    this.totalLen -= this.slotLen[slot];
    for (let f = this.fwdStart[slot]; f < this.fwdStart[slot + 1]; f++) this.termDf[this.fwd[f]]--;
    return true;
  }

  private newTerm(term: string): number {
    let t = this.freeTerms.pop();
    if (t === undefined) {
      t = this.termCount++;
      if (t >= this.termStart.length) {
        this.termStart = grow(this.termStart, t + 1);
        this.termLen = grow(this.termLen, t + 1);
        this.termCap = grow(this.termCap, t + 1);
        this.termDf = grow(this.termDf, t + 1);
        this.tfScratch = grow(this.tfScratch, t + 1);
      }
    }
    this.termStart[t] = this.termLen[t] = this.termCap[t] = this.termDf[t] = 0;
    this.termIds.set(term, t);
    return t;
  }

  /** Appends a posting to term t, moving its block to the arena's end (doubled) when full. */
  private append(t: number, slot: number, tf: number): void {
    const len = this.termLen[t];
    const cap = this.termCap[t];
    if (len === cap) {
      const start = this.termStart[t];
      if (cap > 0 && start + cap === this.postUsed) {
        // The last block grows in place.
        this.post = grow(this.post, 2 * (this.postUsed + cap));
        this.postUsed += cap;
      } else {
        const wider = cap === 0 ? 1 : cap * 2;
        this.post = grow(this.post, 2 * (this.postUsed + wider));
        this.post.copyWithin(2 * this.postUsed, 2 * start, 2 * (start + len));
        this.termStart[t] = this.postUsed;
        this.postUsed += wider;
        this.postGarbage += cap;
      }
      this.termCap[t] = cap === 0 ? 1 : cap * 2;
    }
    const p = 2 * (this.termStart[t] + len);
    this.post[p] = slot;
    this.post[p + 1] = tf;
    this.termLen[t] = len + 1;
  }

  /** The best k of the touched slots, filtered by `allow` on the way in. */
  private topK(acc: Float64Array, touched: Uint32Array, count: number, k: number, allow?: (id: number) => boolean): KeywordHit[] {
    // A min-heap on (score, then larger id) keeps the worst kept hit at the root.
    const size = Math.min(k, count);
    const hs = new Float64Array(size);
    const hi = new Float64Array(size);
    let n = 0;
    const worse = (s1: number, i1: number, s2: number, i2: number) => s1 < s2 || (s1 === s2 && i1 > i2);
    for (let c = 0; c < count; c++) {
      const slot = touched[c];
      const score = acc[slot];
      const id = this.slotId[slot];
      if (n === size && !worse(hs[0], hi[0], score, id)) continue;
      if (allow && !allow(id)) continue;
      let i: number;
      if (n < size) {
        // Sift up from the new leaf.
        i = n++;
        while (i > 0) {
          const parent = (i - 1) >> 1;
          if (!worse(score, id, hs[parent], hi[parent])) break;
          hs[i] = hs[parent];
          hi[i] = hi[parent];
          i = parent;
        }
      } else {
        // Replace the root and sift down.
        i = 0;
        for (;;) {
          let child = 2 * i + 1;
          if (child >= n) break;
          if (child + 1 < n && worse(hs[child + 1], hi[child + 1], hs[child], hi[child])) child++;
          if (!worse(hs[child], hi[child], score, id)) break;
          hs[i] = hs[child];
          hi[i] = hi[child];
          i = child;
        }
      }
      hs[i] = score;
      hi[i] = id;
    }
    const out: KeywordHit[] = new Array(n);
    for (let i = 0; i < n; i++) out[i] = { id: hi[i], score: hs[i] };
    return out.sort((a, b) => b.score - a.score || a.id - b.id);
  }
}
