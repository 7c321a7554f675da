/** Numbers as the pages show them. */

const integer = new Intl.NumberFormat('en');

export function count(n: number): string {
  return integer.format(n);
}

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

/** Microseconds as milliseconds, the unit the receipts' readers think in. */
export function micros(us: number | null | undefined): string {
  return us === null || us === undefined ? '—' : `${(us / 1000).toFixed(us < 10_000 ? 2 : 1)} ms`;
}

export function percent(fraction: number | null | undefined): string {
  return fraction === null || fraction === undefined ? '—' : `${(fraction * 100).toFixed(1)} %`;
}

export function score(n: number | null | undefined): string {
  return n === null || n === undefined ? '—' : n.toFixed(4);
}

export function when(iso: string | null | undefined): string {
  return iso ? new Date(iso).toLocaleString() : '—';
}
