// The service under test, in its own forked process with the Node flags of `sable serve`
// (SERVICE_NODE_FLAGS): startService(loadConfig(...)) exactly as `sable serve` does, on
// 127.0.0.1 and a free port. Answers usage requests (CPU of the whole process, event-loop
// utilisation of its main thread) and stops on 'close' or when the orchestrator goes away.
import { startService, type Service } from '../../control-plane/app.js';
import { loadConfig } from '../../control-plane/config.js';
import { send, serveOrchestrator } from './server-child.js';

const [dataDir, adapter, threads] = process.argv.slice(2);
let svc: Service | undefined;

serveOrchestrator(() => svc?.close());

try {
  svc = await startService(
    loadConfig({ host: '127.0.0.1', port: '0', 'data-dir': dataDir, 'http-adapter': adapter, 'search-threads': threads }, {}),
  );
  send({ type: 'ready', url: svc.url, port: svc.port, adapter: svc.adapter, detail: svc.adapterDetail });
} catch (e) {
  send({ type: 'failed', message: (e as Error).stack ?? String(e) });
  process.exit(1);
}
