import { Injectable, Optional, type CanActivate, type ExecutionContext } from '@nestjs/common';
import {
  ApiProblem,
  AppMetrics,
  DependencyUnavailableError,
  isRedisUnavailable,
  type RedisClient,
} from '@svc/platform';
import { createHash } from 'node:crypto';
import type { Counter } from 'prom-client';
import { DAY_MS, MINUTE_MS, type RateLimitPolicy } from './rate-limit.config';

/*
 * The per-partner rate limits (docs/rules.md "Rate limits"), one mechanism: which requests are
 * metered, the Lua script that checks and records both windows in one atomic step, the limiter that
 * calls it, the decision the script's counts make, and the guard that applies it to the reply.
 */

export type RateLimitWindowName = 'minute' | 'day';

/** One window as the Redis script leaves it: the request just decided on is included if admitted. */
export interface WindowState {
  readonly limit: number;
  readonly count: number;
  /** When the window frees its next slot, in µs of the Redis clock (see RATE_LIMIT_LUA). */
  readonly nextFreeUs: number;
}

/** What a request gets: admitted or not, and the headers that describe the tighter window. */
export interface RateLimitDecision {
  readonly admitted: boolean;
  /** The window the headers describe: the one with fewer requests remaining. */
  readonly window: RateLimitWindowName;
  readonly limit: number;
  readonly remaining: number;
  /** `X-RateLimit-Reset`: the Unix second when that window frees its next slot (rounded up). */
  readonly resetAt: number;
  /** `Retry-After` in whole seconds, at least 1; only when refused. */
  readonly retryAfter?: number;
}

const US_PER_S = 1_000_000;

/**
 * The headers show the window with fewer requests remaining (docs/rules.md "Rate limits"), on a
 * tie the one freeing a slot later, so the reset agrees with Retry-After. A refusal waits until
 * every exhausted window has a slot. Rounded up: a client that waits as told is never refused.
 */
export function decide(
  admitted: boolean,
  nowUs: number,
  windows: Readonly<Record<RateLimitWindowName, WindowState>>,
): RateLimitDecision {
  const described = (['minute', 'day'] as const)
    .map((name) => {
      const w = windows[name];
      return { name, limit: w.limit, remaining: Math.max(0, w.limit - w.count), nextFreeUs: w.nextFreeUs };
    })
    .reduce((a, b) =>
      b.remaining < a.remaining || (b.remaining === a.remaining && b.nextFreeUs > a.nextFreeUs) ? b : a,
    );
  const decision: RateLimitDecision = {
    admitted,
    window: described.name,
    limit: described.limit,
    remaining: described.remaining,
    resetAt: Math.ceil(described.nextFreeUs / US_PER_S),
  };
  if (admitted) return decision;

  const waitUs = Math.max(
    0,
    ...Object.values(windows)
      .filter((w) => w.count >= w.limit)
      .map((w) => w.nextFreeUs - nowUs),
  );
  return { ...decision, retryAfter: Math.max(1, Math.ceil(waitUs / US_PER_S)) };
}

/**
 * Both sliding windows of one client, checked and recorded in one atomic step (docs/rules.md
 * "Rate limits"): the script is the only place that counts, for every app and replica.
 *
 * One list per client of its admission times, oldest first, in µs of the Redis clock (TIME:
 * replicas' clocks differ). An entry at t belongs to a window of length W while t > now − W. The
 * list holds the day window; the minute window is its tail, from an index the list's header keeps,
 * so each time is pushed once, passed by that index once and trimmed once: O(1) amortized. Index 0
 * is the header, "<times before the minute window>:<the latest now>:<number of times>[:<t>,<t>,…]",
 * the last part copies of the minute window's oldest times (up to 8), so that reading them, ~600
 * entries deep in the list at the limits, takes one call in several, not every call. The one read
 * that starts every call returns the header with the oldest times, so a client with few requests
 * costs no other read, and the list cannot lose its header without losing its times. The list
 * stays sorted, and the header's index right, because the limiter's clock never goes back: when
 * TIME reads earlier than the latest `now` (a clock stepped back, a failover to a primary whose
 * clock is behind), that is `now`, which only holds entries in their windows longer, until TIME
 * catches up. Numbers go back to Redis through %d: Lua 5.1 would print 16 digits in exponent form.
 *
 * KEYS[1]  the client's list
 * KEYS[2]  optional, with KEYS[3]: a key whose existence refuses the request uncounted (the
 *          tombstone of the access token it came with, partnerTombstoneKey)
 * KEYS[3]  the client's generation key: read, and set to `now` (for a day) when missing
 * ARGV[1]  minute limit     ARGV[2]  minute window, µs
 * ARGV[3]  day limit        ARGV[4]  day window, µs (≥ the minute window)
 *
 * All keys share the client's hash tag. Returns { -1 } when KEYS[2] exists; otherwise { admitted (1 or 0), now µs, minute count, minute next free µs, day count, day next free µs }:
 * counts include an admitted request; "next free" is when the entry that brings the window back
 * under its limit leaves it (`now` for an empty window); with KEYS[3], the generation follows.
 */
export const RATE_LIMIT_LUA = `
local times = KEYS[1]
local generation
if KEYS[2] then
  if redis.call('EXISTS', KEYS[2]) == 1 then return { -1 } end
  generation = redis.call('GET', KEYS[3])
end
local minuteLimit, minuteWindow = tonumber(ARGV[1]), tonumber(ARGV[2])
local dayLimit, dayWindow = tonumber(ARGV[3]), tonumber(ARGV[4])
local function int(n) return string.format('%d', n) end

local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
local ttl = int(math.ceil(dayWindow / 1000))
if KEYS[3] and not generation then
  generation = int(now)
  redis.call('SET', KEYS[3], generation, 'PX', ttl)
end

-- The header and the oldest times: time i is at list index i + 1, first[i + 2] here.
local BATCH = 8
local first = redis.call('LRANGE', times, '0', int(BATCH))
local skipped, length = 0, 0
-- The header may end with ":<t>,<t>,…", copies of the times from index skipped on: the minute
-- window's oldest, which would otherwise be a read deep into the list on almost every call.
local cached = {}
if first[1] then
  local header = first[1]
  local colon1 = string.find(header, ':', 1, true)
  local colon2 = string.find(header, ':', colon1 + 1, true)
  local colon3 = string.find(header, ':', colon2 + 1, true)
  local latest = tonumber(string.sub(header, colon1 + 1, colon2 - 1))
  skipped = tonumber(string.sub(header, 1, colon1 - 1))
  length = tonumber(string.sub(header, colon2 + 1, (colon3 or 0) - 1))
  if latest > now then now = latest end
  if colon3 then
    local from = colon3 + 1
    while true do
      local comma = string.find(header, ',', from, true)
      cached[#cached + 1] = string.sub(header, from, (comma or 0) - 1)
      if not comma then break end
      from = comma + 1
    end
  end
end

-- The index of the first time after floor, at or after time index from, and that time (nil past
-- the end). Near the head the first read has it; else one LRANGE finds it when it is near; when a
-- whole batch has left (a client back after a quiet spell), galloping then bisecting with LINDEX
-- finds it in O(log N) calls, not one per entry.
-- Also the batch it was found in and its place there (the times that follow it, when known).
-- copies: the header's copies of the times from index from on, looked at first.
local function firstAfter(from, floor, copies)
  if from >= length then return length, nil end
  local i = from
  if copies then
    for at = 1, #copies do
      local t = tonumber(copies[at])
      if t > floor then return i, t, copies, at end
      i = i + 1
    end
    return firstAfter(i, floor)
  end
  local batch, at = first, from + 2
  if not first[at] then batch, at = redis.call('LRANGE', times, int(from + 1), int(from + BATCH)), 1 end
  while batch[at] do
    local t = tonumber(batch[at])
    if t > floor then return i, t, batch, at end
    i, at = i + 1, at + 1
  end
  local out, step = i - 1, BATCH
  local inside, insideTime
  while not inside do
    local j = math.min(out + step, length - 1)
    if j == out then return length, nil end
    local t = tonumber(redis.call('LINDEX', times, int(j + 1)))
    if t > floor then inside, insideTime = j, t else out, step = j, step * 2 end
  end
  while inside - out > 1 do
    local mid = math.floor((out + inside) / 2)
    local t = tonumber(redis.call('LINDEX', times, int(mid + 1)))
    if t > floor then inside, insideTime = mid, t else out = mid end
  end
  return inside, insideTime
end

-- Every time the day window drops is out of the minute window too, so the header's index is
-- at or after the day window's start; it never points past the minute window's. Indices after
-- this are those once the day window's expired times are trimmed.
local dayStart, dayHead = firstAfter(0, now - dayWindow)
local minuteFrom = math.max(dayStart, math.min(skipped, length))
local minuteStart, minuteHead, batch, at
if minuteFrom == skipped then
  minuteStart, minuteHead, batch, at = firstAfter(minuteFrom, now - minuteWindow, cached)
else
  minuteStart, minuteHead, batch, at = firstAfter(minuteFrom, now - minuteWindow)
end
local ahead = {}
if batch then
  for j = at, math.min(#batch, at + BATCH - 1) do ahead[#ahead + 1] = batch[j] end
end
local dayCount, minuteCount = length - dayStart, length - minuteStart
minuteStart = minuteStart - dayStart

local admitted = 0
if minuteCount < minuteLimit and dayCount < dayLimit then
  admitted = 1
  if dayCount == 0 then dayHead = now end
  if minuteCount == 0 then minuteHead = now end
  dayCount, minuteCount = dayCount + 1, minuteCount + 1
end
if admitted == 1 or dayStart > 0 or minuteStart ~= skipped then
  -- PEXPIRE first, a write Redis allows when out of memory: a script that has written may
  -- finish, so a full state Redis still counts every admission (RPUSH and LSET alone it refuses).
  redis.call('PEXPIRE', times, ttl)
  if minuteCount == 1 and admitted == 1 then ahead = { int(now) } end
  local header = int(minuteStart) .. ':' .. int(now) .. ':' .. int(length - dayStart + admitted)
  if ahead[1] then header = header .. ':' .. table.concat(ahead, ',') end
  if not first[1] then
    redis.call('RPUSH', times, header, int(now))
    redis.call('PEXPIRE', times, ttl)
  else
    if admitted == 1 then redis.call('RPUSH', times, int(now)) end
    -- The header moves onto the last time that left, and the trim takes everything before it.
    redis.call('LSET', times, int(dayStart), header)
    if dayStart > 0 then redis.call('LTRIM', times, int(dayStart), '-1') end
  end
end

-- The next free slot is the time at (count − limit) in the window, which is its head unless the
-- limits were lowered since the window filled.
local function nextFree(count, limit, start, head, window)
  if count == 0 then return now end
  if count > limit then head = tonumber(redis.call('LINDEX', times, int(start + count - limit + 1))) end
  return head + window
end

local reply = {
  admitted, now,
  minuteCount, nextFree(minuteCount, minuteLimit, minuteStart, minuteHead, minuteWindow),
  dayCount, nextFree(dayCount, dayLimit, 0, dayHead, dayWindow),
}
if generation then reply[7] = generation end
return reply
`;

/** What EVALSHA calls the script by. */
export const RATE_LIMIT_SHA = createHash('sha1').update(RATE_LIMIT_LUA).digest('hex');

/**
 * The key of one client's windows. The client_id is the hash tag, so any other key of the same
 * client (its tombstones, its generation) shares its Cluster slot.
 */
export function rateLimitKey(clientId: string): string {
  return `ratelimit:{${clientId}}:times`;
}

/**
 * Checks and records one request of a client (a refused one is not recorded); rejects with
 * DependencyUnavailableError when the shared counter cannot be asked (503, fail closed).
 */
export abstract class RateLimiter {
  abstract consume(clientId: string): Promise<RateLimitDecision>;

  /**
   * A bearer request, in the same atomic step: undefined, and not counted, when its token's
   * `tombstone` key exists; otherwise the decision and the client's state generation (read from
   * `generation`, set when missing). Both keys must share the client's hash tag.
   */
  abstract consumeForToken(clientId: string, keys: TokenKeys): Promise<TokenCount | undefined>;
}

export interface TokenKeys {
  readonly tombstone: string;
  readonly generation: string;
}

/** A bearer request counted: the decision, and the generation of the client's state in Redis. */
export interface TokenCount {
  readonly decision: RateLimitDecision;
  readonly generation: string;
}

const US_PER_MS = 1000;

/**
 * The rate limiter every app and replica shares: one Lua script call per request (RATE_LIMIT_LUA).
 *
 * Redis unavailable: fail closed, 503. The limits are exact promises (docs/rules.md) that only
 * the shared counter can keep across replicas; a per-replica fallback would multiply them.
 */
export class RedisRateLimiter extends RateLimiter {
  private readonly windowArgs: readonly string[];

  constructor(
    private readonly redis: RedisClient,
    readonly policy: RateLimitPolicy,
  ) {
    super();
    for (const [name, w] of Object.entries(policy)) {
      if (!Number.isInteger(w.limit) || w.limit < 1)
        throw new Error(`${name} limit must be a positive integer`);
      if (!Number.isInteger(w.windowMs) || w.windowMs < 1) {
        throw new Error(`${name} window must be a positive number of milliseconds`);
      }
    }
    const { minute, day } = policy;
    // The script trims the store to the day window: a longer minute window would lose entries.
    if (day.windowMs < minute.windowMs) throw new Error('the day window must not be shorter');
    this.windowArgs = [minute.limit, minute.windowMs * US_PER_MS, day.limit, day.windowMs * US_PER_MS].map(
      String,
    );
  }

  async consume(clientId: string): Promise<RateLimitDecision> {
    return (await this.run(clientId, []))!.decision;
  }

  consumeForToken(clientId: string, keys: TokenKeys): Promise<TokenCount | undefined> {
    return this.run(clientId, [keys.tombstone, keys.generation]);
  }

  private async run(clientId: string, tokenKeys: readonly string[]): Promise<TokenCount | undefined> {
    const keys = [rateLimitKey(clientId), ...tokenKeys];
    const args = [...keys, ...this.windowArgs];
    let reply: unknown;
    try {
      reply = await this.redis.evalsha(RATE_LIMIT_SHA, keys.length, ...args).catch((err: unknown) => {
        // NOSCRIPT: this Redis has not cached the script (first use, restart, failover, SCRIPT FLUSH).
        // EVAL runs it and caches it; nothing was counted by the failed EVALSHA.
        if (err instanceof Error && err.name === 'ReplyError' && err.message.startsWith('NOSCRIPT')) {
          return this.redis.eval(RATE_LIMIT_LUA, keys.length, ...args);
        }
        throw err;
      });
    } catch (err) {
      // Any error reply other than unavailability is a fault in this code (a logged 500).
      // Down, unreachable, over its 1 s timeout, loading…: the request fails closed (503).
      throw isRedisUnavailable(err) ? new DependencyUnavailableError('redis (rate limiter)', err) : err;
    }
    const withGeneration = tokenKeys.length > 0;
    if (withGeneration && Array.isArray(reply) && reply.length === 1 && reply[0] === -1) return undefined;
    const numbers = Array.isArray(reply) ? reply.slice(0, 6) : [];
    const generation: unknown = withGeneration && Array.isArray(reply) ? reply[6] : '';
    if (
      numbers.length !== 6 ||
      !numbers.every((n) => Number.isSafeInteger(n)) ||
      (reply as unknown[]).length !== (withGeneration ? 7 : 6) ||
      typeof generation !== 'string'
    ) {
      throw new Error(`unexpected reply from the rate limit script: ${JSON.stringify(reply)}`);
    }
    const [admitted, nowUs, minuteCount, minuteNextFreeUs, dayCount, dayNextFreeUs] = numbers as number[];
    const decision = decide(admitted === 1, nowUs, {
      minute: { limit: this.policy.minute.limit, count: minuteCount, nextFreeUs: minuteNextFreeUs },
      day: { limit: this.policy.day.limit, count: dayCount, nextFreeUs: dayNextFreeUs },
    });
    return { decision, generation };
  }
}

/**
 * The limiter of an app without RATE_LIMIT_CONFIG (auth-server's `/oauth/userinfo` is not
 * metered): a metered route there is a wiring mistake, a logged 500.
 */
export class UnconfiguredRateLimiter extends RateLimiter {
  async consumeForToken(): Promise<TokenCount> {
    return { decision: await this.consume(), generation: '' };
  }

  consume(): Promise<RateLimitDecision> {
    return Promise.reject(
      new Error(
        "a /v1/* route is rate-limited, but the app's config spec lacks RATE_LIMIT_CONFIG from @svc/security",
      ),
    );
  }
}

interface MeteredRequest {
  readonly url?: string;
  /** Fastify's route options: `url` is the route's pattern (`/v1/me/vessels`), never the raw path. */
  readonly routeOptions?: { readonly url?: string };
}

/**
 * docs/rules.md "Limits": "every authenticated /v1/* endpoint". Anything else passes unmetered,
 * such as `/oauth/userinfo` behind `@BearerAuth()`.
 */
export function isMetered(request: MeteredRequest): boolean {
  return (request.routeOptions?.url ?? request.url ?? '').startsWith('/v1/');
}

const DECISION = Symbol('rate limit decision');

/**
 * BearerAuthGuard counts a metered request in the same Redis call that checks its token's
 * tombstone; RateLimitGuard then applies that decision instead of counting the request again.
 */
export function keepDecision(request: object, decision: RateLimitDecision): void {
  (request as { [DECISION]?: RateLimitDecision })[DECISION] = decision;
}

interface GuardedRequest extends MeteredRequest {
  readonly user?: { readonly client_id?: unknown };
  readonly [DECISION]?: RateLimitDecision;
}

/** The length of each window the limiter keeps (RATE_LIMIT_LUA), as `w` of RateLimit-Policy. */
const WINDOW_SECONDS: Readonly<Record<RateLimitDecision['window'], number>> = {
  minute: MINUTE_MS / 1000,
  day: DAY_MS / 1000,
};

/**
 * Runs after the authenticating guard (a 401 is never counted) and before ScopeGuard (a 403 is
 * counted), and puts the headers on the reply first, so every answer, errors too, carries them.
 * A bearer request was already counted by BearerAuthGuard (keepDecision): its decision is applied.
 */
@Injectable()
export class RateLimitGuard implements CanActivate {
  private readonly refusals?: Counter<'window' | 'partner' | 'tier'>;

  constructor(
    private readonly limiter: RateLimiter,
    @Optional() metrics?: AppMetrics,
  ) {
    // By the window that ran out, and the partner: a client_id comes from a token or credentials
    // that authenticated, so the partner registry bounds it (never raw input).
    this.refusals = metrics?.counter(
      'rate_limit_refusals_total',
      'requests refused with 429, by the window that ran out, the partner (client_id) and its limits tier',
      ['window', 'partner', 'tier'],
    );
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const request = http.getRequest<GuardedRequest>();
    if (!isMetered(request)) return true;
    // The client_id an authenticating guard (bearer or Basic) put on the request. Without one in
    // front there is nobody to count: a wiring mistake, never a pass.
    const clientId = request.user?.client_id;
    if (typeof clientId !== 'string' || clientId === '') {
      throw new Error(
        'RateLimitGuard runs only after a guard that puts the caller (with its client_id) on the request',
      );
    }
    const decision = request[DECISION] ?? (await this.limiter.consume(clientId));
    const reply = http.getResponse<{ header(name: string, value: string): unknown }>();
    reply.header('x-ratelimit-limit', String(decision.limit));
    reply.header('x-ratelimit-remaining', String(decision.remaining));
    reply.header('x-ratelimit-reset', String(decision.resetAt));
    // The same window in the IETF fields (draft-ietf-httpapi-ratelimit-headers-11 §§3-4): the
    // policy of the window the X- headers describe, and its remaining quota and seconds to reset.
    reply.header(
      'ratelimit-policy',
      `"${decision.window}";q=${decision.limit};w=${WINDOW_SECONDS[decision.window]}`,
    );
    reply.header(
      'ratelimit',
      `"${decision.window}";r=${decision.remaining};t=${Math.max(0, decision.resetAt - Math.floor(Date.now() / 1000))}`,
    );
    if (decision.admitted) return true;
    // Every partner gets the same RATE_LIMIT_PER_MINUTE / RATE_LIMIT_PER_DAY today: one tier.
    this.refusals?.inc({ window: decision.window, partner: clientId, tier: 'standard' });
    // 429 `rate_limit_exceeded` with `Retry-After` in seconds (RFC 6585 §4, RFC 9110 §10.2.3).
    const retryAfter = decision.retryAfter ?? 1;
    throw new ApiProblem(
      'rate_limit_exceeded',
      `This client has used its ${decision.limit} requests per ${decision.window}; ` +
        `retry after ${retryAfter} second${retryAfter === 1 ? '' : 's'}.`,
      { headers: { 'retry-after': String(retryAfter) } },
    );
  }
}
