/** `sable tune`'s flags: read, checked (a bad value exits 2 naming it), with their defaults. */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { configError } from '../../errors/codes.js';
import { checkFlags } from '../config.js';
import type { TuneOptions } from './tune.js';

export const TUNE_HELP = `usage: sable tune --dataset ID [flags]

Measures a running service: samples queries from the dataset (or reads --queries), takes their
exact answers from an exhaustive search, then sweeps nprobe under a closed loop of clients and
reports recall@k against the p50/p99 latency of each setting, as a table (stdout and .md), a plot
(.svg) and the data (.json). With --apply --target-p99 MS it sets the dataset's SLA to the setting
of highest recall whose search p99 met the target. Exits 1 when no setting met it.

  --url URL            SABLE_URL        the service (default http://127.0.0.1:8080)
  --api-key KEY        SABLE_API_KEY    an API key of the dataset's organization (default: the
                                        admin key in ./.sable-data/admin.key)
  --dataset ID                          the dataset (sable or ivf index)
  --queries FILE                        a JSON array of query vectors instead of sampled ones
  --sample N                            queries sampled from the dataset (default 200)
  --k K                                 recall@k and top_k of every search (default 10)
  --concurrency C                       clients of the closed loop (default 4)
  --requests N                          measured requests per setting (default 1000)
  --nprobe 1,4,16                       the settings (default 1, 2, 4, ... every list)
  --target-p99 MS                       the engine's search p99 to meet (the SLA's target)
  --apply                               set the SLA (needs --target-p99)
  --out DIR                             where tune-<dataset>.{md,svg,json} go (default ./tune)
  --seed N                              the sample's seed (default 1)`;

export function tuneOptions(flags: Record<string, string>, env: NodeJS.ProcessEnv): TuneOptions {
  checkFlags(flags, ['url', 'api-key', 'dataset', 'queries', 'sample', 'k', 'concurrency', 'requests', 'nprobe', 'target-p99', 'apply', 'out', 'seed']);
  const dataset = flags.dataset;
  if (!dataset || dataset === 'true') throw configError('tune needs --dataset ID');
  const int = (name: string, fallback: number, min: number, max: number) => {
    if (flags[name] === undefined) return fallback;
    const v = Number(flags[name]);
    if (!Number.isInteger(v) || v < min || v > max) throw configError(`--${name} must be an integer from ${min} to ${max} (got '${flags[name]}')`);
    return v;
  };
  const nprobes = flags.nprobe?.split(',').map((s) => {
    const v = Number(s);
    if (!Number.isInteger(v) || v < 1) throw configError(`--nprobe must list positive integers (got '${s}')`);
    return v;
  });
  let targetP99Us: number | undefined;
  if (flags['target-p99'] !== undefined) {
    const ms = Number(flags['target-p99']);
    if (!(ms > 0)) throw configError(`--target-p99 must be a positive number of milliseconds (got '${flags['target-p99']}')`);
    targetP99Us = Math.round(ms * 1000);
  }
  const apply = flags.apply === 'true';
  if (apply && targetP99Us === undefined) throw configError('--apply needs --target-p99 MS');
  return {
    url: flags.url ?? env.SABLE_URL ?? 'http://127.0.0.1:8080',
    apiKey: flags['api-key'] ?? env.SABLE_API_KEY ?? adminKey(),
    dataset,
    queriesFile: flags.queries,
    sample: int('sample', 200, 1, 100_000),
    k: int('k', 10, 1, 1000),
    concurrency: int('concurrency', 4, 1, 1024),
    requests: int('requests', 1000, 1, 10_000_000),
    nprobes,
    outDir: resolve(flags.out ?? 'tune'),
    targetP99Us,
    apply,
    seed: int('seed', 1, 0, 2 ** 31),
  };
}

function adminKey(): string {
  try {
    return readFileSync('.sable-data/admin.key', 'utf8').trim();
  } catch {
    throw configError('no API key: pass --api-key or set SABLE_API_KEY (or run where `npm start` wrote .sable-data/admin.key)');
  }
}
