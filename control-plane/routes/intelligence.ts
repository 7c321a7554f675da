/**
 * The intelligence routes: the query (SSE or JSON), its runs (status, events after a seq, or the
 * same as SSE for an EventSource to resume by itself), and previews of cited sources.
 */
import { Type } from '@sinclair/typebox';
import type { DatasetRecord } from '../../catalog/datasets/record.js';
import type { DatasetRows } from '../../retrieval/rows.js';
import type { DatasetService } from '../../catalog/datasets/service.js';
import { SableError } from '../../errors/codes.js';
import type { PreviewSigner } from '../../answer/preview-ref.js';
import * as A from '../../answer/requests.js';
import type { RunView } from '../../answer/runs/run-view.js';
import type { RunStore } from '../../answer/runs/run-store.js';
import { STREAM_TOKEN_MINUTES, type StreamTokens } from '../../answer/runs/stream-tokens.js';
import type { AnswerService } from '../../answer/service.js';
import { visibleMetadata } from '../../retrieval/vectors.js';
import { route, type Route } from '../http/router.js';
import { AfterQuery, resumeAfter, ResumeHeaders, SSE_HEADERS, sseStream, wantsEventStream } from '../http/sse.js';
import { json, type Request, type Response } from '../http/types.js';
import { errorResponse } from '../http/status.js';

const StreamTokenQuery = Type.Object({ stream_token: Type.Optional(Type.String({ description: 'a token from POST /intelligence/runs/{runId}/stream-token, instead of X-API-Key' })) });

export interface IntelligenceDeps {
  answers: AnswerService;
  runs: RunStore;
  datasets: DatasetService;
  /** A dataset's rows beside search (its engine dataset's, or in a cluster its shards'). */
  rowsOf(r: DatasetRecord): DatasetRows;
  previews: PreviewSigner;
  streamTokens: StreamTokens;
}

export function intelligenceRoutes(d: IntelligenceDeps): Route[] {
  /** A `stream_token` minted for this run stands for its organization's key on the read-only run routes. */
  const streamTokenAuth = (req: Request, params: Record<string, string>) => {
    const token = req.query.get('stream_token');
    const org = token === null ? null : d.streamTokens.orgFor(token, params.runId!);
    return org === null ? undefined : { orgId: org, role: 'member' as const, keyId: 'stream-token' };
  };
  return [
    route({
      method: 'POST', path: '/intelligence/query', auth: 'key', summary: 'Answer a question from the datasets, with citations (SSE or JSON)', body: A.IntelligenceQuery,
      responses: { 200: A.IntelligenceAnswer },
      headers: ResumeHeaders,
      answerStreams: { 'text/event-stream': A.StreamChunk },
      description:
        'stream true (default): text/event-stream, each chunk `id: <seq>` and `data: {chunk_type, content, metadata}`; the first chunk ' +
        '(event query.received, with run_id) is sent before any search or model call; citation comes before done; done is last, once, with ' +
        'run_id and status. stream false: the answer object once the run ends. A stream that drops leaves its run working ' +
        'for a grace period (SABLE_ANSWER_DETACH_GRACE_MS): sending the same query with its run_id re-attaches and replays the chunks after ' +
        'Last-Event-ID; past the grace period the run is cancelled. A JSON request whose client leaves is treated the same way. ' +
        'filters and advanced_filters are authorization: ANDed into every search, read and computation of the run. ' +
        'Without a configured model (SABLE_LLM_URL) the answer is extractive: sentences of the retrieved chunks, each cited. ' +
        'Errors before the first chunk are JSON: 400 invalid_request (dataset_id is retired: send dataset_ids), 404 dataset_not_found, ' +
        '404 session_not_found, 409 run_conflict (a run_id of another question), 429 rate_limited, 503 dataset_not_ready.',
      handler: async ({ req, caller, body }) => {
        const { run, reattached } = await d.answers.start(caller.orgId, body);
        // Last-Event-ID means something only to a run that already sent chunks.
        if (body.stream ?? true) return { status: 200, headers: SSE_HEADERS, body: sseStream(run, reattached ? resumeAfter(req) : 0) };
        return answerWhenDone(run, req);
      },
    }),
    {
      method: 'GET', path: '/intelligence/runs/:runId', auth: 'key', summary: "A run's status, trace and answer so far", responses: { 200: A.RunRecord },
      query: StreamTokenQuery,
      description: 'Runs are kept 15 minutes after they end, visible only to their organization (run_not_found otherwise). Takes an API key or a stream_token of this run.',
      tokenAuth: streamTokenAuth,
      handler: async ({ caller, params }) => json(200, (await d.runs.find(caller.orgId, params.runId)).record(0)),
    },
    {
      method: 'GET', path: '/intelligence/runs/:runId/events', auth: 'key', summary: "A run's events after a seq (JSON), or its chunks as SSE", responses: { 200: A.RunRecord, 204: null },
      query: Type.Composite([AfterQuery, StreamTokenQuery]),
      headers: ResumeHeaders,
      answerStreams: { 'text/event-stream': A.StreamChunk },
      description:
        'JSON: {run_id, status, events, last_seq, answer} with the trace events after that seq. ' +
        'With Accept: text/event-stream: the chunks after that seq (or after Last-Event-ID) as SSE, live until done, so an EventSource resumes by itself; ' +
        '204 when the run has ended and nothing is left after that seq (an EventSource stops reconnecting). ' +
        'Takes an API key or a stream_token of this run (a browser EventSource cannot send headers).',
      tokenAuth: streamTokenAuth,
      handler: async ({ req, caller, params }) => {
        const run = await d.runs.find(caller.orgId, params.runId);
        const after = resumeAfter(req);
        if (wantsEventStream(req)) {
          if (!run.running && after >= run.lastSeq) return { status: 204 };
          return { status: 200, headers: SSE_HEADERS, body: sseStream(run, after) };
        }
        return json(200, run.record(after));
      },
    },
    {
      method: 'POST', path: '/intelligence/runs/:runId/stream-token', auth: 'key', summary: 'A short-lived token that reads this run without an API key (for a browser EventSource)',
      responses: { 201: A.StreamTokenAnswer },
      description: `The token is valid ${STREAM_TOKEN_MINUTES} minutes, for this run only: GET /intelligence/runs/{runId}/events?stream_token=... (and GET /intelligence/runs/{runId}) take it instead of X-API-Key.`,
      handler: async ({ caller, params }) => {
        const run = await d.runs.find(caller.orgId, params.runId);
        const token = d.streamTokens.sign({ org: caller.orgId, run: run.id });
        const expiresAt = new Date(Date.now() + d.streamTokens.lifetimeMs).toISOString();
        return json(201, { token, expires_at: expiresAt, events_path: `/intelligence/runs/${encodeURIComponent(run.id)}/events?stream_token=${token}` });
      },
    },
    {
      method: 'GET', path: '/intelligence/previews/:ref', auth: 'key', summary: 'The passages a cited source showed, from its preview_ref',
      description: 'preview_ref is opaque and signed; it expires after 24 hours. Answers {name, dataset_id, dataset_document_id, chunks: [{chunk_id, text, metadata}], download_path}.',
      handler: async ({ caller, params }) => {
        const t = d.previews.open(params.ref);
        if (!t || t.org !== caller.orgId) throw new SableError('not_found', 'the preview reference is unknown or expired');
        const r = d.datasets.get(caller.orgId, t.dataset);
        const rows = await d.rowsOf(r).metadata(Float64Array.from(t.ids));
        const chunks = t.ids.flatMap((id, k) => {
          const m = rows[k];
          if (!m) return [];
          return [{ chunk_id: d.datasets.externalIdOf(r, id) ?? String(id), text: typeof m.text === 'string' ? m.text : '', metadata: visibleMetadata(m, false) }];
        });
        const name = chunks.find((c) => typeof c.metadata.name === 'string')?.metadata.name ?? null;
        return json(200, {
          name,
          dataset_id: r.id,
          dataset_document_id: t.document,
          chunks,
          download_path: t.document ? `/datasets/${r.id}/documents/${t.document}/download` : null,
        });
      },
    },
  ];
}

/** The JSON answer when the run ends; a client that leaves first detaches (the grace period applies). */
async function answerWhenDone(run: RunView, req: Request): Promise<Response> {
  const detach = run.attach(run.lastSeq, () => undefined);
  const gone = new Promise<void>((resolve) => req.signal?.addEventListener('abort', () => resolve(), { once: true }));
  await Promise.race([run.whenEnded(), gone]);
  detach();
  if (run.running) return json(499, { error: 'invalid_request', message: 'the client went away' });
  if (run.status === 'succeeded') return json(200, run.result);
  if (run.failure) return errorResponse(new SableError(run.failure.code as never, run.failure.message));
  return json(409, { error: 'run_conflict', message: `run ${run.id} ended ${run.status}` });
}
