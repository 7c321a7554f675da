/**
 * One cited source of an answer: its number (the `[n]` of the text), name, relevance and the
 * preview the answer carried; opened, the passages its preview_ref points to
 * (GET /intelligence/previews/{ref}), read once.
 */
import { useEffect, useState } from 'preact/hooks';
import { problemOf, type Problem } from '../api.js';
import type { CitedSource, Preview } from '../answers.js';
import { ProblemNote } from './problem-note.js';

interface Props {
  /** The element's id, which the answer's `[n]` buttons scroll to. */
  id: string;
  n: number;
  source: CitedSource;
  open: boolean;
  onToggle: () => void;
  load: () => Promise<Preview>;
}

export function Citation({ id, n, source, open, onToggle, load }: Props) {
  const [passages, setPassages] = useState<{ preview: Preview | null; problem: Problem | null; loading: boolean }>({ preview: null, problem: null, loading: false });
  useEffect(() => {
    if (!open || passages.preview || passages.loading) return;
    setPassages({ preview: null, problem: null, loading: true });
    load().then(
      (preview) => setPassages({ preview, problem: null, loading: false }),
      (e) => setPassages({ preview: null, problem: problemOf(e), loading: false }),
    );
  }, [open]);

  const where = source.path ?? source.url;
  return (
    <li id={id} class={open ? 'citation open' : 'citation'} tabIndex={-1}>
      <p class="citation-head">
        <span class="cite-n">[{n}]</span> <strong>{source.name}</strong>
        {typeof source.relevance === 'number' && <span class="muted small">relevance {source.relevance.toFixed(2)}</span>}
        {typeof source.chunk_count === 'number' && (
          <span class="muted small">
            {source.chunk_count} {source.chunk_count === 1 ? 'passage' : 'passages'}
          </span>
        )}
        {source.pages && source.pages.length > 0 && <span class="muted small">pages {source.pages.join(', ')}</span>}
        <button type="button" class="link" aria-expanded={open} aria-controls={`${id}-passages`} onClick={onToggle}>
          {open ? 'Hide passages' : 'Show passages'}
          <span class="visually-hidden"> of {source.name}</span>
        </button>
      </p>
      {where && <p class="muted small where">{where}</p>}
      {!open && source.preview && <p class="preview">{source.preview}</p>}
      <div id={`${id}-passages`} hidden={!open}>
        {open && passages.loading && <p class="muted">Loading passages…</p>}
        <ProblemNote problem={open ? passages.problem : null} />
        {open && passages.preview && (
          <ol class="passages" aria-label={`Passages of ${source.name}`}>
            {passages.preview.chunks.map((c) => (
              <li key={c.chunk_id}>
                <blockquote class="doc">{c.text || <span class="muted">(no text)</span>}</blockquote>
                <p class="muted small">chunk {c.chunk_id}</p>
              </li>
            ))}
          </ol>
        )}
      </div>
    </li>
  );
}
