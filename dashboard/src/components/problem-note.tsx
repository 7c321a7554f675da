/** A failure in the service's own words, with what a support question needs (code, request id). */
import type { Problem } from '../api.js';

export function ProblemNote({ problem }: { problem: Problem | null }) {
  if (!problem) return null;
  return (
    <div class="problem" role="alert">
      <p>{problem.message}</p>
      {(problem.code || problem.requestId) && (
        <p class="muted small">
          {problem.code && <code>{problem.code}</code>}
          {problem.requestId && <> · request {problem.requestId}</>}
        </p>
      )}
    </div>
  );
}
