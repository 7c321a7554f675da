import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { KeywordIndex } from '../../dist/engine/keyword/bm25.js';
import { rebuildKeywordIndex } from '../../dist/engine/keyword/persist.js';
import { stem, tokenize } from '../../dist/engine/keyword/tokenize.js';
import { LmdbStore } from '../../dist/engine/lmdb-store.js';

/** The BM25 contribution of one term to one document, straight from the formula. */
function bm25(tf: number, dl: number, df: number, n: number, avgdl: number): number {
  const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
  return (idf * (tf * 2.2)) / (tf + 1.2 * (1 - 0.75 + (0.75 * dl) / avgdl));
}

describe('tokenize', () => {
  it('stems plurals, -ing, -ed, -ly and derivations', () => {
    expect(tokenize('cats ponies caresses')).toEqual(['cat', 'poni', 'caress']);
    expect(tokenize('running hopping motoring sing')).toEqual(['run', 'hop', 'motor', 'sing']);
    expect(tokenize('agreed plastered troubled sized')).toEqual(['agre', 'plaster', 'troubl', 'size']);
    expect(tokenize('connection connected connecting connections')).toEqual(['connect', 'connect', 'connect', 'connect']);
    expect(tokenize('quickly happily relational generalizations')).toEqual(['quickli', 'happili', 'relat', 'gener']);
    expect(stem('sky')).toBe('sky');
    expect(stem('is')).toBe('is');
  });

  it('lowercases, splits on anything but letters and digits, and drops stop words', () => {
    expect(tokenize('The CAT, and the Hat!')).toEqual(['cat', 'hat']);
    expect(tokenize('state-of-the-art e-mail')).toEqual(['state', 'art', 'mail']);
    expect(tokenize('the and of to in is it')).toEqual([]);
    expect(tokenize('')).toEqual([]);
    expect(tokenize('  ...  ')).toEqual([]);
  });

  it('keeps single digits and numbers but not single letters', () => {
    expect(tokenize('a 3 b 42 x 2024 v2')).toEqual(['3', '42', '2024', 'v2']);
    expect(tokenize('3.14')).toEqual(['3', '14']);
  });

  it('handles Unicode letters, composed or not, without stemming them', () => {
    expect(tokenize('Café NAÏVE Ångström')).toEqual(['café', 'naïve', 'ångström']);
    expect(tokenize('cafe\u0301')).toEqual(tokenize('café'));
    expect(tokenize('Straße über ﬁne')).toEqual(['straße', 'über', 'fine']);
    expect(tokenize('東京 москва नमस्ते')).toEqual(['東京', 'москва', 'नमस्ते']);
  });
});

describe('KeywordIndex', () => {
  // After stemming and stop words: 1 = cat sat mat (3), 2 = dog chase cat (3), 3 = dog dog dog bark (4).
  function corpus(): KeywordIndex {
    const idx = new KeywordIndex();
    idx.add(1, 'The cat sat on the mat');
    idx.add(2, 'The dog chased the cat');
    idx.add(3, 'Dog dog dog barked');
    return idx;
  }

  it('scores by BM25 as computed by hand', () => {
    const idx = corpus();
    const avgdl = 10 / 3;
    expect(idx.size).toBe(3);

    const dog = idx.search('dog', 10);
    expect(dog.map((h) => h.id)).toEqual([3, 2]);
    expect(dog[0].score).toBeCloseTo(bm25(3, 4, 2, 3, avgdl), 12);
    expect(dog[1].score).toBeCloseTo(bm25(1, 3, 2, 3, avgdl), 12);

    const both = idx.search('cats and dogs', 10);
    expect(both.map((h) => h.id)).toEqual([2, 3, 1]);
    expect(both[0].score).toBeCloseTo(bm25(1, 3, 2, 3, avgdl) + bm25(1, 3, 2, 3, avgdl), 12);
    expect(both[1].score).toBeCloseTo(bm25(3, 4, 2, 3, avgdl), 12);
    expect(both[2].score).toBeCloseTo(bm25(1, 3, 2, 3, avgdl), 12);

    const rare = idx.search('barking', 10);
    expect(rare).toHaveLength(1);
    expect(rare[0].score).toBeCloseTo(bm25(1, 4, 1, 3, avgdl), 12);
  });

  it('breaks ties by the smaller id and counts a repeated query term once', () => {
    const idx = corpus();
    expect(idx.search('cat', 10).map((h) => h.id)).toEqual([1, 2]);
    const [a, b] = idx.search('cat', 10);
    expect(a.score).toBe(b.score);
    expect(idx.search('cat cat cats', 10)).toEqual(idx.search('cat', 10));
  });

  it('replaces a document added again under the same id', () => {
    const idx = corpus();
    idx.add(1, 'a bird on a wire');
    expect(idx.size).toBe(3);
    expect(idx.has(1)).toBe(true);
    const avgdl = (2 + 3 + 4) / 3;
    const cat = idx.search('cat', 10);
    expect(cat.map((h) => h.id)).toEqual([2]);
    expect(cat[0].score).toBeCloseTo(bm25(1, 3, 1, 3, avgdl), 12);
    expect(idx.search('birds', 10).map((h) => h.id)).toEqual([1]);
  });

  it('removes documents and their statistics', () => {
    const idx = corpus();
    expect(idx.remove(3)).toBe(true);
    expect(idx.remove(3)).toBe(false);
    expect(idx.remove(99)).toBe(false);
    expect(idx.has(3)).toBe(false);
    expect(idx.size).toBe(2);
    const dog = idx.search('dog', 10);
    expect(dog.map((h) => h.id)).toEqual([2]);
    expect(dog[0].score).toBeCloseTo(bm25(1, 3, 1, 2, 3), 12);
    expect(idx.search('bark', 10)).toEqual([]);
    idx.add(3, 'barked');
    expect(idx.search('bark', 10).map((h) => h.id)).toEqual([3]);
  });

  it('filters candidates with allow before they take a place in the top k', () => {
    const idx = corpus();
    expect(idx.search('dog', 1, (id) => id !== 3).map((h) => h.id)).toEqual([2]);
    expect(idx.search('dog cat', 2, (id) => id % 2 === 1).map((h) => h.id)).toEqual([3, 1]);
    expect(idx.search('dog', 10, () => false)).toEqual([]);
  });

  it('returns every match when k exceeds them, and nothing for empty or unknown queries', () => {
    const idx = corpus();
    expect(idx.search('cat', 100)).toHaveLength(2);
    expect(idx.search('', 10)).toEqual([]);
    expect(idx.search('the of and', 10)).toEqual([]);
    expect(idx.search('zebra', 10)).toEqual([]);
    expect(idx.search('cat', 0)).toEqual([]);
    expect(new KeywordIndex().search('cat', 10)).toEqual([]);
    expect(() => idx.search('cat', 1.5)).toThrow(RangeError);
    expect(() => idx.add(2 ** 53, 'cat')).toThrow(RangeError);
  });

  it('indexes a document without terms as an empty document', () => {
    const idx = corpus();
    idx.add(4, 'the and of');
    expect(idx.has(4)).toBe(true);
    expect(idx.size).toBe(4);
    const cat = idx.search('cat', 10);
    expect(cat[0].score).toBeCloseTo(bm25(1, 3, 2, 4, 10 / 4), 12);
  });

  it('matches a brute-force BM25 through replaces, removes and compactions', () => {
    const words = Array.from({ length: 300 }, (_, i) => `w${i}x`);
    let seed = 7;
    const rand = () => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
    };
    const zipf = () => words[Math.floor(words.length * rand() ** 3)];
    const text = () => Array.from({ length: 3 + Math.floor(rand() * 12) }, zipf).join(' ');

    const idx = new KeywordIndex();
    const docs = new Map<number, string[]>();
    let adds = 0;
    const put = (id: number) => {
      adds++;
      const t = text();
      idx.add(id, t);
      docs.set(id, tokenize(t));
    };
    for (let id = 0; id < 4000; id++) put(id);
    for (let i = 0; i < 6000; i++) {
      const id = Math.floor(rand() * 5000);
      if (rand() < 0.5) put(id);
      else {
        expect(idx.remove(id)).toBe(docs.delete(id));
      }
    }
    expect(idx.size).toBe(docs.size);
    // Enough died for the automatic cleanup to have renumbered the slots at least once.
    expect(idx.stats().slots).toBeLessThan(adds);

    const check = () => {
      const n = docs.size;
      const avgdl = [...docs.values()].reduce((s, d) => s + d.length, 0) / n;
      for (let q = 0; q < 30; q++) {
        const terms = [...new Set([zipf(), zipf(), words[Math.floor(rand() * 300)]])];
        const df = terms.map((t) => [...docs.values()].filter((d) => d.includes(t)).length);
        const expected: { id: number; score: number }[] = [];
        for (const [id, d] of docs) {
          let score = 0;
          terms.forEach((t, i) => {
            const tf = d.filter((x) => x === t).length;
            if (tf > 0) score += bm25(tf, d.length, df[i], n, avgdl);
          });
          if (score > 0) expected.push({ id, score });
        }
        expected.sort((a, b) => b.score - a.score || a.id - b.id);
        const got = idx.search(terms.join(' '), 20);
        expect(got.map((h) => h.id)).toEqual(expected.slice(0, 20).map((h) => h.id));
        got.forEach((h, i) => expect(h.score).toBeCloseTo(expected[i].score, 9));
      }
    };
    check();
    idx.compact();
    expect(idx.stats().slots).toBe(docs.size);
    check();
  });
});

describe('rebuildKeywordIndex', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('rebuilds from the text field of stored metadata, for one dataset only', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sable-kw-'));
    dirs.push(dir);
    const storage = LmdbStore.open(dir);
    try {
      await storage.write(() => {
        storage.meta.put([7, 1], { text: 'The cat sat on the mat', tag: 'a' });
        storage.meta.put([7, 2], { text: 'The dog chased the cat' });
        storage.meta.put([7, 3], { text: 'Dog dog dog barked', body: 'zebra' });
        storage.meta.put([7, 4], { tag: 'no text' });
        storage.meta.put([7, 5], { text: '' });
        storage.meta.put([7, 6], { text: 42 });
        storage.meta.put([8, 1], { text: 'cat from another dataset' });
        for (let id = 10_000; id < 19_000; id++) storage.meta.put([9, id], { text: `note ${id} about item${id % 7}` });
      });

      const idx = await rebuildKeywordIndex(storage, 7);
      expect(idx.size).toBe(3);
      expect([4, 5, 6].some((id) => idx.has(id))).toBe(false);
      const fresh = new KeywordIndex();
      fresh.add(1, 'The cat sat on the mat');
      fresh.add(2, 'The dog chased the cat');
      fresh.add(3, 'Dog dog dog barked');
      expect(idx.search('cats and dogs', 10)).toEqual(fresh.search('cats and dogs', 10));

      const body = await rebuildKeywordIndex(storage, 7, 'body');
      expect(body.size).toBe(1);
      expect(body.search('zebra', 5).map((h) => h.id)).toEqual([3]);

      // More rows than one read chunk.
      const many = await rebuildKeywordIndex(storage, 9);
      expect(many.size).toBe(9000);
      expect(many.search('18765', 5).map((h) => h.id)).toEqual([18_765]);
      let item3 = 0;
      for (let id = 10_000; id < 19_000; id++) if (id % 7 === 3) item3++;
      expect(many.search('item3', 10_000)).toHaveLength(item3);
    } finally {
      await storage.close();
    }
  });
});
