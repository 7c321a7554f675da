/** How the engine searched, from the answer's receipt, in plain words. */
import type { SearchAnswer } from '../../../client/index.js';
import { count, micros, percent } from '../format.js';

export function SearchReceipt({ answer }: { answer: SearchAnswer }) {
  const r = answer.receipt;
  const rerank = answer.rerank as Record<string, unknown> | undefined;
  return (
    <section class="card receipt" aria-labelledby="receipt-title">
      <h3 id="receipt-title">Receipt</h3>
      <dl class="inline">
        <dt>Time</dt>
        <dd>{answer.query_time_ms.toFixed(2)} ms</dd>
        {r ? (
          <>
            <dt>Strategy</dt>
            <dd>{r.strategy}</dd>
            <dt>Candidates scored</dt>
            <dd>{count(r.candidates_scored)}</dd>
            <dt>Partitions searched</dt>
            <dd>{r.partitions_searched}</dd>
            <dt>Estimated recall@10</dt>
            <dd>{r.estimated_recall === null ? 'no estimate (hnsw)' : percent(r.estimated_recall)}</dd>
            <dt>Engine time</dt>
            <dd>{micros(r.elapsed_us)}</dd>
            <dt>Kernels</dt>
            <dd>{r.isa}</dd>
          </>
        ) : (
          <>
            <dt>Engine</dt>
            <dd>no receipt for this search</dd>
          </>
        )}
        {rerank && (
          <>
            <dt>Rerank</dt>
            <dd>
              {Object.entries(rerank)
                .filter(([, v]) => v !== null && typeof v !== 'object')
                .map(([k, v]) => `${k} ${String(v)}`)
                .join(', ')}
            </dd>
          </>
        )}
      </dl>
    </section>
  );
}
