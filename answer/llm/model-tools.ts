/**
 * The model's tools, each defined once as a TypeBox schema: the JSON Schema the model is sent is
 * the ajv check its arguments pass before the tool runs, so the two cannot drift. The checks that
 * need a dataset (a field exists, a range needs a numeric field) come after, in plan/validate.ts;
 * what a schema cannot say (a blank query) is left to the caller too.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { StringEnum } from '../../contract/json-schema.js';
import { compileBody, type BodyCheck } from '../../contract/validation.js';
import { listOf } from '../../engine/index.js';
import { AdvancedFilter } from '../../retrieval/requests.js';
import { COMPUTE_OPS } from '../plan/validate.js';
import type { ToolDefinition } from './chat-client.js';

const Filters = Type.Array(AdvancedFilter);

const SearchArgs = Type.Object({
  query: Type.String({ minLength: 1 }),
  dataset_id: Type.Optional(Type.String({ description: 'one dataset (default: all in scope)' })),
  filters: Type.Optional(Filters),
});

const ReadDocumentArgs = Type.Object({ dataset_id: Type.String(), document_id: Type.String() });

const ComputeArgs = Type.Object({
  dataset_id: Type.String(),
  op: StringEnum(COMPUTE_OPS),
  field: Type.Optional(Type.String()),
  group_by: Type.Optional(Type.String()),
  filters: Type.Optional(Filters),
});

const TOOLS = {
  search: {
    description: 'Search the datasets for passages relevant to a query. Filters must name fields of the dataset; range operators need numeric fields.',
    args: SearchArgs,
  },
  read_document: { description: 'Read a whole document, all its chunks in order.', args: ReadDocumentArgs },
  compute: {
    description: `${listOf(COMPUTE_OPS)} of a numeric field over the rows the filters admit, optionally grouped by a field.`,
    args: ComputeArgs,
  },
} satisfies Record<string, { description: string; args: TSchema }>;

type ToolName = keyof typeof TOOLS;

/** A tool call whose arguments passed its schema, typed by the tool it names. */
export type ModelToolCall = { [N in ToolName]: { name: N; args: Static<(typeof TOOLS)[N]['args']> } }[ToolName];

/** The tools as the chat-completions API takes them. */
export const AGENT_TOOLS: ToolDefinition[] = Object.entries(TOOLS).map(([name, t]) => ({ type: 'function', function: { name, description: t.description, parameters: t.args } }));

// Messages name the tool: "compute.op must be one of count, sum, avg, min, max".
const CHECKS = Object.fromEntries(Object.entries(TOOLS).map(([name, t]) => [name, compileBody(t.args, { root: name })])) as Record<ToolName, BodyCheck>;

/** The call typed, or what is wrong with it (an unknown tool, arguments its schema refuses). */
export function checkToolCall(name: string, args: unknown): { call: ModelToolCall } | { problem: string } {
  if (!Object.hasOwn(CHECKS, name)) return { problem: `no tool named ${name}` };
  const problem = CHECKS[name as ToolName](args);
  return problem === null ? { call: { name, args } as ModelToolCall } : { problem };
}
