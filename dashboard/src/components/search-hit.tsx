/** One result: its rank, ids, score, the parts the vector and the keywords gave it, metadata and text. */
import type { SearchAnswer } from '../../../client/index.js';
import { score } from '../format.js';

type Hit = SearchAnswer['results'][number];

export function SearchHit({ hit, rank }: { hit: Hit; rank: number }) {
  // The document's text comes back in metadata.text as well: shown once.
  const meta = Object.entries(hit.metadata ?? {}).filter(([k, v]) => !(k === 'text' && v === hit.doc_value));
  const fused = (hit.dense_contribution ?? 0) + (hit.keyword_contribution ?? 0);
  return (
    <li class="card hit">
      <p class="hit-head">
        <span class="rank">#{rank}</span> <span>id {hit.id}</span>
        {hit.external_id !== undefined && <code class="ext">{hit.external_id}</code>}
        <span class="score">score {score(hit.score)}</span>
        {hit.rerank_score !== undefined && <span class="score">rerank {score(hit.rerank_score)}</span>}
      </p>
      {hit.dense_contribution !== undefined && hit.keyword_contribution !== undefined && (
        <div class="shares">
          <span>
            vector {score(hit.dense_contribution)} · keyword {score(hit.keyword_contribution)}
            {hit.keyword_score !== undefined && <span class="muted"> (BM25 {score(hit.keyword_score)})</span>}
          </span>
          {fused > 0 && (
            <svg class="share-bar" viewBox="0 0 100 8" role="img" aria-label={`vector share ${Math.round((hit.dense_contribution / fused) * 100)} %`}>
              <rect class="dense" width={(hit.dense_contribution / fused) * 100} height="8" />
              <rect class="keyword" x={(hit.dense_contribution / fused) * 100} width={(hit.keyword_contribution / fused) * 100} height="8" />
            </svg>
          )}
        </div>
      )}
      {hit.doc_value && <p class="doc">{hit.doc_value}</p>}
      {meta.length > 0 && (
        <dl class="meta">
          {meta.map(([k, v]) => (
            <div key={k}>
              <dt>{k}</dt>
              <dd>{String(v)}</dd>
            </div>
          ))}
        </dl>
      )}
    </li>
  );
}
