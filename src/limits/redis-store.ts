import type Redis from 'ioredis'
import type { Decision } from './algorithms'
import type { Check, LimiterStore } from './store'

/**
 * The same arithmetic as algorithms.ts, in one Lua script per request decision: Redis runs it
 * atomically, with Redis's own clock (TIME), so every instance sees one truth. All of a request's keys
 * share the organisation's hash tag, so the script also runs on a cluster. ioredis sends it by SHA
 * (EVALSHA) and loads it once when Redis does not know it.
 *
 * ARGV per check: kind ('w' | 'b'), limit, windowMs, need, take. Returns per check: allowed (0/1),
 * remaining, retryAfterSeconds.
 *
 * A window's key lives two windows (after that it counts for nothing). A bucket's key lives until the
 * bucket would be full again, when forgetting it changes nothing: a debt (a charge beyond the balance)
 * is kept until it is paid off, however many windows that takes.
 */
const DECIDE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local n = #KEYS
local out, writes, all = {}, {}, true
for i = 1, n do
  local base = (i - 1) * 5
  local kind = ARGV[base + 1]
  local limit = tonumber(ARGV[base + 2])
  local window = tonumber(ARGV[base + 3])
  if kind == 'w' then
    local start = math.floor(now / window) * window
    local s = redis.call('HMGET', KEYS[i], 's', 'c', 'p')
    local cur, prev = 0, 0
    if s[1] then
      local ws = tonumber(s[1])
      if ws == start then cur = tonumber(s[2]); prev = tonumber(s[3])
      elseif ws == start - window then prev = tonumber(s[2]) end
    end
    local elapsed = now - start
    local used = prev * (1 - elapsed / window) + cur
    if used + 1 <= limit then
      out[i] = {1, math.max(0, math.floor(limit - used - 1)), 0}
      writes[i] = {'w', start, cur + 1, prev, window * 2}
    else
      all = false
      local wait = window - elapsed
      if cur + 1 <= limit then
        if prev > 0 then wait = math.min(wait, window * (1 - (limit - cur - 1) / prev) - elapsed) end
      else
        wait = wait + math.max(0, window * (1 - (limit - 1) / cur))
      end
      out[i] = {0, 0, math.max(1, math.ceil(wait / 1000))}
    end
  else
    local need = tonumber(ARGV[base + 4])
    local take = tonumber(ARGV[base + 5])
    local rate = limit / window
    local s = redis.call('HMGET', KEYS[i], 't', 'u')
    local tokens = limit
    if s[1] then tokens = math.min(limit, tonumber(s[1]) + math.max(0, now - tonumber(s[2])) * rate) end
    if tokens >= need and tokens > 0 then
      out[i] = {1, math.max(0, math.floor(tokens - take)), 0}
      writes[i] = {'b', tokens - take, now, math.max(1, math.ceil((limit - (tokens - take)) * window / limit))}
    else
      all = false
      local missing = math.max(need, 1e-9) - tokens
      out[i] = {0, math.max(0, math.floor(tokens)), math.max(1, math.ceil(missing / rate / 1000))}
    end
  end
end
if all then
  for i = 1, n do
    local w = writes[i]
    if w[1] == 'w' then
      redis.call('HSET', KEYS[i], 's', w[2], 'c', w[3], 'p', w[4])
      redis.call('PEXPIRE', KEYS[i], w[5])
    else
      redis.call('HSET', KEYS[i], 't', tostring(w[2]), 'u', w[3])
      redis.call('PEXPIRE', KEYS[i], w[4])
    end
  end
end
return out
`

const CHARGE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local amount = tonumber(ARGV[3])
local s = redis.call('HMGET', KEYS[1], 't', 'u')
local tokens = limit
if s[1] then tokens = math.min(limit, tonumber(s[1]) + math.max(0, now - tonumber(s[2])) * (limit / window)) end
redis.call('HSET', KEYS[1], 't', tostring(tokens - amount), 'u', now)
redis.call('PEXPIRE', KEYS[1], math.max(1, math.ceil((limit - (tokens - amount)) * window / limit)))
return 1
`

type LimiterRedis = Redis & {
  gwLimitDecide(numberOfKeys: number, ...args: Array<string | number>): Promise<Array<[number, number, number]>>
  gwLimitCharge(key: string, ...args: Array<string | number>): Promise<number>
}

export class RedisLimiterStore implements LimiterStore {
  readonly name = 'redis'
  private readonly redis: LimiterRedis

  constructor(redis: Redis) {
    redis.defineCommand('gwLimitDecide', { lua: DECIDE })
    redis.defineCommand('gwLimitCharge', { numberOfKeys: 1, lua: CHARGE })
    this.redis = redis as LimiterRedis
  }

  async decide(checks: readonly Check[]): Promise<Decision[]> {
    const args = checks.flatMap((c) => [
      c.kind === 'window' ? 'w' : 'b',
      c.limit,
      c.windowMs,
      c.kind === 'bucket' ? c.need : 0,
      c.kind === 'bucket' ? c.take : 0,
    ])
    const rows = await this.redis.gwLimitDecide(checks.length, ...checks.map((c) => c.key), ...args)
    return rows.map(([allowed, remaining, retryAfterSeconds], i) => ({
      allowed: allowed === 1,
      limit: (checks[i] as Check).limit,
      remaining,
      retryAfterSeconds,
    }))
  }

  async charge(key: string, limit: number, windowMs: number, amount: number): Promise<void> {
    await this.redis.gwLimitCharge(key, limit, windowMs, amount)
  }
}
