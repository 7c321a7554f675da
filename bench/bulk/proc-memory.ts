// Resident memory of a process from /proc (Linux): now (VmRSS) and its peak so far (VmHWM), and
// what is resident now split into anonymous memory (heaps, buffers) and file pages (mapped files
// such as LMDB's).
import { readFileSync } from 'node:fs';

export function memoryOf(pid: number | 'self' = 'self'): { rss: number; peak: number; anon: number; file: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024;
    return { rss: kb('VmRSS'), peak: kb('VmHWM'), anon: kb('RssAnon'), file: kb('RssFile') + kb('RssShmem') };
  } catch {
    return { rss: 0, peak: 0, anon: 0, file: 0 };
  }
}
