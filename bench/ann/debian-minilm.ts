// The debian-minilm set: real sentence embeddings (384-d, cosine) instead of word vectors or
// pixels. Prose sentences from Debian documentation packages (debian-text.ts), deduplicated, in a
// seeded shuffle: the first 1000 are the queries, the next 120,000 the indexed set; embedded by
// the project's own all-MiniLM-L6-v2 (engine/embedding/local-model.ts) on two threads.
//
// Stages, each cached in bench/.cache so a run picks up where the last one stopped:
//   1. `apt-get download` into bench/.cache/debs, `dpkg-deb -x` into bench/.cache/debian-docs/<pkg>
//   2. the chosen sentences: data/debian-minilm/sentences.jsonl (+ sentences.json, the counts)
//   3. vectors appended batch by batch to queries.f32.part / base.f32.part (rows done = file size),
//      then renamed to queries.f32 / base.f32 (a --limit-sentences sample copies a prefix instead,
//      so the parts stay for the full run to resume from)
import { createHash } from 'node:crypto';
import {
  closeSync,
  existsSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  statSync,
  truncateSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import type { SetMeta } from './datasets.js';
import { ensureDir, paths } from './paths.js';
import { Rng } from '../../testkit/rng.js';

/** Bump when the packages, the extraction or the selection change: the set is then rebuilt. */
export const DEBIAN_FORMAT = 1;

export const DEBIAN = {
  name: 'debian-minilm',
  dim: 384,
  queries: 1000,
  base: 120_000,
  seed: 0xdeb1a2,
  /** Texts per embedding call (as bench:embed); also the most an interrupted run loses. */
  batch: 512,
} as const;

/** Debian bookworm documentation packages with English prose, in the order sentences are
 * attributed (a sentence two packages share counts for the first). `include` keeps one language
 * of a multilingual manual. Not used here, kept for independent checks: python3.11-doc,
 * nodejs-doc, debian-handbook and the manpages packages. */
export const DEBIAN_PACKAGES: readonly { name: string; include?: RegExp }[] = [
  { name: 'postgresql-doc-15' },
  { name: 'perl-doc' },
  { name: 'git-doc' },
  { name: 'sqlite3-doc' },
  { name: 'python-django-doc' },
  { name: 'apache2-doc', include: /\/manual\/en\// },
  { name: 'cmake-doc' },
  { name: 'exim4-doc-html' },
  { name: 'zsh-doc' },
  { name: 'bind9-doc' },
  { name: 'postfix-doc' },
  { name: 'bash-doc' },
  { name: 'debian-policy' },
  { name: 'debian-reference-en' },
  { name: 'developers-reference' },
  { name: 'maint-guide' },
];

export interface PackageCount {
  name: string;
  version: string;
  files: number;
  /** Prose sentences found (duplicates included). */
  prose: number;
  /** Distinct sentences first seen in this package. */
  distinct: number;
  /** Of those, chosen for the set (queries + base). */
  chosen: number;
}

export interface SentenceList {
  format: number;
  packages: PackageCount[];
  /** Distinct sentences available from all packages. */
  distinct: number;
  /** Words per kept sentence, [min, max]. */
  words: [number, number];
  queries: number;
  base: number;
  seed: number;
}

export interface DebianMeta extends SetMeta {
  packages: { name: string; version: string; sentences: number }[];
  distinctSentences: number;
  model: string;
  /** Set when this is a --limit-sentences sample (that many sentences embedded), not the set. */
  sample: number | null;
}

const dataDir = () => join(paths.data, DEBIAN.name);

function log(msg: string): void {
  process.stderr.write(`[data] ${msg}\n`);
}

/** Write then rename, so an interrupted run never leaves a half file that looks complete. */
function put(file: string, data: string | Uint8Array): void {
  writeFileSync(`${file}.tmp`, data);
  renameSync(`${file}.tmp`, file);
}

// ---------------------------------------------------------------------------------------------
// Sentences

function readSentenceList(): { list: SentenceList; texts: string[] } | null {
  const summary = join(dataDir(), 'sentences.json');
  const lines = join(dataDir(), 'sentences.jsonl');
  if (!existsSync(summary) || !existsSync(lines)) return null;
  const list = JSON.parse(readFileSync(summary, 'utf8')) as SentenceList;
  const names = DEBIAN_PACKAGES.map((p) => p.name).join(',');
  if (list.format !== DEBIAN_FORMAT || list.packages.map((p) => p.name).join(',') !== names) return null;
  const texts = readFileSync(lines, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => (JSON.parse(l) as { text: string }).text);
  return texts.length === list.queries + list.base ? { list, texts } : null;
}

/** The chosen sentences (queries first), extracted once and cached. */
export async function sentenceList(): Promise<{ list: SentenceList; texts: string[] }> {
  const cached = readSentenceList();
  if (cached) return cached;
  // Loaded here, not at the top: the HTML parser is of no use to the other sets' runs.
  const { documentFiles, fetchDebianPackages, sentencesOf, dedupeKey, MIN_WORDS, MAX_WORDS } = await import('./debian-text.js');
  const pkgs = fetchDebianPackages(DEBIAN_PACKAGES, log);
  const t0 = Date.now();
  const seen = new Set<string>();
  const all: { text: string; pkg: number }[] = [];
  const counts: PackageCount[] = [];
  pkgs.forEach((p, i) => {
    const files = documentFiles(p.root, p.include ?? null);
    const c: PackageCount = { name: p.name, version: p.version, files: files.length, prose: 0, distinct: 0, chosen: 0 };
    for (const f of files) {
      for (const text of sentencesOf(f)) {
        c.prose++;
        const key = dedupeKey(text);
        if (seen.has(key)) continue;
        seen.add(key);
        c.distinct++;
        all.push({ text, pkg: i });
      }
    }
    counts.push(c);
    log(`${p.name} ${p.version}: ${c.files} files, ${c.prose} prose sentences, ${c.distinct} new distinct`);
  });
  const want = DEBIAN.queries + DEBIAN.base;
  log(`${all.length} distinct sentences from ${pkgs.length} packages in ${((Date.now() - t0) / 1000).toFixed(1)} s (${want} needed)`);
  if (all.length < want) throw new Error(`debian-minilm: only ${all.length} distinct sentences, ${want} needed`);
  const perm = new Rng(DEBIAN.seed).permutation(all.length);
  const chosen = Array.from(perm.subarray(0, want), (r) => all[r]!);
  for (const s of chosen) counts[s.pkg]!.chosen++;
  const list: SentenceList = { format: DEBIAN_FORMAT, packages: counts, distinct: all.length, words: [MIN_WORDS, MAX_WORDS], queries: DEBIAN.queries, base: DEBIAN.base, seed: DEBIAN.seed };
  ensureDir(dataDir());
  put(join(dataDir(), 'sentences.jsonl'), chosen.map((s) => `${JSON.stringify({ text: s.text, package: pkgs[s.pkg]!.name })}\n`).join(''));
  put(join(dataDir(), 'sentences.json'), `${JSON.stringify(list, null, 2)}\n`);
  return { list, texts: chosen.map((s) => s.text) };
}

// ---------------------------------------------------------------------------------------------
// Vectors

const rowBytes = DEBIAN.dim * 4;

/** Rows complete in a part file; a torn last row (killed mid-write) is cut off. */
function rowsIn(file: string): number {
  if (!existsSync(file)) return 0;
  const size = statSync(file).size;
  const rows = Math.floor(size / rowBytes);
  if (rows * rowBytes !== size) truncateSync(file, rows * rowBytes);
  return rows;
}

/** Appends the vectors of texts[rowsIn(file)..] to the part file, batch by batch. */
async function embedInto(file: string, texts: string[], model: { embed(texts: string[]): Promise<Float32Array[]> }, label: string): Promise<void> {
  let done = rowsIn(file);
  if (done >= texts.length) return;
  if (done > 0) log(`${label}: resuming at ${done} of ${texts.length}`);
  const fd = openSync(file, 'a');
  const t0 = Date.now();
  const from = done;
  let reported = done;
  try {
    while (done < texts.length) {
      const batch = texts.slice(done, done + DEBIAN.batch);
      const vecs = await model.embed(batch);
      const flat = new Float32Array(vecs.length * DEBIAN.dim);
      vecs.forEach((v, i) => {
        let s = 0;
        for (let d = 0; d < v.length; d++) s += v[d]! * v[d]!;
        // Cosine runs compare raw dot products elsewhere: the set promises unit vectors.
        if (v.length !== DEBIAN.dim || Math.abs(Math.sqrt(s) - 1) > 1e-3) throw new Error(`${label} ${done + i}: vector of norm ${Math.sqrt(s)}, not unit`);
        flat.set(v, i * DEBIAN.dim);
      });
      writeSync(fd, new Uint8Array(flat.buffer));
      done += batch.length;
      if (done - reported >= 4096 || done === texts.length) {
        const rate = (done - from) / ((Date.now() - t0) / 1000);
        log(`${label}: ${done} / ${texts.length} embedded (${rate.toFixed(0)}/s, ~${((texts.length - done) / rate / 60).toFixed(1)} min left)`);
        reported = done;
      }
    }
  } finally {
    closeSync(fd);
  }
}

function sha256(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

/** Copies the first `bytes` of `from` to `to` (through a temporary file). */
function copyPrefix(from: string, to: string, bytes: number): void {
  const buf = new Uint8Array(bytes);
  const fd = openSync(from, 'r');
  try {
    for (let off = 0; off < bytes; ) {
      const got = readSync(fd, buf, off, bytes - off, off);
      if (got <= 0) throw new Error(`${from}: shorter than ${bytes} bytes`);
      off += got;
    }
  } finally {
    closeSync(fd);
  }
  put(to, buf);
}

export function readDebianMeta(): DebianMeta | null {
  const f = join(dataDir(), 'meta.json');
  if (!existsSync(f)) return null;
  const m = JSON.parse(readFileSync(f, 'utf8')) as DebianMeta;
  return m.format === DEBIAN_FORMAT ? m : null;
}

/**
 * Makes sure the cache holds the set: the whole set, or with `limit` a sample of its first `limit`
 * sentences (1000 queries, the rest indexed; flagged `sample` in meta.json, so a run without the
 * limit rebuilds, resuming from the sample's vectors). The whole set also serves a limited run.
 */
export async function prepareDebianMiniLm(nq: number, limitSentences: number | null): Promise<DebianMeta> {
  const limit = limitSentences !== null && limitSentences < DEBIAN.queries + DEBIAN.base ? limitSentences : null;
  if (nq > DEBIAN.queries) throw new Error(`${DEBIAN.name} holds ${DEBIAN.queries} held-out queries (asked for ${nq})`);
  const have = readDebianMeta();
  if (have && (have.sample === null || have.sample === limit)) return have;
  const t0 = Date.now();
  const { list, texts } = await sentenceList();
  const nBase = limit === null ? list.base : Math.min(list.base, limit - list.queries);
  if (nBase < 1) throw new Error(`--limit-sentences must exceed the ${list.queries} queries`);
  const dir = dataDir();
  const meta = join(dir, 'meta.json');
  if (existsSync(meta)) unlinkSync(meta);

  // Parts embedded from another sentence list are of no use.
  const stamp = join(dir, 'embed.json');
  const hash = sha256(join(dir, 'sentences.jsonl'));
  const qPart = join(dir, 'queries.f32.part');
  const bPart = join(dir, 'base.f32.part');
  if (!existsSync(stamp) || (JSON.parse(readFileSync(stamp, 'utf8')) as { sentences: string }).sentences !== hash) {
    for (const f of [qPart, bPart]) if (existsSync(f)) unlinkSync(f);
    writeFileSync(stamp, JSON.stringify({ sentences: hash }));
  }

  // Loaded here, not at the top: the peers' runs must not need the native addon.
  const { LocalEmbeddingModel, LOCAL_MODEL } = await import('../../engine/embedding/local-model.js');
  if (rowsIn(qPart) < list.queries || rowsIn(bPart) < nBase) {
    const threads = Math.min(2, availableParallelism());
    log(`embedding with the local ${LOCAL_MODEL.name} on ${threads} threads, batches of ${DEBIAN.batch}`);
    const model = LocalEmbeddingModel.open({ threads });
    try {
      await embedInto(qPart, texts.slice(0, list.queries), model, 'queries');
      await embedInto(bPart, texts.slice(list.queries, list.queries + nBase), model, 'base');
    } finally {
      model.close();
    }
  }

  if (limit === null) {
    renameSync(qPart, join(dir, 'queries.f32'));
    renameSync(bPart, join(dir, 'base.f32'));
    unlinkSync(stamp);
  } else {
    copyPrefix(qPart, join(dir, 'queries.f32'), list.queries * rowBytes);
    copyPrefix(bPart, join(dir, 'base.f32'), nBase * rowBytes);
  }
  // The ground truth is cached by set and size only: a rebuilt set must not reuse the old one.
  if (existsSync(paths.gt)) for (const f of readdirSync(paths.gt)) if (f.startsWith(`${DEBIAN.name}-`)) unlinkSync(join(paths.gt, f));

  const embedded = list.queries + nBase;
  const m: DebianMeta = {
    name: DEBIAN.name,
    dim: DEBIAN.dim,
    metric: 'cosine',
    count: nBase,
    nq: list.queries,
    source:
      `${list.distinct} distinct prose sentences (${list.words.join('-')} words) from ${list.packages.length} Debian bookworm documentation packages ` +
      `(${list.packages.map((p) => p.name).join(', ')}; versions in meta.json); seeded shuffle (seed ${list.seed}): the first ${list.queries} held out as queries, the next ${nBase} indexed; ` +
      `embedded with the local ${LOCAL_MODEL.name} (unit vectors)${limit === null ? '' : `; SAMPLE of the first ${embedded} sentences (--limit-sentences)`}`,
    format: DEBIAN_FORMAT,
    packages: list.packages.map((p) => ({ name: p.name, version: p.version, sentences: p.distinct })),
    distinctSentences: list.distinct,
    model: `${LOCAL_MODEL.name} (${LOCAL_MODEL.package}@${LOCAL_MODEL.version}, engine/embedding/local-model.ts)`,
    sample: limit === null ? null : embedded,
  };
  put(meta, `${JSON.stringify(m, null, 2)}\n`);
  log(`${DEBIAN.name}: ${nBase} + ${list.queries} queries cached in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return m;
}
