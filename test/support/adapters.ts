// The HTTP adapters a suite runs on: node:http always, uWebSockets.js where its native binary
// loads on this Node (20 and 22 here; never 24, where suites skip it and say why).
import { loadUws } from '../../dist/control-plane/http/uws-binary.js';

const uws = loadUws();

/** Why uWS is skipped on this Node, or null where it loads. */
export const uwsMissing: string | null = uws instanceof Error ? uws.message : null;

export const ADAPTERS = ['uws', 'node'] as const;

/** Whether a suite over `adapter` cannot run here. */
export function adapterMissing(adapter: (typeof ADAPTERS)[number]): boolean {
  return adapter === 'uws' && uwsMissing !== null;
}
