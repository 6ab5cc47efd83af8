import type Redis from 'ioredis'
import type { CounterSpec, CounterState, ReserveOutcome, SpendStore } from './counters'

/**
 * The counters of counters.ts in Redis, shared by every instance: one Lua script per reservation for
 * all the counters of a call, so the check and the holds are one atomic step. A counter is a hash (its
 * slots `s<i>`/`v<i>`, the total held `r`, each hold's amount `h:<id>`, the seed mark
 * `m`) and a sorted set of its holds by expiry; all keys of an organisation share its hash tag, so the
 * scripts also run on a cluster. Amounts are whole numbers, changed with HINCRBY, exact to 2^63.
 *
 * The instances' clocks (passed in) place a call in its window, as they do for calendar windows.
 */

/**
 * The helpers of every script. `purge` lets go of a counter's expired holds; `state` reads in one call
 * what is held, the seed mark, and the spend of the counted slots (with the oldest that holds some).
 */
const HELPERS = `
local function purge(h, z, now)
  local expired = redis.call('ZRANGEBYSCORE', z, '-inf', now)
  for _, id in ipairs(expired) do
    local hold = redis.call('HGET', h, 'h:' .. id)
    if hold then
      redis.call('HINCRBY', h, 'r', string.format('%.0f', -tonumber(hold)))
      redis.call('HDEL', h, 'h:' .. id)
    end
    redis.call('ZREM', z, id)
  end
end

local function state(h, slots, countFrom)
  local fields = {'r', 'm'}
  for i = 0, slots - 1 do
    fields[2 * i + 3] = 's' .. i
    fields[2 * i + 4] = 'v' .. i
  end
  local got = redis.call('HMGET', h, unpack(fields))
  local spent, oldest = 0, -1
  for i = 0, slots - 1 do
    local start = tonumber(got[2 * i + 3] or '-1')
    if start >= countFrom then
      local value = tonumber(got[2 * i + 4] or '0')
      spent = spent + value
      if value > 0 and (oldest < 0 or start < oldest) then oldest = start end
    end
  end
  return math.max(0, tonumber(got[1] or '0')), got[2], spent, oldest
end

local function add(h, slots, slotMs, slotStart, amount)
  if amount <= 0 then return end
  local i = math.floor(slotStart / slotMs) % slots
  local held = tonumber(redis.call('HGET', h, 's' .. i) or '-1')
  if held == slotStart then
    redis.call('HINCRBY', h, 'v' .. i, string.format('%.0f', amount))
  elseif held < slotStart then
    redis.call('HSET', h, 's' .. i, string.format('%.0f', slotStart), 'v' .. i, string.format('%.0f', amount))
  end
end
`

/** ARGV: now, holdId, expiresAt, then per counter: limit, slots, slotMs, slotStart, countFrom, seedMark, ttlMs, amount. */
const RESERVE = `${HELPERS}
local now, id, expiresAt = tonumber(ARGV[1]), ARGV[2], ARGV[3]
local n = #KEYS / 2
local states, unseeded, refused = {}, {}, 0
for i = 1, n do
  local h, z, b = KEYS[2 * i - 1], KEYS[2 * i], 3 + (i - 1) * 8
  purge(h, z, now)
  local reserved, mark, spent, oldest = state(h, tonumber(ARGV[b + 2]), tonumber(ARGV[b + 5]))
  local seeded = mark == ARGV[b + 6]
  states[i] = {spent, reserved, seeded and 1 or 0, oldest}
  if not seeded then
    unseeded[#unseeded + 1] = i
  elseif refused == 0 and spent + reserved + tonumber(ARGV[b + 8]) > tonumber(ARGV[b + 1]) then
    refused = i
  end
end
if #unseeded > 0 then return {2, unseeded} end
if refused > 0 then return {1, refused, states} end
for i = 1, n do
  local h, z, b = KEYS[2 * i - 1], KEYS[2 * i], 3 + (i - 1) * 8
  redis.call('HINCRBY', h, 'r', ARGV[b + 8])
  redis.call('HSET', h, 'h:' .. id, ARGV[b + 8])
  redis.call('ZADD', z, expiresAt, id)
  redis.call('PEXPIRE', h, ARGV[b + 7])
  redis.call('PEXPIRE', z, ARGV[b + 7])
end
return {0, 0, states}
`

/** ARGV: now, holdId, then per counter: slots, slotMs, slotStart, countFrom, ttlMs, used. */
const SETTLE = `${HELPERS}
local now, id = tonumber(ARGV[1]), ARGV[2]
local out = {}
for i = 1, #KEYS / 2 do
  local h, z, b = KEYS[2 * i - 1], KEYS[2 * i], 2 + (i - 1) * 6
  local hold = redis.call('HGET', h, 'h:' .. id)
  if hold then
    redis.call('HINCRBY', h, 'r', string.format('%.0f', -tonumber(hold)))
    redis.call('HDEL', h, 'h:' .. id)
    redis.call('ZREM', z, id)
  end
  purge(h, z, now)
  local slots = tonumber(ARGV[b + 1])
  add(h, slots, tonumber(ARGV[b + 2]), tonumber(ARGV[b + 3]), tonumber(ARGV[b + 6]))
  redis.call('PEXPIRE', h, ARGV[b + 5])
  local _, _, spent = state(h, slots, tonumber(ARGV[b + 4]))
  out[i] = spent
end
return out
`

/** ARGV: seedMark, slots, slotMs, slotStart, countFrom, ttlMs, logged. */
const SEED = `${HELPERS}
local h = KEYS[1]
if redis.call('HGET', h, 'm') == ARGV[1] then return 0 end
local slots = tonumber(ARGV[2])
local _, _, spent = state(h, slots, tonumber(ARGV[5]))
add(h, slots, tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[7]) - spent)
redis.call('HSET', h, 'm', ARGV[1])
redis.call('PEXPIRE', h, ARGV[6])
return 1
`

/** ARGV: now, then per counter: slots, countFrom, seedMark. */
const READ = `${HELPERS}
local now = tonumber(ARGV[1])
local out = {}
for i = 1, #KEYS / 2 do
  local h, z, b = KEYS[2 * i - 1], KEYS[2 * i], 1 + (i - 1) * 3
  purge(h, z, now)
  local reserved, mark, spent, oldest = state(h, tonumber(ARGV[b + 1]), tonumber(ARGV[b + 2]))
  out[i] = {spent, reserved, mark == ARGV[b + 3] and 1 or 0, oldest}
end
return out
`

type Row = [number, number, number, number]

type SpendRedis = Redis & {
  gwSpendReserve(keys: number, ...args: Array<string | number>): Promise<[0 | 1, number, Row[]] | [2, number[]]>
  gwSpendSettle(keys: number, ...args: Array<string | number>): Promise<number[]>
  gwSpendSeed(key: string, ...args: Array<string | number>): Promise<number>
  gwSpendRead(keys: number, ...args: Array<string | number>): Promise<Row[]>
}

const holdsKey = (key: string) => `${key}:holds`
const keysOf = (counters: readonly CounterSpec[]) => counters.flatMap((c) => [c.key, holdsKey(c.key)])
const stateOf = ([spent, reserved, seeded, oldest]: Row): CounterState => ({
  spent,
  reserved,
  seeded: seeded === 1,
  ...(oldest >= 0 ? { oldestSlot: oldest } : {}),
})
/** Whole numbers as Redis's HINCRBY takes them. */
const whole = (n: number) => Math.round(n).toString()

export class RedisSpendStore implements SpendStore {
  readonly name = 'redis'
  private readonly redis: SpendRedis

  constructor(redis: Redis) {
    redis.defineCommand('gwSpendReserve', { lua: RESERVE })
    redis.defineCommand('gwSpendSettle', { lua: SETTLE })
    redis.defineCommand('gwSpendSeed', { numberOfKeys: 1, lua: SEED })
    redis.defineCommand('gwSpendRead', { lua: READ })
    this.redis = redis as SpendRedis
  }

  async reserve(
    holdId: string,
    expiresAt: number,
    counters: readonly CounterSpec[],
    amounts: readonly number[],
    now: number,
  ): Promise<ReserveOutcome> {
    const args = counters.flatMap((c, i) => [
      whole(c.limit),
      c.slots,
      c.slotMs,
      c.slotStart,
      c.countFrom,
      c.seedMark,
      c.ttlMs,
      whole(amounts[i] ?? 0),
    ])
    const answer = await this.redis.gwSpendReserve(counters.length * 2, ...keysOf(counters), now, holdId, expiresAt, ...args)
    if (answer[0] === 2) return { kind: 'unseeded', indexes: answer[1].map((i) => i - 1) }
    const before = answer[2].map(stateOf)
    return answer[0] === 1 ? { kind: 'refused', index: answer[1] - 1, before } : { kind: 'reserved', before }
  }

  async settle(holdId: string, counters: readonly CounterSpec[], used: readonly number[], now: number): Promise<number[]> {
    const args = counters.flatMap((c, i) => [c.slots, c.slotMs, c.slotStart, c.countFrom, c.ttlMs, whole(used[i] ?? 0)])
    return this.redis.gwSpendSettle(counters.length * 2, ...keysOf(counters), now, holdId, ...args)
  }

  async seed(c: CounterSpec, logged: number, _now: number): Promise<void> {
    await this.redis.gwSpendSeed(c.key, c.seedMark, c.slots, c.slotMs, c.slotStart, c.countFrom, c.ttlMs, whole(logged))
  }

  async read(counters: readonly CounterSpec[], now: number): Promise<CounterState[]> {
    const args = counters.flatMap((c) => [c.slots, c.countFrom, c.seedMark])
    return (await this.redis.gwSpendRead(counters.length * 2, ...keysOf(counters), now, ...args)).map(stateOf)
  }

  async unseed(keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return
    const pipeline = this.redis.pipeline()
    for (const key of keys) pipeline.hdel(key, 'm')
    await pipeline.exec()
  }
}
