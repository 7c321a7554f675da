// What every server child of the benchmark (the service, the bare uWS and node:http servers)
// says to the orchestrator over IPC: ready or failed, its CPU and event-loop use on request, and
// closed once it stopped on 'close' or when the orchestrator went away.
import { performance } from 'node:perf_hooks';
import type { FromServer, ToServer } from './protocol.js';

export function send(m: FromServer): void {
  if (process.connected) process.send!(m);
}

/** Answers usage requests; `stop` runs on 'close' or a lost orchestrator, then the child exits. */
export function serveOrchestrator(stop: () => void | Promise<void>): void {
  const close = async () => {
    try {
      await stop();
    } finally {
      send({ type: 'closed' });
      process.exit(0);
    }
  };
  process.on('message', (m: ToServer) => {
    if (m.type === 'usage') send({ type: 'usage', usage: { cpu: process.cpuUsage(), elu: performance.eventLoopUtilization() } });
    else if (m.type === 'close') void close();
  });
  process.on('disconnect', () => void close());
}
