/** docs/rules.md (Webhooks): 6 attempts in all, and none later than the give-up time after the first. */
export const MAX_ATTEMPTS = 6;

export interface RetryPolicy {
  /** Delay after the n-th failure (index n-1), e.g. 1m,5m,30m,2h,6h. */
  readonly schedule: readonly number[];
  readonly giveUpAfterMs: number;
}

/**
 * When the attempt after failed attempt `attempt` (1-based) runs, or null when there is none: the
 * schedule is used up, the attempt cap is reached, or the next one would fall after the give-up time.
 */
export function nextAttemptAt(
  policy: RetryPolicy,
  attempt: number,
  firstAttemptAt: Date,
  failedAt: Date,
): { at: Date; delayMs: number } | null {
  if (attempt >= MAX_ATTEMPTS) return null;
  const delayMs = policy.schedule[attempt - 1];
  if (delayMs === undefined) return null;
  const at = new Date(failedAt.getTime() + delayMs);
  if (at.getTime() > firstAttemptAt.getTime() + policy.giveUpAfterMs) return null;
  return { at, delayMs };
}

/** The distinct delays of a schedule: one retry queue each. */
export function retryDelays(policy: RetryPolicy): number[] {
  return [...new Set(policy.schedule.slice(0, MAX_ATTEMPTS - 1))];
}
