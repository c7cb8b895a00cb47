import { createRedis, type RedisClient } from '@svc/platform';
import { randomBytes } from 'node:crypto';
import { SORTED_SET_LUA, SORTED_SET_SHA } from '../../../test/support/rate-limit-sorted-set';
import { eventually, testServices } from '../../../test/support/services';
import type { RateLimitPolicy, RateLimitStore } from './rate-limit.config';
import { RATE_LIMIT_LUA, rateLimitKeys } from './rate-limit.script';
import { RedisRateLimiter } from './rate-limiter';

/**
 * The list store against real Redis: the same answers as the sorted set of earlier releases for
 * the same history, exact at the windows' edges, a fraction of its memory, and the upgrade from it
 * (docs/operations.md "Upgrading the rate limiter's store") exact in each of its phases, with a
 * replica of the earlier release (its script, test/support/rate-limit-sorted-set.ts) counting
 * beside this one's. Each test uses client_ids of its own.
 */
const services = testServices();
jest.setTimeout(60_000);

const S = 1_000_000;
const MINUTE_US = 60 * S;
const DAY_US = 86_400 * S;
const newClientId = () => `partner-${randomBytes(6).toString('hex')}`;

let redis: RedisClient;
/** A second connection: an earlier release's replica has its own. */
let oldReplicaRedis: RedisClient;

beforeAll(async () => {
  const config = { REDIS_URL: services.redisUrl, REDIS_KEY_PREFIX: services.redisKeyPrefix };
  [redis, oldReplicaRedis] = [createRedis(config), createRedis(config)];
  await eventually(async () =>
    redis.status === 'ready' && oldReplicaRedis.status === 'ready' ? true : undefined,
  );
  // As on a Redis an earlier release has been running on.
  expect(await oldReplicaRedis.script('LOAD', SORTED_SET_LUA)).toBe(SORTED_SET_SHA);
});

afterAll(async () => {
  await Promise.all([redis?.quit(), oldReplicaRedis?.quit()]);
});

// ---- the scripts on a clock the test sets -------------------------------------------------------

const CLOCK = "local clock = redis.call('TIME')";

/** The script with Redis's clock replaced by the last two arguments (seconds, µs): a history of days in a moment. */
function onTestClock(lua: string): string {
  if (!lua.includes(CLOCK)) throw new Error('the script no longer reads the clock in one line');
  return lua.replace(CLOCK, 'local clock = { ARGV[#ARGV - 1], ARGV[#ARGV] }');
}
const LISTS_AT = onTestClock(RATE_LIMIT_LUA);
const SORTED_SET_AT = onTestClock(SORTED_SET_LUA);

interface Limits {
  readonly minute: number;
  readonly day: number;
}

const clockArgs = (us: number) => [String(Math.floor(us / S)), String(us % S)];
const windowArgs = (limits: Limits) => [limits.minute, MINUTE_US, limits.day, DAY_US].map(String);

let member = 0;
/** One call of the list store (`lists` or `migrating`) at `us`; the reply as the limiter reads it. */
function listsAt(clientId: string, us: number, limits: Limits, store: RateLimitStore = 'lists') {
  const { times, sortedSet } = rateLimitKeys(clientId);
  const suffix = store === 'migrating' ? [`t.${member++}`] : [];
  return redis.eval(
    LISTS_AT,
    2,
    times,
    sortedSet,
    ...windowArgs(limits),
    store,
    ...suffix,
    ...clockArgs(us),
  ) as Promise<number[]>;
}

/** One call of the earlier releases' script at `us`, on a sorted set of its own. */
function sortedSetAt(key: string, us: number, limits: Limits) {
  return redis.eval(
    SORTED_SET_AT,
    1,
    key,
    ...windowArgs(limits),
    `t.${member++}`,
    ...clockArgs(us),
  ) as Promise<number[]>;
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

describe('the list store answers as the sorted set did, for the same history', () => {
  it.each([
    ['small limits, calls seconds to days apart, the limits changed now and then', 1, 8, 15, 3 * S],
    ['larger limits in bursts (the minute window’s start passes many entries at once)', 7, 80, 400, S / 3],
    ['larger limits in bursts, another history', 11, 80, 400, S / 3],
  ])('%s (seed %d)', async (_case, seed, maxMinute, maxDay, burstGap) => {
    const next = random(seed);
    const clientId = newClientId();
    const reference = `ratelimit:{${clientId}}:reference`;
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
      const [lists, sortedSet] = await Promise.all([
        listsAt(clientId, t, limits),
        sortedSetAt(reference, t, limits),
      ]);
      if (lists[0] === 1) admitted++;
      if (JSON.stringify(lists) !== JSON.stringify(sortedSet)) differences.push({ i, t, lists, sortedSet });
    }
    expect(differences.slice(0, 3)).toEqual([]);
    // The histories did exercise both answers.
    expect(admitted).toBeGreaterThan(100);
    expect(admitted).toBeLessThan(3000);
    expect(await redis.llen(rateLimitKeys(clientId).times)).toBe((await redis.zcard(reference)) + 1);
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
    expect(await redis.llen(rateLimitKeys(clientId).times)).toBe(6);
  });

  it('drops a whole day of entries in one call when the client comes back after a quiet day', async () => {
    const clientId = newClientId();
    const big = { minute: 10_000, day: 10_000 };
    for (let i = 0; i < 2_000; i++) await listsAt(clientId, T0 + i * 1_000, big);
    expect(await redis.llen(rateLimitKeys(clientId).times)).toBe(2_001);
    const back = await listsAt(clientId, T0 + 2 * DAY_US, big);
    expect(back.slice(0, 3)).toEqual([1, T0 + 2 * DAY_US, 1]);
    expect(back[4]).toBe(1);
    expect(await redis.llen(rateLimitKeys(clientId).times)).toBe(2);
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
  it('keeps a client at its day limit in a small fraction of the sorted set’s memory', async () => {
    const clientId = newClientId();
    const limits = { minute: 600, day: 10_000 };
    // 10,000 admissions 8 s apart, within one day; `migrating` writes both stores with them.
    for (let i = 0; i < 10_000; i += 500) {
      await Promise.all(
        Array.from({ length: 500 }, (_, j) => listsAt(clientId, T0 + (i + j) * 8 * S, limits, 'migrating')),
      );
    }
    const { times, sortedSet } = rateLimitKeys(clientId);
    // The list's header is one more element.
    expect([await redis.llen(times), await redis.zcard(sortedSet)]).toEqual([10_001, 10_000]);
    // MEMORY USAGE's key is not one ioredis prefixes.
    const usage = async (key: string) =>
      Number(await redis.memory('USAGE', `${services.redisKeyPrefix}${key}`, 'SAMPLES', '0'));
    const lists = await usage(times);
    const sorted = await usage(sortedSet);
    process.stdout.write(`memory at the day limit: lists ${lists} B, sorted set ${sorted} B\n`);
    expect(lists).toBeLessThan(sorted / 10);
    expect(lists).toBeLessThan(200_000);
  });
});

// ---- the upgrade, on Redis's own clock, with replicas counting concurrently ----------------------

/** An earlier release's replica: its script by its SHA, on a sorted set under the same key. */
async function oldReplicaConsume(clientId: string, policy: RateLimitPolicy): Promise<boolean> {
  const args = [
    rateLimitKeys(clientId).sortedSet,
    policy.minute.limit,
    policy.minute.windowMs * 1000,
    policy.day.limit,
    policy.day.windowMs * 1000,
    `old.${member++}`,
  ].map(String);
  const reply = (await oldReplicaRedis
    .evalsha(SORTED_SET_SHA, 1, ...args)
    .catch(() => oldReplicaRedis.eval(SORTED_SET_LUA, 1, ...args))) as number[];
  return reply[0] === 1;
}

/**
 * `count` requests of one client alternating between replicas, in waves of 40 in flight at once:
 * Redis runs what one connection sent before it reads the next, so a single wave of all of them
 * could leave one replica nothing to admit. Returns how many each replica admitted.
 */
async function inParallel(count: number, replicas: readonly ((i: number) => Promise<boolean>)[]) {
  const admitted: boolean[] = [];
  for (let start = 0; start < count; start += 40) {
    const wave = Array.from({ length: Math.min(40, count - start) }, (_, j) =>
      replicas[(start + j) % replicas.length](start + j),
    );
    admitted.push(...(await Promise.all(wave)));
  }
  return replicas.map((_, r) => admitted.filter((a, i) => a && i % replicas.length === r).length);
}

describe('upgrading from the sorted set (RATE_LIMIT_STORE=migrating, then lists)', () => {
  it('simulates the earlier release with the very script it runs (its SHA)', () => {
    expect(SORTED_SET_SHA).toBe('b1d5c4a754db5a1de467fc298f8c3a513cdcdbf5');
  });

  // Kept under the platform client's 1 s command timeout on a busy 2-core test machine.
  const policy: RateLimitPolicy = {
    minute: { limit: 150, windowMs: 60_000 },
    day: { limit: 10_000, windowMs: 86_400_000 },
  };

  it('is needed: a lists replica beside an earlier release’s one sees none of its admissions, and together they admit past the limit', async () => {
    const clientId = newClientId();
    const lists = new RedisRateLimiter(redis, policy, 'lists');
    const byReplica = await inParallel(300, [
      async () => (await lists.consume(clientId)).admitted,
      () => oldReplicaConsume(clientId, policy),
    ]);
    expect(byReplica[0] + byReplica[1]).toBeGreaterThan(150);
  });

  it('phase 1: migrating replicas beside the earlier release’s admit exactly the limit between them', async () => {
    const clientId = newClientId();
    const migrating = new RedisRateLimiter(redis, policy, 'migrating');
    const byReplica = await inParallel(300, [
      async () => (await migrating.consume(clientId)).admitted,
      () => oldReplicaConsume(clientId, policy),
    ]);
    expect(byReplica[0] + byReplica[1]).toBe(150);
    expect(byReplica.every((n) => n > 0)).toBe(true);
    // The sorted set holds every admission; the lists the migrating replica's.
    const { times, sortedSet } = rateLimitKeys(clientId);
    expect(await redis.zcard(sortedSet)).toBe(150);
    expect(await redis.llen(times)).toBe(byReplica[0] + 1);
    // And a request of either refuses, with the headers of the full window.
    const next = await migrating.consume(clientId);
    expect(next).toMatchObject({ admitted: false, window: 'minute', remaining: 0 });
    expect(await oldReplicaConsume(clientId, policy)).toBe(false);
  });

  it('counts a bearer request in both stores while migrating, and refuses a tombstoned token’s uncounted', async () => {
    const clientId = newClientId();
    const migrating = new RedisRateLimiter(redis, policy, 'migrating');
    const keys = { tombstone: `revoked:{${clientId}}:digest`, generation: `generation:{${clientId}}` };
    const counted = await migrating.consumeForToken(clientId, keys);
    expect(counted).toMatchObject({ decision: { admitted: true, remaining: 149 } });
    expect(counted!.generation).toMatch(/^\d{16}$/);
    const { times, sortedSet } = rateLimitKeys(clientId);
    expect([await redis.llen(times), await redis.zcard(sortedSet)]).toEqual([2, 1]);

    await redis.set(keys.tombstone, '1', 'PX', 60_000);
    expect(await migrating.consumeForToken(clientId, keys)).toBeUndefined();
    expect([await redis.llen(times), await redis.zcard(sortedSet)]).toEqual([2, 1]);
  });

  it('phases 1, 2 and lists alone, with windows short enough to wait one out: exact throughout', async () => {
    const short: RateLimitPolicy = {
      minute: { limit: 40, windowMs: 1_000 },
      day: { limit: 60, windowMs: 2_500 },
    };
    const clientId = newClientId();
    const migrating = new RedisRateLimiter(redis, short, 'migrating');
    const lists = new RedisRateLimiter(redis, short, 'lists');
    const viaMigrating = async () => (await migrating.consume(clientId)).admitted;
    const viaLists = async () => (await lists.consume(clientId)).admitted;

    // Phase 1: the earlier release and migrating replicas.
    const phase1 = await inParallel(200, [viaMigrating, () => oldReplicaConsume(clientId, short)]);
    expect(phase1[0] + phase1[1]).toBe(40);

    // The earlier release's last replica is gone; a day window (2.5 s) later, lists replicas join.
    const oldGone = Date.now();
    await new Promise((resolve) => setTimeout(resolve, short.day.windowMs + 100));
    // Phase 2: migrating and lists replicas.
    const phase2 = await inParallel(200, [viaMigrating, viaLists]);
    expect(phase2[0] + phase2[1]).toBe(40);
    expect(phase2.every((n) => n > 0)).toBe(true);
    // Lists alone: they hold every admission still in the windows, the migrating replicas' too.
    const after = await lists.consume(clientId);
    expect(after).toMatchObject({ admitted: false, remaining: 0 });
    expect(Date.now() - oldGone).toBeLessThan(short.day.windowMs + short.minute.windowMs);

    // A minute window later the day window holds phase 2's 40 admissions: 20 remain, and lists
    // alone admit exactly them.
    await new Promise((resolve) => setTimeout(resolve, short.minute.windowMs + 100));
    const rest = await inParallel(100, [viaLists, viaLists]);
    expect(rest[0] + rest[1]).toBe(20);
  });
});
