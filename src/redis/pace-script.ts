/**
 * The steps of a `PaceStore` on a key's state in Redis, each atomic (one script run), on the
 * server's clock (`TIME`, so that the workers' clocks do not matter): the same steps as
 * memory-store.ts. KEYS[1]: the key's hash (phase, turn, next, startedAt, learned, learnedAt,
 * base: the refusals the remembered rate had taken when the hash was made); KEYS[2]: the list of
 * the phase's reservations, `turn,count,at,intervalMs,lateMs` (lateMs empty when not said), the first 500; KEYS[3]: the rate
 * remembered past the schedule (learned, learnedAt, refusals), kept `remember` ms after the key's
 * last use. ARGV[1]: the step; ARGV[2]: how long a key unused is kept (ms); ARGV[3]: how long its
 * rate is remembered (ms, 0: not past the schedule); then the step's arguments (reserve: count,
 * intervalMs, lateMs or empty; refuse: phase, turn, pauseMs; learn: phase, the JSON learned, the JSON remembered
 * past the schedule, empty when it holds no rate). Every write sets the keys' TTL: nothing outlives its disuse, and a worker that dies holds
 * nothing. Times go out as strings: a Lua number in a reply is cut to an integer.
 */
export const PACE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local s, log, kept = KEYS[1], KEYS[2], KEYS[3]
local step, keep, remember = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local phase = tonumber(redis.call('HGET', s, 'phase')) or 0
local function ms(x) return string.format('%.3f', x) end
local function expire(next)
  local ttl = math.ceil(math.max(keep, next - now + keep))
  redis.call('PEXPIRE', s, ttl)
  redis.call('PEXPIRE', log, ttl)
end
if step == 'reserve' then
  local count, interval, late = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6] or '')
  if redis.call('EXISTS', s) == 0 and redis.call('EXISTS', kept) == 1 then
    local was = redis.call('HMGET', kept, 'learned', 'learnedAt', 'refusals')
    if was[1] and was[2] then
      redis.call('HSET', s, 'learned', was[1], 'learnedAt', was[2], 'refusals', was[3] or '0', 'base', was[3] or '0')
    end
  end
  if remember > 0 then redis.call('PEXPIRE', kept, remember) end
  local next = tonumber(redis.call('HGET', s, 'next')) or 0
  local turn = tonumber(redis.call('HGET', s, 'turn')) or 0
  local at = next
  if now - next > 50 then at = now end
  local started = tonumber(redis.call('HGET', s, 'startedAt')) or at
  if turn == 0 then started = at end
  if redis.call('LLEN', log) < 500 then
    local said = ''
    if late and late >= 0 and late < 1000000 then said = ms(late) end
    redis.call('RPUSH', log, turn .. ',' .. count .. ',' .. ms(at) .. ',' .. string.format('%.6f', interval) .. ',' .. said)
  end
  next = at + count * interval
  redis.call('HSET', s, 'phase', phase, 'turn', turn + count, 'next', ms(next), 'startedAt', ms(started))
  expire(next)
  return { tostring(phase), tostring(turn), ms(math.max(0, at - now)), ms(now), ms(started),
    redis.call('HGET', s, 'learned') or '', redis.call('HGET', s, 'learnedAt') or '',
    redis.call('HGET', s, 'refusals') or '' }
end
if tonumber(ARGV[4]) ~= phase then return false end
if step == 'refuse' then
  local entries = redis.call('LRANGE', log, 0, -1)
  redis.call('DEL', log)
  local next = now + tonumber(ARGV[6])
  redis.call('HSET', s, 'phase', phase + 1, 'turn', 0, 'next', ms(next))
  expire(next)
  return entries
end
if step == 'learn' then
  local refusals = (tonumber(redis.call('HGET', s, 'base')) or 0) + phase
  redis.call('HSET', s, 'learned', ARGV[5], 'learnedAt', ms(now), 'refusals', refusals)
  if ARGV[6] ~= '' and remember > 0 then
    redis.call('HSET', kept, 'learned', ARGV[6], 'learnedAt', ms(now), 'refusals', refusals)
    redis.call('PEXPIRE', kept, remember)
  end
  expire(tonumber(redis.call('HGET', s, 'next')) or now)
  return 1
end
return redis.error_reply('unknown step')
`;
