/**
 * The bounds of `budget.ts` as a run's phases meet them: a step taken or refused, the deadline
 * passed or not. A bound hit is said in the trace (the deadline once), and the run answers from
 * what it has.
 */
import type { Work } from './work.js';

/** Takes a step for `tool`; false, with a warning event, when none is left. */
export function takeStep(w: Work, tool: string): boolean {
  if (w.budget.step()) return true;
  w.run.event({
    phase: 'act',
    action: 'budget.max_steps',
    status: 'warning',
    summary: `Step limit (${w.budget.limits.maxSteps}) reached: ${tool} not run`,
    tool,
    detail: { max_steps: w.budget.limits.maxSteps },
  });
  return false;
}

export function pastDeadline(w: Work): boolean {
  if (!w.budget.expired()) return false;
  if (!w.run.events.some((e) => e.action === 'budget.deadline')) {
    w.run.event({ phase: 'act', action: 'budget.deadline', status: 'warning', summary: 'Deadline reached: answering from what was gathered', detail: { deadline_ms: w.budget.limits.deadlineMs } });
  }
  return true;
}
