/**
 * A progress line for the long steps of a benchmark: done / total, the rate, the time left. On a
 * terminal it is rewritten in place; in a log, a line at most every `everyMs`.
 */
export class Progress {
  private readonly t0 = Date.now();
  private last = 0;

  constructor(
    private readonly label: string,
    private readonly unit: string,
    private readonly everyMs = process.stderr.isTTY ? 250 : 5000,
  ) {}

  update(done: number, total: number, extra = ''): void {
    const now = Date.now();
    if (now - this.last < this.everyMs && done < total) return;
    this.last = now;
    const seconds = (now - this.t0) / 1000;
    const rate = done / Math.max(seconds, 1e-3);
    const eta = done > 0 && done < total ? `, ETA ${formatSeconds((total - done) / rate)}` : '';
    const pct = total > 0 ? ` (${((100 * done) / total).toFixed(1)}%)` : '';
    const line = `${this.label}: ${done.toLocaleString('en')} / ${total.toLocaleString('en')} ${this.unit}${pct}, ${Math.round(rate).toLocaleString('en')} ${this.unit}/s${eta}${extra ? `, ${extra}` : ''}`;
    if (process.stderr.isTTY) process.stderr.write(`\r${line}\x1b[K${done >= total ? '\n' : ''}`);
    else process.stderr.write(`${line}\n`);
  }
}

function formatSeconds(s: number): string {
  return s < 90 ? `${s.toFixed(0)} s` : `${(s / 60).toFixed(1)} min`;
}
