/**
 * The bodies of the answer use-cases (the intelligence query, sessions and their messages) and
 * their answers, as TypeBox schemas: the validator, the types the services take, the OpenAPI
 * entries. Bounds are the contract's (top_k 1-50, max_steps 1-24, deadline_seconds 5-600).
 */
import { Type, type Static } from '@sinclair/typebox';
import { Scalar, StringEnum } from '../contract/json-schema.js';
import { AdvancedFilter } from '../retrieval/requests.js';
import { CHUNK_TYPES, RUN_STATUSES } from './runs/run.js';

export const MODES = ['auto', 'fast', 'agentic'] as const;
export type Mode = (typeof MODES)[number];
export const MESSAGE_ROLES = ['user', 'assistant', 'system', 'tool'] as const;
export type MessageRole = (typeof MESSAGE_ROLES)[number];

const Id = Type.String({ minLength: 1, maxLength: 128 });
/** Caller-chosen run ids travel in URLs and SSE `id:` lines: no spaces, no slashes. */
export const RUN_ID_PATTERN = '^[A-Za-z0-9._:-]{1,128}$';

/** Chunks a search of a question retrieves when the question names no top_k. */
export const DEFAULT_ANSWER_TOP_K = 5;

export const IntelligenceQuery = Type.Object({
  query: Type.String({ minLength: 1, maxLength: 8000, description: 'the question' }),
  dataset_ids: Type.Optional(Type.Array(Id, { minItems: 1, maxItems: 100, description: 'scope; omitted: every dataset of the organization (or the session\'s dataset)' })),
  top_k: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, default: DEFAULT_ANSWER_TOP_K, description: 'chunks to retrieve per search' })),
  conversation_history: Type.Optional(
    Type.Array(Type.Object({ role: StringEnum(['user', 'assistant'] as const), content: Type.String({ maxLength: 32_000 }) }), { maxItems: 100 }),
  ),
  stream: Type.Optional(Type.Boolean({ default: true, description: 'SSE (text/event-stream) when true, one JSON answer when false' })),
  include_sources: Type.Optional(Type.Boolean({ default: true })),
  mode: Type.Optional(StringEnum(MODES, { default: 'auto' })),
  session_id: Type.Optional(Id),
  run_id: Type.Optional(Type.String({ pattern: RUN_ID_PATTERN, description: 'caller-chosen run id: a run of that id re-attaches (its chunks replay after Last-Event-ID)' })),
  max_steps: Type.Optional(Type.Integer({ minimum: 1, maximum: 24, description: 'tool-step cap (default 6; fast mode takes 1)' })),
  deadline_seconds: Type.Optional(Type.Number({ minimum: 5, maximum: 600, description: 'wall-clock ceiling (default 60); then answers with what it has' })),
  filters: Type.Optional(
    Type.Record(Type.String(), Scalar, { description: 'authorization: equality filters ANDed into every search, read and computation of the run; no plan drops or widens them' }),
  ),
  advanced_filters: Type.Optional(Type.Array(AdvancedFilter, { description: 'authorization, like filters (all must hold)' })),
  dataset_id: Type.Optional(Type.Unknown({ deprecated: true, description: 'retired: sending it answers 400 (use dataset_ids)' })),
});
export type IntelligenceQuery = Static<typeof IntelligenceQuery>;

export const SessionCreate = Type.Object({
  title: Type.Optional(Type.String({ maxLength: 512 })),
  workspace_id: Type.Optional(Type.String({ maxLength: 128 })),
  dataset_id: Type.Optional(Type.String({ format: 'uuid', description: 'default dataset scope of queries in this session' })),
  metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});
export type SessionCreate = Static<typeof SessionCreate>;

export const MessageCreate = Type.Object({
  role: StringEnum(MESSAGE_ROLES),
  content: Type.String({ maxLength: 256_000 }),
  metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});
export type MessageCreate = Static<typeof MessageCreate>;

// ------------------------------------------------------------------ answers (OpenAPI)

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

export const SourceChunk = Type.Object({
  chunk_id: Type.String(),
  score: Type.Number(),
  text: Type.String(),
  chunk_index: Nullable(Type.Integer()),
  sheet_name: Nullable(Type.String()),
  row_start: Nullable(Type.Integer()),
  row_end: Nullable(Type.Integer()),
  column_names: Nullable(Type.Array(Type.String())),
});

export const AnswerSource = Type.Object({
  name: Type.String(),
  path: Nullable(Type.String()),
  url: Nullable(Type.String()),
  source_type: Nullable(Type.String()),
  dataset_id: Type.String(),
  dataset_document_id: Nullable(Type.String()),
  content_type: Nullable(Type.String()),
  relevance: Type.Number({ description: '0-1, higher is more relevant (the best chunk: cosine similarity, or the fused score)' }),
  pages: Type.Array(Type.Integer()),
  sheet_names: Type.Array(Type.String()),
  chunk_count: Type.Integer({ description: 'chunks of this source among the retrieved ones' }),
  preview: Type.String(),
  preview_ref: Type.String({ description: 'opaque signed reference: GET /intelligence/previews/{preview_ref}' }),
  chunks: Type.Array(SourceChunk),
  timestamp_start: Nullable(Type.Number()),
  timestamp_end: Nullable(Type.Number()),
  file_id: Nullable(Type.String()),
  thumbnail_url: Nullable(Type.String()),
});

export const AnswerChunk = Type.Object({
  id: Type.String(),
  text: Type.String(),
  score: Type.Number(),
  source: Type.String(),
  source_url: Nullable(Type.String()),
  page: Nullable(Type.Integer()),
  metadata: Type.Record(Type.String(), Type.Unknown()),
});

export const IntelligenceAnswer = Type.Object({
  answer: Type.String({ description: 'inline citations [n] are 1-based into sources' }),
  sources: Type.Array(AnswerSource),
  chunks: Type.Array(AnswerChunk),
  message: Nullable(Type.String()),
  metadata: Type.Record(Type.String(), Type.Unknown(), { description: 'run_id, status, mode, answerer, partial, budget {steps_used, max_steps, tokens_used, max_tokens, elapsed_ms, deadline_ms, degraded_reasons}, plan, warnings' }),
});

export const TraceEvent = Type.Object({
  seq: Type.Integer(),
  phase: Type.String(),
  action: Type.String(),
  status: Type.String(),
  summary: Type.String(),
  step: Type.Optional(Type.Integer()),
  tool: Type.Optional(Type.String()),
  ms: Type.Optional(Type.Number()),
  detail: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  at: Type.String(),
});

export const RunRecord = Type.Object({
  run_id: Type.String(),
  status: StringEnum(RUN_STATUSES),
  events: Type.Array(TraceEvent),
  last_seq: Type.Integer({ description: 'seq of the last chunk of the run (every SSE chunk has one: its id: line)' }),
  answer: Type.String(),
});

export const StreamTokenAnswer = Type.Object({
  token: Type.String({ description: 'opaque; valid for this run only' }),
  expires_at: Type.String({ format: 'date-time' }),
  events_path: Type.String({ description: "the run's event stream with the token in its query, for an EventSource" }),
});

export const StreamChunk = Type.Object({
  chunk_type: StringEnum(CHUNK_TYPES),
  content: Type.String({ description: 'event: its summary; text: part of the answer; artifact: what it shows in words' }),
  metadata: Type.Record(Type.String(), Type.Unknown(), {
    description: 'event: run_id, seq, phase, action, status, step, tool, ms, detail; citation: sources; done: run_id, status, partial, degraded_reasons',
  }),
});

export const Session = Type.Object({
  id: Type.String(),
  title: Nullable(Type.String()),
  workspace_id: Nullable(Type.String()),
  dataset_id: Nullable(Type.String()),
  metadata: Type.Record(Type.String(), Type.Unknown()),
  created_at: Type.String(),
  updated_at: Type.String(),
});

export const Message = Type.Object({
  id: Type.String(),
  role: StringEnum(MESSAGE_ROLES),
  content: Type.String(),
  metadata: Type.Record(Type.String(), Type.Unknown()),
  created_at: Type.String(),
});

export const SessionList = Type.Object({ sessions: Type.Array(Session) });
export const MessageList = Type.Object({ messages: Type.Array(Message) });
export const SessionEvents = Type.Object({ events: Type.Array(Type.Intersect([TraceEvent, Type.Object({ run_id: Type.String() })])) });
