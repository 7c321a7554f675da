/**
 * Ask: a chat over the datasets chosen (none: all of the organization's) on /intelligence/query.
 * Each chat is a session of the service: the first question creates it (titled by the question,
 * the datasets in its metadata) and opens its page, `#/ask/<session id>`, which asks it; a
 * session opened again shows its messages, takes its datasets back and asks follow-ups in it
 * (the service answers them with the session's history). Answers stream as they come (trace,
 * text, sources); a stream that drops is taken up again where it stopped; a question a session
 * holds without its answer yet is followed from its run.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { randomId, SableApiError, type StreamChunk } from '../../../client/index.js';
import { problemOf, type Problem } from '../api.js';
import {
  applyChunk,
  askStream,
  createSession,
  deleteSession,
  dropped,
  failed,
  followRun,
  listSessions,
  newExchange,
  openChat,
  passagesOf,
  type Exchange,
  type StreamHooks,
} from '../answers.js';
import { AnswerStream } from '../components/answer-stream.js';
import { ConfirmDialog } from '../components/confirm-dialog.js';
import { ProblemNote } from '../components/problem-note.js';
import { useConfirmedDelete } from '../flows.js';
import { when } from '../format.js';
import { useLoad } from '../hooks.js';
import { go, href } from '../router.js';
import '../ask.css';
import type { PageProps } from './index.js';

const MODES = ['auto', 'fast', 'agentic'] as const;
type Mode = (typeof MODES)[number];
/** The datasets the chooser lists (a page of the list). */
const CHOOSER_SIZE = 200;

interface Asked {
  query: string;
  datasetIds: string[];
  mode: Mode;
  topK: number;
}

/** The first question of a new chat, handed to the session's page, which asks it once the session is open. */
let firstQuestion: { sessionId: string; asked: Asked } | null = null;

export function AskPage({ params, api, session }: PageProps) {
  const chatId = params.id ?? null;
  const sessions = useLoad(() => listSessions(api), [api]);
  const datasets = useLoad(() => api.listDatasets(CHOOSER_SIZE, 0), [api]);
  const chat = useLoad(() => (chatId ? openChat(api, chatId) : Promise.resolve(null)), [api, chatId]);
  const [exchanges, setExchanges] = useState<Exchange[]>([]);
  const [chosen, setChosen] = useState<string[]>([]);
  const [question, setQuestion] = useState('');
  const [mode, setMode] = useState<Mode>('auto');
  const [topK, setTopK] = useState('5');
  const [starting, setStarting] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const del = useConfirmedDelete<string>((id) => deleteSession(api, id), () => go('ask'));
  /** The streams this page reads: they stop when it closes (the service lets a run go on a while for a reader to come back). */
  const streams = useRef(new Set<AbortController>());
  useEffect(() => () => streams.current.forEach((c) => c.abort()), []);

  const update = (id: string, f: (x: Exchange) => Exchange) => setExchanges((xs) => xs.map((x) => (x.id === id ? f(x) : x)));

  /** Reads an exchange's chunks into it until `done`. */
  const read = async (id: string, chunks: (hooks: StreamHooks) => AsyncGenerator<StreamChunk>, onRefused?: (e: unknown) => boolean) => {
    const ctrl = new AbortController();
    streams.current.add(ctrl);
    try {
      for await (const c of chunks({ signal: ctrl.signal, onDrop: (after) => update(id, (x) => dropped(x, after)) })) update(id, (x) => applyChunk(x, c));
      sessions.reload();
    } catch (e) {
      if (!ctrl.signal.aborted && !onRefused?.(e)) update(id, (x) => failed(x, e));
    } finally {
      streams.current.delete(ctrl);
    }
  };

  const ask = (a: Asked, sessionId: string) => {
    const runId = randomId();
    setExchanges((xs) => [...xs, newExchange(runId, a.query)]);
    const body = { query: a.query, run_id: runId, session_id: sessionId, mode: a.mode, top_k: a.topK, ...(a.datasetIds.length ? { dataset_ids: a.datasetIds } : {}) };
    void read(runId, (hooks) => askStream(session.apiKey, body, hooks));
  };

  // A session opened: its exchanges and datasets; then the first question of a new chat, or the run of a question still unanswered.
  useEffect(() => {
    if (!chat.data) return;
    const { session: s, exchanges: stored } = chat.data;
    const ids = s.metadata.dataset_ids;
    setChosen(Array.isArray(ids) ? ids.filter((d): d is string => typeof d === 'string') : s.dataset_id ? [s.dataset_id] : []);
    if (firstQuestion?.sessionId === s.id) {
      const { asked } = firstQuestion;
      firstQuestion = null;
      setExchanges(stored);
      setMode(asked.mode);
      setTopK(String(asked.topK));
      ask(asked, s.id);
      return;
    }
    const last = stored.at(-1);
    if (!last || last.answer !== '' || !last.runId) return setExchanges(stored);
    setExchanges(stored.map((x) => (x === last ? { ...x, trace: [], state: 'streaming' } : x)));
    // A run gone (kept 15 minutes after it ends) leaves the question unanswered, as the session holds it.
    const gone = (e: unknown) => e instanceof SableApiError && e.code === 'run_not_found' && (update(last.id, (x) => ({ ...x, state: 'stored' })), true);
    void read(last.id, (hooks) => followRun(session.apiKey, last.runId!, hooks), gone);
  }, [chat.data]);

  const working = starting || exchanges.some((x) => x.state === 'streaming' || x.state === 'resuming');

  const submit = async (e: Event) => {
    e.preventDefault();
    const asked: Asked = { query: question.trim(), datasetIds: chosen, mode, topK: Number(topK) };
    if (!asked.query || working) return;
    setProblem(null);
    if (chatId && chat.data) {
      setQuestion('');
      return ask(asked, chatId);
    }
    setStarting(true);
    try {
      const created = await createSession(api, asked.query, chosen);
      firstQuestion = { sessionId: created.id, asked };
      go('ask', created.id);
    } catch (err) {
      setProblem(problemOf(err));
      setStarting(false);
    }
  };

  const title = chat.data?.session.title ?? (chatId ? 'Session' : 'New chat');
  const toggle = (id: string, on: boolean) => setChosen((c) => (on ? [...c, id] : c.filter((x) => x !== id)));
  // A dataset the session names but the chooser's page does not list is shown by its id.
  const listed = datasets.data?.datasets ?? [];
  const unlisted = chosen.filter((id) => !listed.some((d) => d.id === id));

  return (
    <>
      <h1 tabIndex={-1}>Ask</h1>
      <div class="ask-layout">
        <nav class="chats" aria-label="Sessions">
          <a class="button" href={href('ask')}>
            New chat
          </a>
          <ProblemNote problem={sessions.problem} />
          {sessions.data && sessions.data.sessions.length === 0 && <p class="muted small">No sessions yet: the first question starts one.</p>}
          <ul>
            {sessions.data?.sessions.map((s) => (
              <li key={s.id}>
                <a href={href('ask', s.id)} aria-current={s.id === chatId ? 'page' : undefined}>
                  {s.title || 'Untitled session'}
                </a>
                <span class="muted small">{when(s.updated_at)}</span>
              </li>
            ))}
          </ul>
        </nav>
        <section class="chat" aria-labelledby="chat-title">
          <div class="page-head">
            <h2 id="chat-title">{title}</h2>
            {chat.data && (
              <button type="button" class="link danger" onClick={() => del.ask(chatId!)}>
                Delete session
              </button>
            )}
          </div>
          <ProblemNote problem={chat.problem} />
          {chatId && chat.loading && !chat.data && <p class="muted">Opening the session…</p>}
          {!chatId && exchanges.length === 0 && (
            <p class="muted">
              Ask a question about your datasets. The answer streams as the service works: its trace, the text with <code>[n]</code> citations, then
              the sources, whose passages open from here. Without a configured model the service answers with sentences of the passages it
              found, each cited.
            </p>
          )}
          <div class="exchanges">
            {exchanges.map((x) => (
              <AnswerStream key={x.id} exchange={x} passages={(n) => passagesOf(api, session.apiKey, x, n)} />
            ))}
          </div>
          <form class="card ask-form" onSubmit={submit} aria-label="Ask a question">
            <div class="field">
              <label for="question">{exchanges.length ? 'Follow-up question' : 'Question'}</label>
              <textarea
                id="question"
                rows={3}
                required
                maxLength={8000}
                value={question}
                onInput={(e) => setQuestion(e.currentTarget.value)}
                onKeyDown={(e) => e.key === 'Enter' && (e.ctrlKey || e.metaKey) && e.currentTarget.form?.requestSubmit()}
              />
            </div>
            <fieldset class="datasets-chosen">
              <legend>Datasets</legend>
              <p class="muted small">None checked: every dataset of the organization.</p>
              <ProblemNote problem={datasets.problem} />
              <div class="choices">
                {listed.map((d) => (
                  <div class="check" key={d.id}>
                    <input id={`ask-ds-${d.id}`} type="checkbox" checked={chosen.includes(d.id)} onChange={(e) => toggle(d.id, e.currentTarget.checked)} />
                    <label for={`ask-ds-${d.id}`}>{d.name}</label>
                  </div>
                ))}
                {unlisted.map((id) => (
                  <div class="check" key={id}>
                    <input id={`ask-ds-${id}`} type="checkbox" checked onChange={() => toggle(id, false)} />
                    <label for={`ask-ds-${id}`}>
                      <code>{id}</code>
                    </label>
                  </div>
                ))}
              </div>
            </fieldset>
            <div class="options">
              <div class="field">
                <label for="ask-mode">Mode</label>
                <select id="ask-mode" value={mode} onChange={(e) => setMode(e.currentTarget.value as Mode)}>
                  {MODES.map((m) => (
                    <option key={m} value={m}>
                      {m}
                    </option>
                  ))}
                </select>
              </div>
              <div class="field">
                <label for="ask-top-k">Passages (top_k)</label>
                <input id="ask-top-k" type="number" min={1} max={50} required value={topK} onInput={(e) => setTopK(e.currentTarget.value)} />
              </div>
            </div>
            <ProblemNote problem={problem} />
            <button type="submit" class="primary" disabled={working}>
              {working ? 'Answering…' : 'Ask'}
            </button>
          </form>
        </section>
      </div>
      {del.target && (
        <ConfirmDialog title={`Delete ${title}?`} confirmLabel="Delete session" {...del.dialog}>
          <p>Its messages and the trace of its runs are deleted with it. This cannot be undone.</p>
        </ConfirmDialog>
      )}
    </>
  );
}
