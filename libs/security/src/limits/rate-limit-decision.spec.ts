import { decide, type WindowState } from './rate-limit-decision';

const S = 1_000_000; // µs per second
const NOW = 1_763_000_000 * S + 250_000; // a Redis TIME, 0.25 s into a second

const w = (limit: number, count: number, nextFreeUs: number): WindowState => ({ limit, count, nextFreeUs });

describe('decide: which window the headers describe (docs/rules.md "Rate limits")', () => {
  it('describes the minute window while it has fewer requests remaining', () => {
    const decision = decide(true, NOW, {
      minute: w(600, 10, NOW + 59 * S),
      day: w(10_000, 10, NOW + 86_399 * S),
    });
    expect(decision).toEqual({
      admitted: true,
      window: 'minute',
      limit: 600,
      remaining: 590,
      resetAt: Math.ceil((NOW + 59 * S) / S),
    });
  });

  it('describes the day window once it has fewer remaining than the minute window', () => {
    const decision = decide(true, NOW, {
      minute: w(600, 3, NOW + 50 * S),
      day: w(10_000, 9_500, NOW + 3_600 * S),
    });
    expect(decision).toMatchObject({ window: 'day', limit: 10_000, remaining: 500 });
    expect(decision.resetAt).toBe(Math.ceil((NOW + 3_600 * S) / S));
  });

  it('on a tie describes the window that frees a slot later', () => {
    const decision = decide(true, NOW, {
      minute: w(5, 3, NOW + 20 * S),
      day: w(8, 6, NOW + 3_000 * S),
    });
    expect(decision).toMatchObject({ window: 'day', limit: 8, remaining: 2 });
  });

  it('rounds the reset up to the next whole second', () => {
    const decision = decide(true, NOW, { minute: w(5, 1, 1_000 * S + 1), day: w(8, 1, 1_000 * S + 1) });
    expect(decision.resetAt).toBe(1_001);
    const exact = decide(true, NOW, { minute: w(5, 1, 1_000 * S), day: w(8, 1, 1_000 * S) });
    expect(exact.resetAt).toBe(1_000);
  });

  it('never shows a negative remaining count (limits lowered below what a window holds)', () => {
    const decision = decide(false, NOW, { minute: w(5, 9, NOW + 10 * S), day: w(100, 9, NOW + 100 * S) });
    expect(decision.remaining).toBe(0);
  });

  it('carries no Retry-After when admitted', () => {
    const decision = decide(true, NOW, { minute: w(5, 5, NOW + 10 * S), day: w(8, 5, NOW + 100 * S) });
    expect(decision.admitted).toBe(true);
    expect(decision.remaining).toBe(0);
    expect(decision.retryAfter).toBeUndefined();
  });
});

describe('decide: Retry-After of a refused request', () => {
  it('is the wait until the exhausted window frees a slot, rounded up', () => {
    const decision = decide(false, NOW, {
      minute: w(5, 5, NOW + 41 * S + 200_000),
      day: w(8, 5, NOW + 5_000 * S),
    });
    expect(decision).toMatchObject({
      admitted: false,
      window: 'minute',
      limit: 5,
      remaining: 0,
      retryAfter: 42,
    });
    expect(decision.resetAt).toBe(Math.ceil((NOW + 41 * S + 200_000) / S));
  });

  it('follows the day window when that is the exhausted one', () => {
    const decision = decide(false, NOW, {
      minute: w(5, 1, NOW + 59 * S),
      day: w(8, 8, NOW + 7_200 * S),
    });
    expect(decision).toMatchObject({ window: 'day', remaining: 0, retryAfter: 7_200 });
  });

  it('waits for the later of the two when both are exhausted, and the reset agrees', () => {
    const decision = decide(false, NOW, {
      minute: w(5, 5, NOW + 30 * S),
      day: w(5, 5, NOW + 600 * S),
    });
    expect(decision).toMatchObject({
      window: 'day',
      retryAfter: 600,
      resetAt: Math.ceil((NOW + 600 * S) / S),
    });
  });

  it('is at least one second, even when the slot frees within the same second', () => {
    expect(decide(false, NOW, { minute: w(5, 5, NOW + 1), day: w(8, 5, NOW) }).retryAfter).toBe(1);
    expect(decide(false, NOW, { minute: w(5, 5, NOW), day: w(8, 5, NOW) }).retryAfter).toBe(1);
  });
});
