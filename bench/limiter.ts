/**
 * The rate limiter's decision time: one request's checks (three layer-1 windows and one layer-2
 * bucket, as the gateway makes them), in-process and against Redis on loopback.
 *
 *   bun bench/limiter.ts [redis://127.0.0.1:6379]
 *
 * Prints a Markdown table; targets: p99 under 50 µs in-process, under 1 ms on Redis.
 */
import Redis from 'ioredis'
import { RedisLimiterStore } from '../src/limits/redis-store'
import { type Check, type LimiterStore, MemoryLimiterStore } from '../src/limits/store'

const WARMUP = 2_000
const SAMPLES = 20_000

function checksFor(i: number): Check[] {
  // 100 organisations, so keys vary as they do under real traffic; limits high enough never to refuse.
  const org = `bench-${i % 100}`
  const window = (segment: string) => ({
    kind: 'window' as const,
    key: `gw:rl:{${org}}:w:${segment}`,
    limit: 1e12,
    windowMs: 60_000,
  })
  return [
    window('global'),
    window('user:u'),
    window('model:gpt-4o'),
    { kind: 'bucket', key: `gw:rl:{${org}}:b:p`, limit: 1e12, windowMs: 3_600_000, need: 1, take: 1 },
  ]
}

async function measure(store: LimiterStore): Promise<{ p50: number; p99: number; mean: number }> {
  for (let i = 0; i < WARMUP; i++) await store.decide(checksFor(i))
  const samples = new Float64Array(SAMPLES)
  for (let i = 0; i < SAMPLES; i++) {
    const checks = checksFor(i)
    const started = Bun.nanoseconds()
    await store.decide(checks)
    samples[i] = (Bun.nanoseconds() - started) / 1_000
  }
  samples.sort()
  const at = (q: number) => samples[Math.min(SAMPLES - 1, Math.floor(q * SAMPLES))] as number
  return { p50: at(0.5), p99: at(0.99), mean: samples.reduce((a, b) => a + b, 0) / SAMPLES }
}

const rows: string[] = []
const memory = await measure(new MemoryLimiterStore())
rows.push(
  `| in-process | ${memory.p50.toFixed(1)} | ${memory.p99.toFixed(1)} | ${memory.mean.toFixed(1)} | p99 < 50 µs: ${memory.p99 < 50 ? 'met' : 'NOT met'} |`,
)
const url = process.argv[2] ?? process.env.GW_TEST_REDIS_URL
if (url) {
  const redis = new Redis(url)
  const onRedis = await measure(new RedisLimiterStore(redis))
  rows.push(
    `| Redis (loopback) | ${onRedis.p50.toFixed(1)} | ${onRedis.p99.toFixed(1)} | ${onRedis.mean.toFixed(1)} | p99 < 1000 µs: ${onRedis.p99 < 1000 ? 'met' : 'NOT met'} |`,
  )
  redis.disconnect()
}
console.log(
  `Limiter decision (3 windows + 1 bucket), ${SAMPLES} sequential samples after ${WARMUP} warm-up, Bun ${Bun.version}\n`,
)
console.log('| store | p50 µs | p99 µs | mean µs | target |')
console.log('|---|---|---|---|---|')
for (const row of rows) console.log(row)
