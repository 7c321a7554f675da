/**
 * The answerer with a model: the question, the conversation and the numbered sources go to an
 * OpenAI-compatible chat endpoint; its answer streams back sentence by sentence, and each
 * sentence is sent only once its citations are checked (a marker that does not hold is dropped).
 */
import type { Budget } from '../budget.js';
import { chatStream, type ChatMessage, type ChatSettings } from '../llm/chat-client.js';
import { checkSentence, type CitedSource, type Dropped } from './citations.js';
import { SentenceSplitter } from './sentences.js';

export interface GenerativeModel {
  settings: ChatSettings;
  apiKey: string | undefined;
}

export interface GeneratedAnswer {
  dropped: Dropped[];
  markers: number;
  /** The model failed after part of the answer was sent (that part stands). */
  failedAfterText: Error | null;
}

/** The numbered sources; a bracketed number inside a source (a footnote) becomes (n), so only citations look like [n]. */
export function sourcesPrompt(sources: { name: string; texts: string[] }[]): string {
  return sources.map((s, i) => `[${i + 1}] ${s.name}\n${s.texts.map((t) => t.replace(/\[(\d+)\]/g, '($1)')).join('\n…\n')}`).join('\n\n');
}

export async function generate(
  model: GenerativeModel,
  question: string,
  history: { role: 'user' | 'assistant'; content: string }[],
  sources: ({ name: string } & CitedSource)[],
  budget: Budget,
  signal: AbortSignal,
  send: (text: string) => void,
): Promise<GeneratedAnswer> {
  const messages: ChatMessage[] = [
    {
      role: 'system',
      content:
        'Answer the question from the numbered sources only. End every sentence that uses a source with its number in brackets, like [1]. ' +
        'If the sources do not hold the answer, say that they do not. Be brief.\n\nSources:\n' +
        sourcesPrompt(sources),
    },
    ...history.map((h) => ({ role: h.role, content: h.content }) as ChatMessage),
    { role: 'user', content: question },
  ];
  const splitter = new SentenceSplitter();
  const out: GeneratedAnswer = { dropped: [], markers: 0, failedAfterText: null };
  let sent = false;
  const emit = (sentence: string) => {
    const checked = checkSentence(sentence, sources, false);
    out.dropped.push(...checked.dropped);
    out.markers += checked.kept.length;
    if (checked.text.trim() === '' && !checked.text.includes('\n')) return;
    send(checked.text);
    sent = true;
  };
  try {
    for await (const d of chatStream(model.settings, model.apiKey, messages, { signal, maxTokens: Math.max(64, Math.min(2048, budget.left())) })) {
      if (d.type !== 'text') continue;
      if (!budget.spend(d.text)) break;
      for (const s of splitter.push(d.text)) emit(s);
    }
  } catch (e) {
    if (!sent) throw e;
    out.failedAfterText = e as Error;
  }
  const rest = splitter.end();
  if (rest.trim() !== '') emit(rest);
  return out;
}
