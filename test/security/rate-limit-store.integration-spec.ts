import { createRedis, type RedisClient } from '@svc/platform';
import { randomBytes } from 'node:crypto';
import { eventually, testServices } from '../support/services';
import type { RateLimitPolicy } from '../../libs/security/src/limits/rate-limit.config';
import { RATE_LIMIT_LUA, rateLimitKey, RedisRateLimiter } from '../../libs/security/src/limits/rate-limit';

/**
 * The list store against real Redis: the same answers as a plain model of the two sliding windows
 * for the same history, exact at the windows' edges, and small at the day limit. Each test uses
 * client_ids of its own.
 */
const services = testServices();
jest.setTimeout(60_000);

const S = 1_000_000;
const MINUTE_US = 60 * S;
const DAY_US = 86_400 * S;
const newClientId = () => `partner-${randomBytes(6).toString('hex')}`;

let redis: RedisClient;

beforeAll(async () => {
  redis = createRedis({ REDIS_URL: services.redisUrl, REDIS_KEY_PREFIX: services.redisKeyPrefix });
  await eventually(async () => (redis.status === 'ready' ? true : undefined));
});

afterAll(async () => {
  await redis?.quit();
});

// ---- the script on a clock the test sets --------------------------------------------------------

const CLOCK = "local clock = redis.call('TIME')";

/** The script with Redis's clock replaced by the last two arguments (seconds, µs): a history of days in a moment. */
function onTestClock(lua: string): string {
  if (!lua.includes(CLOCK)) throw new Error('the script no longer reads the clock in one line');
  return lua.replace(CLOCK, 'local clock = { ARGV[#ARGV - 1], ARGV[#ARGV] }');
}
const LISTS_AT = onTestClock(RATE_LIMIT_LUA);

interface Limits {
  readonly minute: number;
  readonly day: number;
}

const clockArgs = (us: number) => [String(Math.floor(us / S)), String(us % S)];
const windowArgs = (limits: Limits) => [limits.minute, MINUTE_US, limits.day, DAY_US].map(String);

/** One call of the list store at `us`; the reply as the limiter reads it. */
function listsAt(clientId: string, us: number, limits: Limits) {
  return redis.eval(LISTS_AT, 1, rateLimitKey(clientId), ...windowArgs(limits), ...clockArgs(us)) as Promise<
    number[]
  >;
}

/**
 * The two windows as docs/rules.md words them, every admission time kept: an entry at t counts in
 * a window of length W while t > now − W; the next free slot is when the entry at (count − limit)
 * of the window leaves it. The answers the list store must give, in its reply's shape.
 */
class ReferenceWindows {
  times: number[] = [];

  call(now: number, limits: Limits): number[] {
    this.times = this.times.filter((t) => t > now - DAY_US);
    const minute = this.times.filter((t) => t > now - MINUTE_US);
    const admitted = minute.length < limits.minute && this.times.length < limits.day;
    if (admitted) {
      this.times.push(now);
      minute.push(now);
    }
    const nextFree = (window: number[], limit: number, length: number) => {
      const entry = window[Math.max(0, window.length - limit)];
      return entry === undefined ? now : entry + length;
    };
    return [
      admitted ? 1 : 0,
      now,
      minute.length,
      nextFree(minute, limits.minute, MINUTE_US),
      this.times.length,
      nextFree(this.times, limits.day, DAY_US),
    ];
  }
}

/** A deterministic generator, so a failing history can be replayed from its seed. */
function random(seed: number) {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
}

const T0 = 1_763_000_000 * S;

describe('the list store answers as the model of the windows does, for the same history', () => {
  it.each([
    ['small limits, calls seconds to days apart, the limits changed now and then', 1, 8, 15, 3 * S],
    ['larger limits in bursts (the minute window’s start passes many entries at once)', 7, 80, 400, S / 3],
    ['larger limits in bursts, another history', 11, 80, 400, S / 3],
  ])('%s (seed %d)', async (_case, seed, maxMinute, maxDay, burstGap) => {
    const next = random(seed);
    const clientId = newClientId();
    const reference = new ReferenceWindows();
    let limits: Limits = { minute: 5, day: 12 };
    let t = T0;
    const differences: unknown[] = [];
    let admitted = 0;
    for (let i = 0; i < 3000; i++) {
      const roll = next();
      // Mostly close together, sometimes exactly a minute or a day after the call before (an
      // entry leaving its window in the very µs it is asked), sometimes hours or days apart.
      t +=
        roll < 0.6
          ? Math.floor(next() * burstGap)
          : roll < 0.85
            ? Math.floor(next() * MINUTE_US)
            : roll < 0.9
              ? MINUTE_US
              : roll < 0.92
                ? DAY_US
                : roll < 0.97
                  ? Math.floor(next() * 1_000 * S)
                  : Math.floor(next() * 2 * DAY_US);
      if (next() < 0.02) {
        const minute = 1 + Math.floor(next() * maxMinute);
        limits = { minute, day: minute + Math.floor(next() * maxDay) };
      }
      const lists = await listsAt(clientId, t, limits);
      const expected = reference.call(t, limits);
      if (lists[0] === 1) admitted++;
      if (JSON.stringify(lists) !== JSON.stringify(expected)) differences.push({ i, t, lists, expected });
    }
    expect(differences.slice(0, 3)).toEqual([]);
    // The histories did exercise both answers.
    expect(admitted).toBeGreaterThan(100);
    expect(admitted).toBeLessThan(3000);
    expect(await redis.llen(rateLimitKey(clientId))).toBe(reference.times.length + 1);
  });
});

describe('the list store’s windows', () => {
  const limits = { minute: 3, day: 5 };

  it('holds an entry in the minute window until exactly 60 s after it, and frees the slot then', async () => {
    const clientId = newClientId();
    for (let i = 0; i < 3; i++) expect((await listsAt(clientId, T0 + i * S, limits))[0]).toBe(1);

    // [admitted, now, minute count, minute next free, day count, day next free]
    const refused = await listsAt(clientId, T0 + MINUTE_US - 1, limits);
    expect(refused).toEqual([0, T0 + MINUTE_US - 1, 3, T0 + MINUTE_US, 3, T0 + DAY_US]);
    const atTheEdge = await listsAt(clientId, T0 + MINUTE_US, limits);
    expect(atTheEdge).toEqual([1, T0 + MINUTE_US, 3, T0 + S + MINUTE_US, 4, T0 + DAY_US]);
  });

  it('holds an entry in the day window until exactly 24 h after it: a full day refuses, then admits one per freed slot', async () => {
    const clientId = newClientId();
    const at = [0, 100, 200, 300, 400].map((s) => T0 + s * S);
    for (const t of at) expect((await listsAt(clientId, t, limits))[0]).toBe(1);

    const full = await listsAt(clientId, T0 + DAY_US - 1, limits);
    expect(full).toEqual([0, T0 + DAY_US - 1, 0, T0 + DAY_US - 1, 5, at[0] + DAY_US]);
    expect(await listsAt(clientId, at[0] + DAY_US, limits)).toEqual([
      1,
      at[0] + DAY_US,
      1,
      at[0] + DAY_US + MINUTE_US,
      5,
      at[1] + DAY_US,
    ]);
    expect((await listsAt(clientId, at[0] + DAY_US + 1, limits))[0]).toBe(0);
    // The list is trimmed as entries leave: it only ever holds the day window (and its header).
    expect(await redis.llen(rateLimitKey(clientId))).toBe(6);
  });

  it('drops a whole day of entries in one call when the client comes back after a quiet day', async () => {
    const clientId = newClientId();
    const big = { minute: 10_000, day: 10_000 };
    for (let i = 0; i < 2_000; i++) await listsAt(clientId, T0 + i * 1_000, big);
    expect(await redis.llen(rateLimitKey(clientId))).toBe(2_001);
    const back = await listsAt(clientId, T0 + 2 * DAY_US, big);
    expect(back.slice(0, 3)).toEqual([1, T0 + 2 * DAY_US, 1]);
    expect(back[4]).toBe(1);
    expect(await redis.llen(rateLimitKey(clientId))).toBe(2);
  });

  it('never lets its clock go back: after Redis’s clock steps back, the windows hold what they held', async () => {
    const clientId = newClientId();
    for (let i = 0; i < 3; i++) expect((await listsAt(clientId, T0 + i * S, limits))[0]).toBe(1);
    // 30 s earlier than the last call, as after a failover to a primary whose clock is behind.
    const stepped = await listsAt(clientId, T0 - 30 * S, limits);
    expect(stepped).toEqual([0, T0 + 2 * S, 3, T0 + MINUTE_US, 3, T0 + DAY_US]);
    // Refused until the first entry is a minute old on the clock it was counted by: nothing is
    // admitted early.
    expect((await listsAt(clientId, T0 + 30 * S, limits))[0]).toBe(0);
    expect((await listsAt(clientId, T0 + MINUTE_US, limits))[0]).toBe(1);
  });
});

describe('memory', () => {
  it('keeps a client at its day limit in about 10 bytes per admission', async () => {
    const clientId = newClientId();
    const limits = { minute: 600, day: 10_000 };
    // 10,000 admissions 8 s apart, within one day.
    for (let i = 0; i < 10_000; i += 500) {
      await Promise.all(
        Array.from({ length: 500 }, (_, j) => listsAt(clientId, T0 + (i + j) * 8 * S, limits)),
      );
    }
    const times = rateLimitKey(clientId);
    // The list's header is one more element.
    expect(await redis.llen(times)).toBe(10_001);
    // MEMORY USAGE's key is not one ioredis prefixes.
    const lists = Number(await redis.memory('USAGE', `${services.redisKeyPrefix}${times}`, 'SAMPLES', '0'));
    process.stdout.write(`memory at the day limit: ${lists} B\n`);
    expect(lists).toBeLessThan(200_000);
  });
});

describe('a bearer request', () => {
  const policy: RateLimitPolicy = {
    minute: { limit: 150, windowMs: 60_000 },
    day: { limit: 10_000, windowMs: 86_400_000 },
  };

  it('is counted with the generation read back, and a tombstoned token’s is refused uncounted', async () => {
    const clientId = newClientId();
    const limiter = new RedisRateLimiter(redis, policy);
    const keys = { tombstone: `revoked:{${clientId}}:digest`, generation: `generation:{${clientId}}` };
    const counted = await limiter.consumeForToken(clientId, keys);
    expect(counted).toMatchObject({ decision: { admitted: true, remaining: 149 } });
    expect(counted!.generation).toMatch(/^\d{16}$/);
    const times = rateLimitKey(clientId);
    expect(await redis.llen(times)).toBe(2);

    await redis.set(keys.tombstone, '1', 'PX', 60_000);
    expect(await limiter.consumeForToken(clientId, keys)).toBeUndefined();
    expect(await redis.llen(times)).toBe(2);
  });
});
