// Shared pieces of the crash suite (test/crash-*.test.ts): how many kills a scenario does (a few
// inside `npm test`, 20 or more under `npm run test:crash`), a random kill moment, a bounded
// request pool, the exact top-k a recovered dataset must answer, and the figures each scenario
// reports (printed, and written to a JSON file that `npm run test:crash` turns into its report).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { score } from './data.js';

/** Kills per scenario: SABLE_CRASH_KILLS, else the short default of the scenario. */
export function killsFor(shortDefault: number): number {
  const n = Number(process.env.SABLE_CRASH_KILLS);
  return Number.isInteger(n) && n > 0 ? n : shortDefault;
}

/** The project's seeded generator: a failing round replays from the seed it prints. */
export { seeded as seededRandom } from './engine-model.mjs';

/** SABLE_CRASH_SEED, else a random seed; printed first, so a failing run can be replayed. */
export function crashSeed(scenario: string): number {
  const s = Number(process.env.SABLE_CRASH_SEED);
  const seed = Number.isInteger(s) ? s : Math.floor(Math.random() * 2 ** 31);
  console.log(`crash ${scenario}: seed ${seed} (SABLE_CRASH_SEED=${seed} replays the choices)`);
  return seed;
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

/**
 * Checks an exact search's answer (every list probed) against the exact top 10 of `rows`. Sealed
 * cosine rows are kept in half precision, so scores agree with the double-precision oracle to
 * HALF, and rows that near the 10th may swap: every served row must be a stored row scored as its
 * stored vector, and a row in one answer but not the other must lie within HALF of the 10th.
 */
export function expectExactTop10(served: { id: number; score: number }[], rows: Map<number, ArrayLike<number>>, query: ArrayLike<number>, label: string, describe: (id: number) => string = () => ''): void {
  const HALF = 1e-3;
  const want = exactTopK(rows, query, 10);
  const tenth = cosineDistance(query, rows.get(want[9]!)!);
  const explain = () =>
    served.map((x) => `${x.id}: served ${x.score.toFixed(6)}, stored ${rows.has(x.id) ? cosineDistance(query, rows.get(x.id)!).toFixed(6) : 'not live'}${describe(x.id)}`).join('; ') +
    ` | exact: ${want.map((id) => `${id}: ${cosineDistance(query, rows.get(id)!).toFixed(6)}`).join('; ')}`;
  expect(served.length, `${label}: exact top 10: ${explain()}`).toBe(10);
  for (const x of served) {
    expect(rows.has(x.id), `${label}: exact top 10, served ${x.id} not live: ${explain()}`).toBe(true);
    expect(Math.abs(x.score - cosineDistance(query, rows.get(x.id)!)), `${label}: exact top 10, ${x.id} scored off its stored vector: ${explain()}`).toBeLessThan(HALF);
  }
  const servedIds = new Set(served.map((x) => x.id));
  for (const id of want) {
    if (!servedIds.has(id)) expect(cosineDistance(query, rows.get(id)!), `${label}: exact top 10, ${id} missing: ${explain()}`).toBeGreaterThan(tenth - HALF);
  }
  for (const x of served) {
    if (!want.includes(x.id)) expect(cosineDistance(query, rows.get(x.id)!), `${label}: exact top 10, ${x.id} served: ${explain()}`).toBeLessThan(tenth + HALF);
  }
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
