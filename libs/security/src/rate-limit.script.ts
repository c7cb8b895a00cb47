import { createHash } from 'node:crypto';

/**
 * Both sliding windows of one client, checked and recorded in one atomic step (docs/rules.md
 * "Rate limits"): the script is the only place that counts, for every app and replica.
 *
 * One sorted set per client, one member per admitted request, scored with the Redis clock in µs
 * (TIME: replicas' clocks differ). An entry at t belongs to a window of length W while t > now − W.
 * Numbers go back to Redis through %d: Lua 5.1 would print a 16-digit count in exponent notation.
 *
 * KEYS[1]  the client's sorted set
 * KEYS[2]  optional, with KEYS[3]: a key whose existence refuses the request uncounted (the
 *          partner-tagged tombstone of the access token it came with)
 * KEYS[3]  the client's generation key: read, and set to `now` (for a day) when missing
 * ARGV[1]  minute limit     ARGV[2]  minute window, µs
 * ARGV[3]  day limit        ARGV[4]  day window, µs (≥ the minute window)
 * ARGV[5]  a suffix unique to this request (two requests in one microsecond stay two members)
 *
 * All keys share the client's hash tag. Returns { -1 } when KEYS[2] exists; otherwise { admitted (1 or 0), now µs, minute count, minute next free µs, day count, day next free µs }:
 * counts include an admitted request; "next free" is when the entry that brings the window back
 * under its limit leaves it (`now` for an empty window); with KEYS[3], the generation follows.
 */
export const RATE_LIMIT_LUA = `
local key = KEYS[1]
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
if KEYS[3] and not generation then
  generation = int(now)
  redis.call('SET', KEYS[3], generation, 'PX', int(math.ceil(dayWindow / 1000)))
end

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

local reply = { admitted, now, minuteCount, nextFree(minuteEntry, minuteWindow), dayCount, nextFree(dayEntry, dayWindow) }
if generation then reply[7] = generation end
return reply
`;

/** What EVALSHA calls the script by. */
export const RATE_LIMIT_SHA = createHash('sha1').update(RATE_LIMIT_LUA).digest('hex');

/** The client_id is the hash tag, so any later key of the same client shares its Cluster slot. */
export function rateLimitKey(clientId: string): string {
  return `ratelimit:{${clientId}}`;
}
