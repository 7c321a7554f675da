/**
 * The tool loop with a model: the model sees the datasets in scope (their fields and types) and
 * three tools (search, read_document, compute), calls them as it sees fit, and each call runs
 * through the same tools, validation and bounds as the planner's. The loop gathers; the answer is
 * written afterwards from the numbered sources, so its citations can be checked.
 */
import type { Budget } from '../budget.js';
import { chatStream, type ChatMessage, type ToolCall } from './chat-client.js';
import { AGENT_TOOLS } from './model-tools.js';
import type { GenerativeModel } from '../synthesis/generative.js';

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
