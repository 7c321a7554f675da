// The service's HTTP adapters the benchmark measures, and which of them serve on the running
// Node: node:http everywhere, uWebSockets.js only where loadUws() (the service's own loader)
// finds its native binary (never the package's JS emulation).
import { spawnSync } from 'node:child_process';
import type { AdapterKey } from './config.js';

export interface AdapterInfo {
  key: AdapterKey;
  /** Its name in GET /healthz and in the report. */
  name: string;
  /** The bare server of its HTTP stack (the ceiling), a child script. */
  bare: string;
}

export const ADAPTERS: Record<AdapterKey, AdapterInfo> = {
  uws: { key: 'uws', name: 'uWebSockets.js', bare: './bare-uws.js' },
  node: { key: 'node', name: 'node:http', bare: './bare-node.js' },
};

/**
 * Why uWS cannot serve on this Node (loadUws()'s own message), or null when it can. Asked in a
 * child process: loading uWS's addon here would hook it into the event loop of the process that
 * measures the in-process search.
 */
function uwsAbsence(): string | null {
  const loader = new URL('../../control-plane/http/uws-binary.js', import.meta.url).href;
  const probe = `const u = (await import(${JSON.stringify(loader)})).loadUws(); process.stdout.write(u instanceof Error ? u.message : '');`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', probe], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`the uWS probe failed: ${r.stderr.trim()}`);
  return r.stdout || null;
}

/** The adapters to measure, in order (the first loads the data), and why uWS cannot serve here. */
export function chooseAdapters(asked: AdapterKey[] | 'all'): { adapters: AdapterInfo[]; uwsAbsent: string | null } {
  const uwsAbsent = uwsAbsence();
  if (asked === 'all') return { adapters: uwsAbsent ? [ADAPTERS.node] : [ADAPTERS.uws, ADAPTERS.node], uwsAbsent };
  if (uwsAbsent && asked.includes('uws')) throw new Error(`--adapters asks for uws, but ${uwsAbsent}`);
  return { adapters: asked.map((k) => ADAPTERS[k]), uwsAbsent };
}
