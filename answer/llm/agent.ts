/**
 * The tool loop with a model: the model sees the datasets in scope (their fields and types) and
 * three tools (search, read_document, compute), calls them as it sees fit, and each call runs
 * through the same tools, validation and bounds as the planner's. The loop gathers; the answer is
 * written afterwards from the numbered sources, so its citations can be checked.
 */
import type { Budget } from '../budget.js';
import { chatStream, type ChatMessage, type ToolCall, type ToolDefinition } from './chat-client.js';
import type { GenerativeModel } from '../synthesis/generative.js';

export const AGENT_TOOLS: ToolDefinition[] = [
  {
    type: 'function',
    function: {
      name: 'search',
      description: 'Search the datasets for passages relevant to a query. Filters must name fields of the dataset; range operators need numeric fields.',
      parameters: {
        type: 'object',
        properties: {
          query: { type: 'string' },
          dataset_id: { type: 'string', description: 'one dataset (default: all in scope)' },
          filters: { type: 'array', items: { type: 'object', properties: { field: { type: 'string' }, op: { type: 'string', enum: ['eq', 'in', 'gt', 'gte', 'lt', 'lte'] }, value: {}, values: { type: 'array' } }, required: ['field', 'op'] } },
        },
        required: ['query'],
      },
    },
  },
  {
    type: 'function',
    function: {
      name: 'read_document',
      description: 'Read a whole document, all its chunks in order.',
      parameters: { type: 'object', properties: { dataset_id: { type: 'string' }, document_id: { type: 'string' } }, required: ['dataset_id', 'document_id'] },
    },
  },
  {
    type: 'function',
    function: {
      name: 'compute',
      description: 'count, sum, avg, min or max of a numeric field over the rows the filters admit, optionally grouped by a field.',
      parameters: {
        type: 'object',
        properties: {
          dataset_id: { type: 'string' },
          op: { type: 'string', enum: ['count', 'sum', 'avg', 'min', 'max'] },
          field: { type: 'string' },
          group_by: { type: 'string' },
          filters: { type: 'array', items: { type: 'object' } },
        },
        required: ['dataset_id', 'op'],
      },
    },
  },
];

export interface AgentHooks {
  /** Runs one tool call (already counted as a step) and returns what the model reads back. */
  runTool(call: ToolCall): Promise<string>;
  /** A step is wanted but none is left, or the deadline passed: the loop ends. */
  canStep(): boolean;
}

export async function agentLoop(model: GenerativeModel, system: string, question: string, history: ChatMessage[], budget: Budget, signal: AbortSignal, hooks: AgentHooks): Promise<void> {
  const messages: ChatMessage[] = [{ role: 'system', content: system }, ...history, { role: 'user', content: question }];
  for (;;) {
    if (budget.expired()) return;
    let calls: ToolCall[] = [];
    let text = '';
    for await (const d of chatStream(model.settings, model.apiKey, messages, { tools: AGENT_TOOLS, signal })) {
      if (d.type === 'tool_calls') calls = d.calls;
      else if (d.type === 'text') text += d.text;
      else if (d.type === 'usage') budget.tokens += d.completion;
    }
    if (calls.length === 0) return;
    messages.push({ role: 'assistant', content: text || null, tool_calls: calls });
    for (const call of calls) {
      if (!hooks.canStep()) {
        messages.push({ role: 'tool', tool_call_id: call.id, content: 'not run: the step limit of this question is reached' });
        return;
      }
      messages.push({ role: 'tool', tool_call_id: call.id, content: await hooks.runTool(call) });
    }
  }
}
