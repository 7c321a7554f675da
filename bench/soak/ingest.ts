// Something real for the status polls to poll: a file_upload source feeding a small documents
// dataset (the local embedding model), one job made during setup, then a new job every
// `everyMs` through the whole soak (init, presigned PUTs, complete), each round's files changed
// so that incremental sync re-ingests them (old chunks out, new ones in). The feeder's own calls
// are not in the operation mix; their failures, and failed jobs or files, count as errors.

export interface FeederStats {
  jobs: number;
  completed: number;
  failed: number;
  filesFailed: number;
  /** Seconds from upload/complete to the job's end. */
  durations: number[];
  errors: number;
  codes: Record<string, number>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function files(round: number): { name: string; type: string; text: string }[] {
  const lines = (what: string, k: number) => Array.from({ length: k }, (_, i) => `${what} ${round}.${i}: the lighthouse keeper climbs ${200 + ((round * 7 + i) % 50)} steps at dusk.`).join('\n');
  return [
    { name: 'keeper.md', type: 'text/markdown', text: `# Round ${round}\n\n## Evening\n\n${lines('Evening note', 8)}\n\n## Morning\n\n${lines('Morning note', 8)}\n` },
    { name: 'bees.txt', type: 'text/plain', text: `A honey bee visits ${50 + (round % 50)} flowers on trip ${round}.\n${lines('Hive log', 6)}\n` },
    { name: 'tides.csv', type: 'text/csv', text: `round,hour,height\n${Array.from({ length: 12 }, (_, h) => `${round},${h},${((round + h) % 9) / 3}`).join('\n')}\n` },
  ];
}

export class IngestFeeder {
  readonly stats: FeederStats = { jobs: 0, completed: 0, failed: 0, filesFailed: 0, durations: [], errors: 0, codes: {} };
  jobId = '';
  private round = 0;
  private stopped = false;
  private loop: Promise<void> = Promise.resolve();

  private constructor(
    private readonly url: string,
    private readonly key: string,
    readonly datasetId: string,
    readonly sourceId: string,
  ) {}

  private async call(method: string, path: string, body?: unknown): Promise<any> {
    const res = await fetch(this.url + path, {
      method,
      headers: { 'x-api-key': this.key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) {
      let code = '';
      try {
        code = ` ${(JSON.parse(text) as { error?: string }).error ?? ''}`;
      } catch {
        // not JSON
      }
      throw Object.assign(new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`), { kind: `${res.status}${code}` });
    }
    return text ? JSON.parse(text) : null;
  }

  /** The documents dataset, the source and a first job, done before the soak starts. */
  static async setup(url: string, key: string): Promise<IngestFeeder> {
    const bare = new IngestFeeder(url, key, '', '');
    const ds = await bare.call('POST', '/datasets', { name: 'soak-docs' });
    await bare.call('POST', `/datasets/${ds.id}/ensure-engine`);
    const src = await bare.call('POST', '/ingestion/sources', { source_type: 'file_upload', name: 'soak docs', config: { sync_mode: 'incremental' } });
    const f = new IngestFeeder(url, key, ds.id, src.id);
    // The first job loads the embedding model: before the soak, so that is not in its RSS line.
    const ok = await f.once(120_000);
    if (!ok) throw new Error(`the setup ingestion job did not complete: ${JSON.stringify(f.stats)}`);
    return f;
  }

  /** One round: upload three files, wait for the job. True when it completed with no failed file. */
  private async once(timeoutMs: number): Promise<boolean> {
    const round = this.round++;
    const fs = files(round);
    const init = await this.call('POST', `/ingestion/sources/${this.sourceId}/upload/init`, {
      dataset_id: this.datasetId,
      files: fs.map((x) => ({ name: x.name, size_bytes: Buffer.byteLength(x.text), content_type: x.type })),
    });
    this.jobId = init.job_id;
    this.stats.jobs++;
    for (const [i, u] of (init.uploads as { upload_url: string }[]).entries()) {
      const put = await fetch(u.upload_url, { method: 'PUT', headers: { 'content-type': fs[i]!.type }, body: fs[i]!.text });
      const text = await put.text();
      if (!put.ok) throw Object.assign(new Error(`PUT upload: ${put.status} ${text.slice(0, 300)}`), { kind: `${put.status}` });
    }
    await this.call('POST', `/ingestion/sources/${this.sourceId}/upload/complete`, { job_id: init.job_id, file_ids: (init.uploads as { file_id: string }[]).map((u) => u.file_id) });
    const t0 = performance.now();
    for (;;) {
      const job = await this.call('GET', `/ingestion/jobs/${init.job_id}`);
      if (job.status === 'completed' || job.status === 'failed' || job.status === 'cancelled') {
        this.stats.durations.push((performance.now() - t0) / 1000);
        const listed = await this.call('GET', `/ingestion/jobs/${init.job_id}/files?status=failed`);
        const failedFiles = (listed.counts?.failed as number | undefined) ?? 0;
        this.stats.filesFailed += failedFiles;
        if (job.status === 'completed' && failedFiles === 0) {
          this.stats.completed++;
          return true;
        }
        this.stats.failed++;
        this.note(`job ${job.status}, ${failedFiles} failed file(s): ${job.message ?? ''}`);
        return false;
      }
      if (performance.now() - t0 > timeoutMs) {
        this.stats.failed++;
        this.note(`job still ${job.status} after ${timeoutMs / 1000} s`);
        return false;
      }
      await sleep(250);
    }
  }

  private note(kind: string): void {
    this.stats.errors++;
    this.stats.codes[kind] = (this.stats.codes[kind] ?? 0) + 1;
  }

  /** A job every `everyMs` (measured from one job's start to the next) until stop(). */
  start(everyMs: number): void {
    if (everyMs <= 0) return;
    this.loop = (async () => {
      while (!this.stopped) {
        const t0 = performance.now();
        try {
          await this.once(Math.max(everyMs * 4, 60_000));
        } catch (e) {
          this.note(`feeder call failed: ${(e as { kind?: string }).kind ?? (e as Error).message.slice(0, 120)}`);
        }
        const wait = everyMs - (performance.now() - t0);
        for (let left = wait; left > 0 && !this.stopped; left -= 200) await sleep(Math.min(200, left));
      }
    })();
  }

  /** Stops making jobs; waits for the one under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
  }
}
