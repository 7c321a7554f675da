/**
 * One question and its answer as it streams: the run's trace (open while it works), the text as
 * it arrives with each `[n]` a button to its source (which opens the source's passages), the
 * tables a computation produced, the sources once the citation chunk came, and how the stream went (dropped and resumed, partial,
 * failed in the service's words).
 */
import { useState } from 'preact/hooks';
import type { Exchange, Preview } from '../answers.js';
import { Citation } from './citation.js';
import { ProblemNote } from './problem-note.js';

interface Props {
  exchange: Exchange;
  /** The passages of the exchange's `n`th source. */
  passages: (n: number) => Promise<Preview>;
}

export function AnswerStream({ exchange: x, passages }: Props) {
  const [open, setOpen] = useState<ReadonlySet<number>>(new Set());
  const working = x.state === 'streaming' || x.state === 'resuming';
  const citeId = (n: number) => `cite-${x.id}-${n}`;
  const toggle = (n: number) => setOpen((s) => (s.has(n) ? without(s, n) : new Set(s).add(n)));
  const cite = (n: number) => {
    setOpen((s) => new Set(s).add(n));
    const el = document.getElementById(citeId(n));
    el?.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
    el?.focus({ preventScroll: true });
  };
  const elapsed = x.trace.find((t) => t.action === 'run.done')?.ms;

  return (
    <article class="exchange" aria-label={`Question: ${x.question}`}>
      {x.question && <p class="question">{x.question}</p>}
      <div class="reply">
        {x.trace.length > 0 && (
          <details class="trace" open={working}>
            <summary>
              Trace: {x.trace.length} {x.trace.length === 1 ? 'step' : 'steps'}
              {!working && elapsed !== undefined && <> · {Math.round(elapsed)} ms</>}
            </summary>
            <ol aria-label="Trace">
              {x.trace.map((t) => (
                <li key={t.seq} class={`step ${t.status}`}>
                  <span class="phase">{t.phase}</span> {t.summary}
                  {(t.status === 'warning' || t.status === 'error') && <span class={`tag ${t.status === 'warning' ? 'warn' : 'bad'}`}>{t.status}</span>}
                  {t.ms !== undefined && <span class="muted small"> {Math.round(t.ms)} ms</span>}
                </li>
              ))}
            </ol>
          </details>
        )}
        {(x.answer || working) && (
          <div class="answer" aria-busy={working}>
            {x.answer ? withMarkers(x.answer, x.sources, cite) : <span class="muted">Working on it…</span>}
          </div>
        )}
        <p class="stream-state muted small" role="status">
          {stateLine(x)}
        </p>
        <ProblemNote problem={x.problem} />
        {x.artifacts.map((a, i) =>
          a.columns && a.rows ? (
            <div key={i} class="table-wrap artifact" tabIndex={0} role="region" aria-label={a.content}>
              <table>
                <caption>{a.content}</caption>
                <thead>
                  <tr>
                    {a.columns.map((c) => (
                      <th scope="col" key={c}>
                        {c}
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {a.rows.map((r, j) => (
                    <tr key={j}>
                      {r.map((v, k) => (
                        <td key={k}>{String(v)}</td>
                      ))}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ) : (
            <p key={i} class="artifact">
              {a.content}
            </p>
          ),
        )}
        {x.sources && x.sources.length > 0 && (
          <section class="sources" aria-label="Sources">
            <h3>Sources</h3>
            <ol class="citations">
              {x.sources.map((s, i) => (
                <Citation key={citeId(i + 1)} id={citeId(i + 1)} n={i + 1} source={s} open={open.has(i + 1)} onToggle={() => toggle(i + 1)} load={() => passages(i + 1)} />
              ))}
            </ol>
          </section>
        )}
      </div>
    </article>
  );
}

function stateLine(x: Exchange): string {
  const resumed = x.drops > 0 ? `The stream dropped ${x.drops === 1 ? 'once' : `${x.drops} times`} and resumed after chunk ${x.resumedAfter}. ` : '';
  switch (x.state) {
    case 'streaming':
      return `${resumed}Answering…`;
    case 'resuming':
      return `The stream dropped after chunk ${x.resumedAfter}: resuming…`;
    case 'done':
      return `${resumed}${x.partial ? 'Answered, with incomplete coverage (a bound of the run was reached).' : ''}`;
    case 'failed':
      return `${resumed}The run ended ${x.status ?? 'without an answer'}.`;
    case 'stored':
      return x.answer ? '' : 'No answer was recorded for this question.';
  }
}

/** The answer's text with each `[n]` a button to its source (plain text until the sources came, or when n names none). */
function withMarkers(text: string, sources: Exchange['sources'], cite: (n: number) => void) {
  const parts = text.split(/(\[\d+\])/);
  return parts.map((part, i) => {
    const n = /^\[(\d+)\]$/.exec(part)?.[1];
    const source = n ? sources?.[Number(n) - 1] : undefined;
    if (!n || !source) return part;
    return (
      <button key={i} type="button" class="cite-ref" aria-label={`Citation ${n}: ${source.name}`} onClick={() => cite(Number(n))}>
        [{n}]
      </button>
    );
  });
}

function without(s: ReadonlySet<number>, n: number): Set<number> {
  const out = new Set(s);
  out.delete(n);
  return out;
}
