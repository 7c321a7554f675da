import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Engine } from '../../dist/engine/index.js';

describe('crash safety', () => {
  it('every acknowledged upsert survives SIGKILL, and nothing half-written appears', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sable-crash-'));
    try {
      const child = spawn(process.execPath, [join(__dirname, '..', 'support', 'crash-child.mjs'), dir], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let acked = -1;
      await new Promise<void>((resolve) => {
        child.stdout.on('data', (chunk: Buffer) => {
          for (const line of chunk.toString().split('\n')) {
            const m = /^ack (\d+)$/.exec(line);
            if (m) acked = Number(m[1]);
          }
          // Kill mid-stream, after several promotions (seals and snapshots) have happened.
          if (acked >= 3000) child.kill('SIGKILL');
        });
        child.on('exit', () => resolve());
      });
      expect(acked).toBeGreaterThanOrEqual(3000);

      const engine = await Engine.open({ path: dir });
      const ds = engine.getDataset('crash')!;
      const count = ds.stats().vector_count;
      // Batches are atomic: whole batches only, at least every acknowledged one.
      expect(count).toBeGreaterThanOrEqual(acked + 1);
      expect(count % 50).toBe(0);
      for (let id = 0; id < count; id += 37) {
        const hits = await ds.search(new Float32Array(8).fill(id), { topK: 1 });
        expect(hits[0]).toMatchObject({ id, score: 0, metadata: { id } });
      }
      await ds.flush();
      expect(ds.stats().index_status).toBe('ready');
      await engine.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
