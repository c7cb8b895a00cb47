import { createHash } from 'node:crypto';

/**
 * Both sliding windows of one client, checked and recorded in one atomic step (docs/rules.md
 * "Rate limits"): the script is the only place that counts, for every app and replica.
 *
 * One list per client of its admission times, oldest first, in µs of the Redis clock (TIME:
 * replicas' clocks differ). An entry at t belongs to a window of length W while t > now − W. The
 * list holds the day window; the minute window is its tail, from an index the list's header keeps,
 * so each time is pushed once, passed by that index once and trimmed once: O(1) amortized. Index 0
 * is the header,
 * "<times before the minute window>:<the latest now>:<number of times>[:<t>,<t>,…]", the last part
 * copies of the minute window's oldest times (up to 8), so that reading them, ~600 entries deep in
 * the list at the limits, takes one call in several, not every call. The one read that starts
 * every call returns the header with the oldest times, so a client with few requests costs no
 * other read, and the list cannot lose its header without losing its times. The list stays sorted, and the
 * header's index right, because the limiter's clock never goes back: when TIME reads earlier than
 * the latest `now` (a clock stepped back, a failover to a primary whose clock is behind), that is
 * `now`, which only holds entries in their windows longer, until TIME catches up. Numbers go back
 * to Redis through %d: Lua 5.1 would print 16 digits in exponent notation.
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
