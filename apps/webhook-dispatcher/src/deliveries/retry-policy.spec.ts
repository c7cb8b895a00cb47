import { MAX_ATTEMPTS, nextAttemptAt, retryDelays, type RetryPolicy } from './retry-policy';

const M = 60_000;
const H = 60 * M;
const policy: RetryPolicy = { schedule: [M, 5 * M, 30 * M, 2 * H, 6 * H], giveUpAfterMs: 24 * H };
const first = new Date('2026-01-01T00:00:00Z');
const at = (ms: number) => new Date(first.getTime() + ms);

describe('nextAttemptAt (docs/rules.md, Webhooks)', () => {
  it('follows the schedule after each failure', () => {
    expect(nextAttemptAt(policy, 1, first, at(1000))).toEqual({ at: at(1000 + M), delayMs: M });
    expect(nextAttemptAt(policy, 5, first, at(3 * H))?.delayMs).toBe(6 * H);
  });

  it('makes no seventh attempt', () => {
    expect(MAX_ATTEMPTS).toBe(6);
    expect(nextAttemptAt(policy, 6, first, at(1000))).toBeNull();
    expect(nextAttemptAt({ ...policy, schedule: Array(10).fill(1000) }, 6, first, at(1000))).toBeNull();
  });

  it('stops when the schedule is used up', () => {
    expect(nextAttemptAt({ ...policy, schedule: [M] }, 2, first, at(M))).toBeNull();
  });

  it('makes no attempt later than the give-up time after the first', () => {
    expect(nextAttemptAt(policy, 5, first, at(19 * H))).toBeNull();
    expect(nextAttemptAt(policy, 5, first, at(18 * H))?.at).toEqual(at(24 * H));
  });
});

describe('retryDelays', () => {
  it('lists each distinct delay once: one retry queue each', () => {
    expect(retryDelays({ schedule: [1000, 1000, 5000, 1000, 1000], giveUpAfterMs: H })).toEqual([1000, 5000]);
  });
});
