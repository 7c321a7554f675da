/**
 * A client of an OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, Ollama, llama.cpp's
 * server): streamed answers (SSE `data:` lines, `[DONE]`), tool calls assembled from their
 * deltas, usage when the server reports it. Failures are typed so the caller can degrade:
 * a timeout, a rate limit (with its Retry-After), a server error, an unreadable answer.
 */
import { redact } from '../../outbound/messages.js';

export interface ChatSettings {
  /** Base URL, e.g. https://api.openai.com/v1 (the client posts to {url}/chat/completions). */
  url: string;
  model: string;
  /** Longest wait for the answer to start, and between two of its chunks (a slow answer that keeps coming is not cut). */
  timeoutMs: number;
}

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type ChatMessage =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: ToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

export interface ToolDefinition {
  type: 'function';
  function: { name: string; description: string; parameters: object };
}

export type ChatDelta = { type: 'text'; text: string } | { type: 'tool_calls'; calls: ToolCall[] } | { type: 'usage'; prompt: number; completion: number };

export type ChatFailure = 'timeout' | 'rate_limited' | 'server_error' | 'bad_answer' | 'unreachable';

export class ChatError extends Error {
  constructor(
    readonly kind: ChatFailure,
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

export async function* chatStream(
  settings: ChatSettings,
  apiKey: string | undefined,
  messages: ChatMessage[],
  opts: { tools?: ToolDefinition[]; signal: AbortSignal; maxTokens?: number },
): AsyncGenerator<ChatDelta> {
  const idle = new AbortController();
  const timeout = idle.signal;
  let timer = setTimeout(() => idle.abort(), settings.timeoutMs);
  const awake = () => {
    clearTimeout(timer);
    timer = setTimeout(() => idle.abort(), settings.timeoutMs);
  };
  const signal = AbortSignal.any([opts.signal, timeout]);
  try {
    yield* exchange(settings, apiKey, messages, opts, signal, timeout, awake);
  } finally {
    clearTimeout(timer);
  }
}

async function* exchange(
  settings: ChatSettings,
  apiKey: string | undefined,
  messages: ChatMessage[],
  opts: { tools?: ToolDefinition[]; signal: AbortSignal; maxTokens?: number },
  signal: AbortSignal,
  timeout: AbortSignal,
  awake: () => void,
): AsyncGenerator<ChatDelta> {
  let res: Response;
  try {
    res = await fetch(`${settings.url.replace(/\/+$/, '')}/chat/completions`, {
      method: 'POST',
      signal,
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
      body: JSON.stringify({
        model: settings.model,
        messages,
        stream: true,
        stream_options: { include_usage: true },
        ...(opts.tools?.length ? { tools: opts.tools, tool_choice: 'auto' } : {}),
        ...(opts.maxTokens ? { max_tokens: opts.maxTokens } : {}),
      }),
    });
  } catch (e) {
    throw failure(e, timeout, opts.signal);
  }
  if (res.status === 429) {
    const after = Number(res.headers.get('retry-after'));
    await res.body?.cancel();
    throw new ChatError('rate_limited', 'the model endpoint answered 429 (rate limited)', Number.isFinite(after) ? after : undefined);
  }
  if (!res.ok) {
    // The key is cut out before the text is clipped (a clipped key would not match): endpoints
    // such as OpenAI's quote the key they refused, and this message reaches runs and sessions.
    const text = redact(await res.text().catch(() => ''), apiKey).slice(0, 200);
    throw new ChatError(res.status >= 500 ? 'server_error' : 'bad_answer', `the model endpoint answered ${res.status}${text ? `: ${text}` : ''}`);
  }
  if (!res.body) throw new ChatError('bad_answer', 'the model endpoint sent no body');
  const calls = new Map<number, ToolCall>();
  let finished = false;
  let buffer = '';
  const decoder = new TextDecoder();
  try {
    for await (const bytes of res.body as unknown as AsyncIterable<Uint8Array>) {
      awake();
      buffer += decoder.decode(bytes, { stream: true });
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl).replace(/\r$/, '');
        buffer = buffer.slice(nl + 1);
        if (!line.startsWith('data:')) continue;
        const data = line.slice(5).trim();
        if (data === '[DONE]') {
          if (calls.size) yield { type: 'tool_calls', calls: [...calls.values()] };
          return;
        }
        const delta = parse(data);
        if (delta.usage) yield { type: 'usage', prompt: delta.usage.prompt_tokens ?? 0, completion: delta.usage.completion_tokens ?? 0 };
        const choice = delta.choices?.[0];
        if (choice?.finish_reason) finished = true;
        const text = choice?.delta?.content;
        if (typeof text === 'string' && text !== '') yield { type: 'text', text };
        for (const tc of choice?.delta?.tool_calls ?? []) {
          const index = tc.index ?? 0;
          const call = calls.get(index) ?? { id: tc.id ?? `call_${index}`, type: 'function' as const, function: { name: '', arguments: '' } };
          if (tc.id) call.id = tc.id;
          if (tc.function?.name) call.function.name += tc.function.name;
          if (tc.function?.arguments) call.function.arguments += tc.function.arguments;
          calls.set(index, call);
        }
      }
    }
  } catch (e) {
    if (e instanceof ChatError) throw e;
    throw failure(e, timeout, opts.signal);
  }
  // A stream that ends without [DONE] nor a finish reason was cut: what came is not the whole answer.
  if (!finished) throw new ChatError('bad_answer', 'the model endpoint closed the stream before the answer was finished');
  if (calls.size) yield { type: 'tool_calls', calls: [...calls.values()] };
}

interface Chunk {
  choices?: { finish_reason?: string | null; delta?: { content?: string | null; tool_calls?: { index?: number; id?: string; function?: { name?: string; arguments?: string } }[] } }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number };
}

function parse(data: string): Chunk {
  try {
    return JSON.parse(data) as Chunk;
  } catch {
    throw new ChatError('bad_answer', 'the model endpoint sent a line that is not JSON');
  }
}

function failure(e: unknown, timeout: AbortSignal, caller: AbortSignal): Error {
  if (caller.aborted) return caller.reason instanceof Error ? caller.reason : new Error('aborted');
  if (timeout.aborted) return new ChatError('timeout', 'the model endpoint did not answer in time');
  return new ChatError('unreachable', `the model endpoint cannot be reached: ${(e as Error).message}`);
}
