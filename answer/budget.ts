/**
 * The bounds of a run: tool steps, tokens (of the context gathered and of a model's answer),
 * and wall clock. A bound that is hit is remembered as a degraded reason; the run then answers
 * from what it has and says its coverage is incomplete.
 */
export type DegradedReason = 'max_steps' | 'tokens' | 'deadline' | 'model_error';

export interface BudgetLimits {
  maxSteps: number;
  maxTokens: number;
  deadlineMs: number;
}

export class Budget {
  steps = 0;
  tokens = 0;
  readonly reasons = new Set<DegradedReason>();
  private readonly started = Date.now();
  /** Aborts at the deadline (a model's stream stops there). */
  readonly deadline: AbortSignal;

  constructor(readonly limits: BudgetLimits) {
    this.deadline = AbortSignal.timeout(limits.deadlineMs);
  }

  /** Takes a tool step; false (and `max_steps`) when none is left. */
  step(): boolean {
    if (this.steps >= this.limits.maxSteps) {
      this.reasons.add('max_steps');
      return false;
    }
    this.steps++;
    return true;
  }

  /** Spends tokens of `text`; false (and `tokens`) when they do not fit. */
  spend(text: string): boolean {
    const n = estimateTokens(text);
    if (this.tokens + n > this.limits.maxTokens) {
      this.reasons.add('tokens');
      return false;
    }
    this.tokens += n;
    return true;
  }

  left(): number {
    return Math.max(0, this.limits.maxTokens - this.tokens);
  }

  expired(): boolean {
    if (Date.now() - this.started >= this.limits.deadlineMs) this.reasons.add('deadline');
    return this.reasons.has('deadline');
  }

  elapsedMs(): number {
    return Date.now() - this.started;
  }

  get partial(): boolean {
    return this.reasons.size > 0;
  }

  summary() {
    return {
      steps_used: this.steps,
      max_steps: this.limits.maxSteps,
      tokens_used: this.tokens,
      max_tokens: this.limits.maxTokens,
      elapsed_ms: this.elapsedMs(),
      deadline_ms: this.limits.deadlineMs,
      degraded_reasons: [...this.reasons],
    };
  }
}

/** About four characters a token in English: a bound, not a bill. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

const WORDS: Record<DegradedReason, string> = {
  max_steps: 'the step limit was reached',
  tokens: 'the token budget was used up',
  deadline: 'the deadline passed',
  model_error: 'the model failed part-way',
};

export function coverageNote(reasons: Iterable<DegradedReason>): string {
  return `Coverage is incomplete: ${[...reasons].map((r) => WORDS[r]).join('; ')} before every source was read.`;
}
