// A local server that speaks the OpenAI chat-completions API as the answer layer calls it: POST
// /v1/chat/completions with stream: true answers SSE `data:` chunks (text deltas, tool-call deltas
// split across chunks, usage) ending in `data: [DONE]`; errors as the real service sends them
// (429 with Retry-After, 500 with a JSON error); a request can also be left hanging. Each
// request's body and headers are recorded. Behaviour is scripted per request, first in first out,
// then the default: an answer made of the first sentence of source [1] of the system prompt.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Behaviour =
  | { kind: 'text'; text: string; delayMs?: number }
  | { kind: 'tool_calls'; calls: { name: string; arguments: Record<string, unknown> }[] }
  | { kind: 'status'; status: number; headers?: Record<string, string> }
  | { kind: 'hang' }
  | { kind: 'cut'; text: string };

export interface ChatRequest {
  headers: IncomingMessage['headers'];
  body: { model: string; messages: { role: string; content: string | null; tool_calls?: unknown[]; tool_call_id?: string }[]; tools?: unknown[]; stream?: boolean };
}

export async function startChatServer() {
  const queue: Behaviour[] = [];
  const requests: ChatRequest[] = [];
  const open = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      requests.push({ headers: req.headers, body });
      void respond(res, queue.shift() ?? fromSources(body));
    });
  });
  const respond = async (res: ServerResponse, b: Behaviour) => {
    if (b.kind === 'status') {
      res.writeHead(b.status, { 'content-type': 'application/json', ...b.headers }).end(JSON.stringify({ error: { message: `status ${b.status}`, type: 'test' } }));
      return;
    }
    if (b.kind === 'hang') {
      open.add(res);
      res.on('close', () => open.delete(res));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const send = (delta: object, finish: string | null = null) =>
      res.write(`data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', model: 'test', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`);
    send({ role: 'assistant', content: '' });
    if (b.kind === 'tool_calls') {
      b.calls.forEach((c, index) => {
        const args = JSON.stringify(c.arguments);
        const half = Math.floor(args.length / 2);
        send({ tool_calls: [{ index, id: `call_${index}`, type: 'function', function: { name: c.name, arguments: args.slice(0, half) } }] });
        send({ tool_calls: [{ index, function: { arguments: args.slice(half) } }] });
      });
      send({}, 'tool_calls');
    } else {
      const words = b.text.match(/\S+\s*/g) ?? [];
      for (const w of words) {
        if (res.destroyed) return;
        send({ content: w });
        if (b.kind === 'text' && b.delayMs) await new Promise((r) => setTimeout(r, b.delayMs));
      }
      if (b.kind === 'cut') {
        // What was written reaches the client, then the connection drops mid-answer.
        await new Promise((r) => setTimeout(r, 50));
        res.destroy();
        return;
      }
      send({}, 'stop');
    }
    res.write(`data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 } })}\n\n`);
    res.end('data: [DONE]\n\n');
  };
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests,
    /** Behaviours of the next requests, in order. */
    script(...b: Behaviour[]) {
      queue.push(...b);
    },
    async close() {
      for (const r of open) r.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** What a model told to cite would say: the first sentence of source [1], cited, and one claim it cannot back. */
function fromSources(body: ChatRequest['body']): Behaviour {
  const system = body.messages.find((m) => m.role === 'system')?.content ?? '';
  const source = system.split('[1] ')[1]?.split('\n').slice(1).join('\n') ?? '';
  const line = source.split('\n').find((l) => l.trim().split(/\s+/).length >= 5) ?? 'The sources say nothing.';
  const sentence = /^(.+?[.!?])(\s|$)/.exec(line.trim())?.[1] ?? line.trim();
  return { kind: 'text', text: `${sentence} [1] The moon is made of green cheese. [2]` };
}
