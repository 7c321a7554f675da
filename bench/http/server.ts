// The service under test, in its own forked process with the Node flags of `sable serve`
// (SERVICE_NODE_FLAGS): startService(loadConfig(...)) exactly as `sable serve` does, on
// 127.0.0.1 and a free port. Answers usage requests (CPU of the whole process, event-loop
// utilisation of its main thread) and stops on 'close' or when the orchestrator goes away.
import { performance } from 'node:perf_hooks';
import { startService, type Service } from '../../control-plane/app.js';
import { loadConfig } from '../../control-plane/config.js';
import type { FromServer, ToServer } from './protocol.js';

const [dataDir, adapter, threads] = process.argv.slice(2);
let svc: Service | undefined;

function send(m: FromServer): void {
  if (process.connected) process.send!(m);
}

async function close(code: number): Promise<never> {
  try {
    await svc?.close();
  } finally {
    send({ type: 'closed' });
    process.exit(code);
  }
}

process.on('message', (m: ToServer) => {
  if (m.type === 'usage') {
    send({ type: 'usage', usage: { cpu: process.cpuUsage(), elu: performance.eventLoopUtilization() } });
  } else if (m.type === 'close') {
    void close(0);
  }
});
process.on('disconnect', () => void close(0));

try {
  svc = await startService(
    loadConfig({ host: '127.0.0.1', port: '0', 'data-dir': dataDir, 'http-adapter': adapter, 'search-threads': threads }, {}),
  );
  send({ type: 'ready', url: svc.url, port: svc.port, adapter: svc.adapter, detail: svc.adapterDetail });
} catch (e) {
  send({ type: 'failed', message: (e as Error).stack ?? String(e) });
  process.exit(1);
}
