/**
 * What a budget costs a call in the counter store: one reservation and its settlement against five
 * counters (the overhead suite's five limits: three calendar windows, a fixed window of seconds and a
 * sliding one), in-process and against Redis on loopback.
 *
 *   bun bench/spend.ts [redis://127.0.0.1:6379]
 *
 * Prints a Markdown table of reserve + settle times. The end-to-end figure is the overhead suite's
 * arm with limits (bench/overhead/ab.ts, AB_LIMITS=5).
 */
import Redis from 'ioredis'
import { type CounterSpec, MemorySpendStore, type SpendStore } from '../src/spend/counters'
import { RedisSpendStore } from '../src/spend/redis-counters'

const WARMUP = 2_000
const SAMPLES = 20_000
const HOUR = 3_600_000

function countersFor(i: number, now: number): CounterSpec[] {
  // 100 organisations, so keys vary as they do under real traffic; limits high enough never to refuse.
  const org = `bench-${i % 100}`
  const fixed = (name: string, length: number): CounterSpec => {
    const start = Math.floor(now / length) * length
    return {
      key: `gw:sp:{${org}}:${name}`,
      limit: 1e15,
      slots: 1,
      slotMs: length,
      slotStart: start,
      countFrom: start,
      seedMark: String(start),
      ttlMs: 2 * length,
    }
  }
  const slotMs = HOUR / 20
  const slotStart = Math.floor(now / slotMs) * slotMs
  return [
    fixed('day', 24 * HOUR),
    fixed('month', 30 * 24 * HOUR),
    fixed('week', 7 * 24 * HOUR),
    fixed('seconds', HOUR),
    {
      key: `gw:sp:{${org}}:velocity`,
      limit: 1e15,
      slots: 21,
      slotMs,
      slotStart,
      countFrom: slotStart - 20 * slotMs,
      seedMark: 'sliding',
      ttlMs: 2 * HOUR,
    },
  ]
}

const AMOUNTS = [100_000_000, 1, 2_000, 100_000_000, 100_000_000]
const USED = [7_500_000, 1, 1_500, 7_500_000, 7_500_000]

async function once(store: SpendStore, i: number): Promise<void> {
  const now = Date.now()
  const counters = countersFor(i, now)
  let outcome = await store.reserve(`h${i}`, now + 900_000, counters, AMOUNTS, now)
  if (outcome.kind === 'unseeded') {
    for (const index of outcome.indexes) await store.seed(counters[index] as CounterSpec, 0, now)
    outcome = await store.reserve(`h${i}`, now + 900_000, counters, AMOUNTS, now)
  }
  await store.settle(`h${i}`, counters, USED, now)
}

async function measure(store: SpendStore): Promise<{ p50: number; p99: number; mean: number }> {
  for (let i = 0; i < WARMUP; i++) await once(store, i)
  const samples = new Float64Array(SAMPLES)
  for (let i = 0; i < SAMPLES; i++) {
    const started = Bun.nanoseconds()
    await once(store, i)
    samples[i] = (Bun.nanoseconds() - started) / 1_000
  }
  samples.sort()
  const at = (q: number) => samples[Math.min(SAMPLES - 1, Math.floor(q * SAMPLES))] as number
  return { p50: at(0.5), p99: at(0.99), mean: samples.reduce((a, b) => a + b, 0) / SAMPLES }
}

const row = (name: string, m: { p50: number; p99: number; mean: number }) =>
  `| ${name} | ${m.p50.toFixed(1)} | ${m.p99.toFixed(1)} | ${m.mean.toFixed(1)} |`
const rows = [row('in-process', await measure(new MemorySpendStore()))]
const url = process.argv[2] ?? process.env.GW_TEST_REDIS_URL
if (url) {
  const redis = new Redis(url)
  rows.push(row('Redis (loopback)', await measure(new RedisSpendStore(redis))))
  const keys = await redis.keys('gw:sp:{bench-*')
  if (keys.length > 0) await redis.del(...keys)
  redis.disconnect()
}
console.log(`Budget reserve + settle (5 counters), ${SAMPLES} sequential samples after ${WARMUP} warm-up, Bun ${Bun.version}\n`)
console.log('| store | p50 µs | p99 µs | mean µs |')
console.log('|---|---|---|---|')
for (const line of rows) console.log(line)
