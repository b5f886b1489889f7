import type { ApiProblem } from "../api.js";

/** A failed call, as the service named it: shown next to what failed, announced to screen readers. */
export function Problem({ problem }: { problem: ApiProblem | null }) {
  if (!problem) return null;
  return (
    <p class="problem" role="alert">
      <strong>{problem.code}</strong> {problem.message}
    </p>
  );
}

export function Loading({ when }: { when: boolean }) {
  return when ? (
    <p class="muted" aria-live="polite">
      Loading…
    </p>
  ) : null;
}
