/**
 * The Node.js flags `sable serve` runs with: in the shebang of cli.ts, the `start` script of
 * package.json and the benchmarks' service processes (a test checks they agree). V8 reads them
 * only from the command line, never once the process runs.
 *
 * Why: the service's JS heap is small (vectors live in native memory; the old generation of a
 * loaded service is ~35 MB) and its requests allocate fast. V8 starts incremental marking as soon
 * as the old generation's headroom (limit - size) is below the young generation's capacity, and
 * it grows the limit by as little as 1.1x: then every young-generation fill became a full
 * mark-compact, ~6 a second of 4-13 ms, while serving searches. Node 24's V8 also grows the
 * young generation to 64 MB semispaces, which no such headroom covers. Measured on Node 24.21.0
 * (bench:http, JSON searches at 16 clients, a service that had just taken 100k vectors): p99
 * 11-16 ms by default, 3.1-3.5 ms with both flags.
 * --max-semi-space-size=16: the young generation Node 20 and 22 use.
 * --heap-growing-percent=100: the old generation's limit doubles after a mark-compact, so its
 *   headroom covers a young generation's promotion (a heap of ~35 MB may grow to ~70 MB).
 */
export const SERVICE_NODE_FLAGS = ['--max-semi-space-size=16', '--heap-growing-percent=100'] as const;
