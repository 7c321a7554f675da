// What a fuzz run saw: cases and statuses per route, the problems found (each with the request
// that shows it), crashes, peak memory; printed at the end and written as markdown in long runs.

export interface Problem {
  route: string;
  what: string;
  request: string;
}

interface RouteTally {
  cases: number;
  statuses: Map<string, number>;
  slowestMs: number;
}

export class FuzzReport {
  readonly routes = new Map<string, RouteTally>();
  readonly problems: Problem[] = [];
  readonly crashes: string[] = [];
  readonly notes: string[] = [];
  peakRss = 0;
  startedAt = Date.now();

  constructor(readonly seed: number, readonly runs: number) {}

  count(route: string, status: number | string, ms: number): void {
    const t = this.routes.get(route) ?? { cases: 0, statuses: new Map(), slowestMs: 0 };
    this.routes.set(route, t);
    t.cases++;
    t.statuses.set(String(status), (t.statuses.get(String(status)) ?? 0) + 1);
    t.slowestMs = Math.max(t.slowestMs, ms);
  }

  problem(route: string, what: string, request: string): void {
    this.problems.push({ route, what, request: request.length > 600 ? `${request.slice(0, 600)}... (${request.length} chars)` : request });
  }

  get cases(): number {
    let n = 0;
    for (const t of this.routes.values()) n += t.cases;
    return n;
  }

  /** Statuses over all routes. */
  totals(): Map<string, number> {
    const out = new Map<string, number>();
    for (const t of this.routes.values()) for (const [s, n] of t.statuses) out.set(s, (out.get(s) ?? 0) + n);
    return new Map([...out].sort());
  }

  markdown(extra: string[] = []): string {
    const fmt = (m: Map<string, number>) => [...m].sort().map(([s, n]) => `${s}×${n}`).join(' ');
    const lines = [
      '# Fuzz run (`npm run test:fuzz`)',
      '',
      `seed ${this.seed}, ${this.runs} generated cases per route plus the fixed hostile cases; ${this.cases} requests in ` +
        `${((Date.now() - this.startedAt) / 1000).toFixed(0)} s; crashes: ${this.crashes.length}; problems: ${this.problems.length}; ` +
        `peak RSS of the service ${(this.peakRss / 2 ** 20).toFixed(0)} MiB.`,
      '',
      `Statuses over all requests: ${fmt(this.totals())} ("dropped": bytes that are not HTTP/1.1 with a valid framing, closed or left to the idle timeout without an answer; "client left": the client stopped midway on purpose).`,
      '',
      ...extra,
      ...(this.notes.length ? ['', ...this.notes.map((n) => `- ${n}`)] : []),
      '',
      '| route | cases | statuses | slowest ms |',
      '|---|---:|---|---:|',
      ...[...this.routes].sort(([a], [b]) => a.localeCompare(b)).map(([r, t]) => `| \`${r}\` | ${t.cases} | ${fmt(t.statuses)} | ${t.slowestMs.toFixed(0)} |`),
      '',
      ...(this.crashes.length ? ['## Crashes', '', ...this.crashes.map((c) => `- ${c}`), ''] : []),
      ...(this.problems.length ? ['## Problems', '', ...this.problems.map((p) => `- \`${p.route}\`: ${p.what} — ${p.request}`), ''] : []),
    ];
    // Hostile names and bodies carry control characters: shown escaped, the file stays text.
    return lines.join('\n').replace(/[\u0000-\u0009\u000b-\u001f\u007f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`) + '\n';
  }
}
