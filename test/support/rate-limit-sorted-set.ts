import { createHash } from 'node:crypto';

/**
 * The sorted-set script of the releases before the list store, verbatim: what a replica of such a
 * release still runs during the upgrade (docs/operations.md "Upgrading the rate limiter's store").
 * Only tests and the limiter bench run it, as that replica or as the reference the lists must agree
 * with. KEYS[1] the sorted set, KEYS[2]/KEYS[3] the tombstone and generation; ARGV[1..4] the
 * windows as RATE_LIMIT_LUA takes them, ARGV[5] a member suffix unique to the request.
 */
export const SORTED_SET_LUA = `
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

/** The hash of SORTED_SET_LUA: an earlier release's replica calls it by this. */
export const SORTED_SET_SHA = createHash('sha1').update(SORTED_SET_LUA).digest('hex');
