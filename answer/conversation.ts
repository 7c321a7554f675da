/**
 * A run's part in its session: the session must exist, its last messages are the history the
 * question follows (unless the caller sends one), the question is appended when the run starts
 * and the answer, with the run's trace, when it is done.
 */
import { SableError } from '../errors/codes.js';
import type { SourceEntry } from './sources.js';
import type { SessionRecord, SessionStore } from './sessions/store.js';
import type { Turn, Work } from './work.js';

/** Messages of a session a question follows. */
const SESSION_HISTORY = 20;

export function sessionOf(sessions: SessionStore, orgId: string, id: string): SessionRecord {
  const s = sessions.get(orgId, id);
  if (!s) throw new SableError('session_not_found', `session ${id} was not found`);
  return s;
}

export function historyOf(sessions: SessionStore, w: Work): Turn[] {
  if (w.body.conversation_history) return w.body.conversation_history;
  if (!w.session) return [];
  return sessions
    .messagesOf(w.session.id, SESSION_HISTORY)
    .filter((m): m is typeof m & { role: Turn['role'] } => m.role === 'user' || m.role === 'assistant')
    .map((m) => ({ role: m.role, content: m.content }));
}

export async function appendQuestion(sessions: SessionStore, w: Work): Promise<void> {
  if (w.session) await sessions.append(w.orgId, w.session.id, [{ role: 'user', content: w.body.query, metadata: { run_id: w.run.id } }]);
}

export async function appendAnswer(sessions: SessionStore, w: Work, sources: SourceEntry[]): Promise<void> {
  if (!w.session) return;
  const { run, budget } = w;
  await sessions.append(
    w.orgId,
    w.session.id,
    [{ role: 'assistant', content: run.answer, metadata: { run_id: run.id, partial: budget.partial, sources: sources.map((s) => ({ name: s.name, dataset_id: s.dataset_id, dataset_document_id: s.dataset_document_id })) } }],
    run.events.map((e) => ({ ...e, run_id: run.id })),
  );
}
