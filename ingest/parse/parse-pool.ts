/**
 * Parses and chunks files on worker threads (parse-worker.ts), never on the HTTP thread. Each
 * task is bounded in time and memory: a file that hangs its parser or inflates past the thread's
 * heap limit ends that thread alone (piscina starts another) and fails as timed_out or
 * parse_failed.
 */
import { Piscina } from 'piscina';
import type { PageLinks } from './links.js';
import type { LinksTask, ParseResult, ParseTask } from './parse-worker.js';

export interface ParsePoolOptions {
  threads?: number;
  /** Heap of each parse thread, MiB. */
  heapMb?: number;
}

export class ParsePool {
  private readonly pool: Piscina<ParseTask | LinksTask, ParseResult | PageLinks>;

  constructor(opts: ParsePoolOptions = {}) {
    this.pool = new Piscina({
      filename: new URL('./parse-worker.js', import.meta.url).href,
      minThreads: 0,
      maxThreads: opts.threads ?? 1,
      idleTimeout: 30_000,
      resourceLimits: { maxOldGenerationSizeMb: opts.heapMb ?? 1024 },
    });
  }

  async parse(task: ParseTask, timeoutMs: number): Promise<ParseResult> {
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      return (await this.pool.run(task, { signal })) as ParseResult;
    } catch (e) {
      if (signal.aborted) return { ok: false, type: 'timed_out', message: `parsing took longer than ${Math.round(timeoutMs / 1000)} s` };
      const message = (e as Error)?.message ?? String(e);
      if (/memory|heap/i.test(message) || (e as { code?: string })?.code === 'ERR_WORKER_OUT_OF_MEMORY') {
        return { ok: false, type: 'parse_failed', message: 'parsing the file ran out of memory (a file that expands far beyond its size?)' };
      }
      return { ok: false, type: 'parse_failed', message: `the parser stopped: ${message}` };
    }
  }

  /** The links, canonical URL and robots directives of an HTML page. */
  async links(html: string, url: string, timeoutMs = 30_000): Promise<PageLinks> {
    return (await this.pool.run({ html, url }, { name: 'links', signal: AbortSignal.timeout(timeoutMs) })) as PageLinks;
  }

  close(): Promise<void> {
    return this.pool.destroy();
  }
}
