// Shared pieces of the crash suite (test/crash-*.test.ts): how many kills a scenario does (a few
// inside `npm test`, 20 or more under `npm run test:crash`), a random kill moment, a bounded
// request pool, the exact top-k a recovered dataset must answer, and the figures each scenario
// reports (printed, and written to a JSON file that `npm run test:crash` turns into its report).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { score } from './data.js';

/** Kills per scenario: SABLE_CRASH_KILLS, else the short default of the scenario. */
export function killsFor(shortDefault: number): number {
  const n = Number(process.env.SABLE_CRASH_KILLS);
  return Number.isInteger(n) && n > 0 ? n : shortDefault;
}

/** The project's seeded generator: a failing round replays from the seed it prints. */
export { seeded as seededRandom } from './engine-model.mjs';

export function crashSeed(): number {
  const s = Number(process.env.SABLE_CRASH_SEED);
  return Number.isInteger(s) ? s : Math.floor(Math.random() * 2 ** 31);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs `work` over `items` with at most `width` in flight. */
export async function eachLimited<T>(items: T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, lane));
}

/** Cosine distance, as the service scores a cosine dataset. */
export const cosineDistance = (a: ArrayLike<number>, b: ArrayLike<number>) => score('cosine', a, b);

/** The ids of the k rows nearest to `query` by cosine distance, nearest first. */
export function exactTopK(rows: Map<number, ArrayLike<number>>, query: ArrayLike<number>, k: number): number[] {
  return [...rows]
    .map(([id, v]) => ({ id, d: cosineDistance(query, v) }))
    .sort((x, y) => x.d - y.d || x.id - y.id)
    .slice(0, k)
    .map((x) => x.id);
}

export interface CrashFigures {
  scenario: string;
  seed: number;
  kills: number;
  /** Acknowledged writes (per id) checked after the restarts. */
  acknowledgedChecked: number;
  /** Acknowledged writes missing or wrong after a restart (target 0). */
  lost: number;
  /** Jobs or builds left pending/running after the recovery deadline (target 0). */
  stuck: number;
  /** Anything else worth a line in the report. */
  details: Record<string, number | string>;
  seconds: number;
}

/** Prints the figures, and writes them where `npm run test:crash` collects them. */
export function report(f: CrashFigures): void {
  console.log(`crash ${f.scenario}: ${JSON.stringify(f)}`);
  const out = process.env.SABLE_CRASH_OUT;
  if (!out) return;
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, `${f.scenario}.json`), JSON.stringify(f, null, 2));
}
