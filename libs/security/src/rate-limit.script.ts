import { createHash } from 'node:crypto';

/**
 * Both sliding windows of one client, checked and recorded in one atomic step (docs/rules.md
 * "Rate limits"). Redis runs a script to completion before any other command, so every app and
 * every replica sees one sequence of decisions: the script is the only place that counts.
 *
 * One sorted set per client: one member per admitted request, scored with the Redis clock in
 * microseconds (TIME, never the app's clock: replicas' clocks differ, and effects replication,
 * the only mode of Redis ≥ 7, replicates the writes rather than re-running TIME). An entry at t
 * belongs to a window of length W while t > now − W. Admitting only when both windows hold fewer
 * than their limits means no rolling window of length W ever holds more than its limit.
 *
 * Numbers are formatted with %d before they go back to Redis: Lua 5.1 would print a 16-digit
 * microsecond count in exponent notation and lose its last digits.
 *
 * KEYS[1]  the client's sorted set (`ratelimit:{<client_id>}`; ioredis adds the key prefix)
 * ARGV[1]  minute limit     ARGV[2]  minute window, µs
 * ARGV[3]  day limit        ARGV[4]  day window, µs (≥ the minute window)
 * ARGV[5]  a suffix unique to this request (two requests in one microsecond stay two members)
 *
 * Returns { admitted (1 or 0), now µs, minute count, minute next free µs, day count, day next free µs },
 * counts including this request when it was admitted. "Next free" is when the window frees its next
 * slot: the departure of the entry that brings it back under its limit (the oldest, unless the limit
 * was lowered below the count), i.e. that entry's time + the window; `now` for an empty window.
 */
export const RATE_LIMIT_LUA = `
local key = KEYS[1]
local minuteLimit, minuteWindow = tonumber(ARGV[1]), tonumber(ARGV[2])
local dayLimit, dayWindow = tonumber(ARGV[3]), tonumber(ARGV[4])
local function int(n) return string.format('%d', n) end

local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])

redis.call('ZREMRANGEBYSCORE', key, '-inf', int(now - dayWindow))
local minuteFloor = '(' .. int(now - minuteWindow)
local dayCount = redis.call('ZCARD', key)
local minuteCount = redis.call('ZCOUNT', key, minuteFloor, '+inf')

local admitted = 0
if minuteCount < minuteLimit and dayCount < dayLimit then
  redis.call('ZADD', key, int(now), int(now) .. ':' .. ARGV[5])
  redis.call('PEXPIRE', key, int(math.ceil(dayWindow / 1000)))
  admitted = 1
  minuteCount = minuteCount + 1
  dayCount = dayCount + 1
end

local function nextFree(entry, window)
  if entry[2] == nil then return now end
  return tonumber(entry[2]) + window
end
local minuteAt = int(math.max(0, minuteCount - minuteLimit))
local dayAt = int(math.max(0, dayCount - dayLimit))
local minuteEntry = redis.call('ZRANGEBYSCORE', key, minuteFloor, '+inf', 'WITHSCORES', 'LIMIT', minuteAt, 1)
local dayEntry = redis.call('ZRANGE', key, dayAt, dayAt, 'WITHSCORES')

return { admitted, now, minuteCount, nextFree(minuteEntry, minuteWindow), dayCount, nextFree(dayEntry, dayWindow) }
`;

/** What EVALSHA calls the script by. */
export const RATE_LIMIT_SHA = createHash('sha1').update(RATE_LIMIT_LUA).digest('hex');

/**
 * The sorted set of one client; ioredis prepends the environment's key prefix. The client_id is
 * the key's hash tag: the script touches this one key today, and any key a later change adds for
 * the same client (`ratelimit:{<client_id>}:…`) lands in the same Redis Cluster slot.
 */
export function rateLimitKey(clientId: string): string {
  return `ratelimit:{${clientId}}`;
}
