/**
 * The Node.js flags `sable serve` runs with: in the shebang of cli.ts, the `start` script of
 * package.json and the benchmarks' service processes (a test checks they agree). V8 reads them
 * only from the command line, never once the process runs.
 *
 * --max-semi-space-size=16: Node 24's V8 grows the young generation to 64 MB semispaces. In a
 * service that took a load (old generation ~35 MB), the old generation then cannot take a whole
 * young generation's promotion, so V8 runs a full mark-compact where a scavenge would do: ~6 a
 * second of 5-13 ms while serving JSON searches, p99 12-15 ms at 16 clients against 3.1 ms with
 * 16 MB, the size Node 20 and 22 use (bench:http on Node 24.21.0).
 */
export const SERVICE_NODE_FLAGS = ['--max-semi-space-size=16'] as const;
