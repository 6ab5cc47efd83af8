/**
 * Request queries and analytics over a large request log, through the real
 * HTTP app: a fresh database is opened and migrated the way `gw serve` does it, an organisation is
 * bootstrapped through the real services, 1,000,000 request records are generated for it (plus a
 * tenth as many for a second organisation, interleaved in time) with a seeded PRNG, and each query
 * is sent to `app.handle` with the organisation's API key: 1 warm-up and 10 timed runs, median and max.
 *
 *   bun bench/traffic.ts [--rows=1000000] [--keep] [sqlite] [postgres://postgres@127.0.0.1:5432/gw_bench_traffic]
 *
 * Each target is `sqlite` (a new file bench/.work/traffic.db) or a Postgres URL whose database name
 * starts with `gw_bench` (dropped and created anew; dropped again at the end unless --keep). No
 * target means `sqlite`. The row count also comes from GW_BENCH_ROWS.
 *
 * Prints Markdown tables; targets: first page of an indexed filter (model and a one-week
 * range) under 100 ms, a count under 300 ms, a metrics series over the whole set under 1 s. Every
 * answer is checked against what the generator counted. Each dialect is measured as loaded and
 * again after ANALYZE (Postgres: VACUUM ANALYZE requests), as an operator would run it; the plans
 * of the target queries (EXPLAIN QUERY PLAN / EXPLAIN ANALYZE) are printed after the tables.
 */
import { rmSync, statSync } from 'node:fs'
import { cpus, release, totalmem } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import postgres from 'postgres'
import { type App, createApp } from '../src/app'
import { loadConfig } from '../src/config'
import { openRuntime, type Runtime } from '../src/runtime'
import { createServices } from '../src/services'
import type { Database } from '../src/store/database'
import type { RequestRecord } from '../src/store/repositories/requests'

const { values: options, positionals } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    rows: { type: 'string', default: process.env.GW_BENCH_ROWS ?? '1000000' },
    seed: { type: 'string', default: '20261122' },
    keep: { type: 'boolean', default: false },
  },
  allowPositionals: true,
})
const ROWS = Number(options.rows)
if (!Number.isSafeInteger(ROWS) || ROWS < 1000) throw new Error('--rows must be an integer of at least 1000')
const OTHER_ROWS = Math.round(ROWS / 10)
const SEED = Number(options.seed)
const CHUNK = 20_000
const WARMUP = 1
const RUNS = 10
const WORK_DIR = join(import.meta.dir, '.work')

const DAY = 86_400_000
const DATA_END = Date.UTC(2026, 10, 1)
const DATA_START = DATA_END - 90 * DAY
/** The one-week range of the target filter: days 42 to 49 of the 90. */
const WEEK_START = DATA_START + 42 * DAY
const WEEK_END = WEEK_START + 7 * DAY

/** sfc32: small, fast and seeded, so every run generates the same records. */
function prng(seed: number): () => number {
  let a = 0x9e3779b9
  let b = 0x243f6a88
  let c = 0xb7e15162
  let d = seed >>> 0
  const next = () => {
    a >>>= 0
    b >>>= 0
    c >>>= 0
    d >>>= 0
    const t = (((a + b) >>> 0) + d) >>> 0
    d = (d + 1) >>> 0
    a = b ^ (b >>> 9)
    b = (c + (c << 3)) >>> 0
    c = (c << 21) | (c >>> 11)
    c = (c + t) >>> 0
    return t / 4294967296
  }
  for (let i = 0; i < 16; i++) next()
  return next
}

/** Models by share of traffic (the first is the busiest: the target filter uses it, the worst case). */
const MODELS = [
  { model: 'gpt-4o-mini', provider: 'openai', weight: 30, inNano: 150, outNano: 600 },
  { model: 'claude-sonnet-4-5', provider: 'anthropic', weight: 18, inNano: 3000, outNano: 15000 },
  { model: 'gpt-4o', provider: 'openai', weight: 12, inNano: 2500, outNano: 10000 },
  { model: 'claude-haiku-4-5', provider: 'anthropic', weight: 10, inNano: 1000, outNano: 5000 },
  { model: 'gpt-4.1', provider: 'openai', weight: 8, inNano: 2000, outNano: 8000 },
  { model: 'gpt-4.1-mini', provider: 'openai', weight: 7, inNano: 400, outNano: 1600 },
  { model: 'o3-mini', provider: 'openai', weight: 5, inNano: 1100, outNano: 4400 },
  { model: 'claude-opus-4-1', provider: 'anthropic', weight: 4, inNano: 15000, outNano: 75000 },
  { model: 'gemini-2.5-flash', provider: 'openrouter', weight: 3, inNano: 300, outNano: 2500 },
  { model: 'llama-3.3-70b', provider: 'openrouter', weight: 3, inNano: 600, outNano: 600 },
] as const
const TARGET_MODEL = MODELS[0].model
const MODEL_WEIGHT_TOTAL = MODELS.reduce((n, m) => n + m.weight, 0)
const ENVIRONMENTS = ['production', 'staging', 'development'] as const
const FEATURES = ['chat', 'search', 'summarise', 'classify', 'extract', 'translate', 'agent', 'code'] as const
const COUNTRIES = ['US', 'DE', 'GB', 'FR', 'IN', 'BR', 'JP', null] as const
const ERRORS = [
  { httpStatus: 429, error: 'rate limited by provider' },
  { httpStatus: 500, error: 'provider error' },
  { httpStatus: 502, error: 'upstream connection failed' },
  { httpStatus: 400, error: 'invalid request' },
] as const

/** What the generator knows the answers to be, for the main organisation. */
interface Expected {
  total: number
  weekOfTargetModel: number
  newestOfTargetModelInWeek: number
  perDay: Map<number, number>
  perModel: Map<string, number>
  costNano: number
}

function uuid(random: () => number): string {
  const hex = (n: number) =>
    Math.floor(n * 4294967296)
      .toString(16)
      .padStart(8, '0')
  const s = hex(random()) + hex(random()) + hex(random()) + hex(random())
  const variant = '89ab'[Math.floor(random() * 4)] as string
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-4${s.slice(13, 16)}-${variant}${s.slice(17, 20)}-${s.slice(20, 32)}`
}

/** `total` records in time order (as a gateway writes them), each organisation's share exact. */
function* generate(mainOrg: string, otherOrg: string, expected: Expected): Generator<RequestRecord[]> {
  const random = prng(SEED)
  const total = ROWS + OTHER_ROWS
  const span = DATA_END - DATA_START
  let chunk: RequestRecord[] = []
  for (let k = 0; k < total; k++) {
    const main = Math.floor(((k + 1) * ROWS) / total) > Math.floor((k * ROWS) / total)
    const at = DATA_START + Math.floor(((k + random()) * span) / total)
    let pick = random() * MODEL_WEIGHT_TOTAL
    let spec: (typeof MODELS)[number] = MODELS[0]
    for (const m of MODELS) {
      spec = m
      pick -= m.weight
      if (pick < 0) break
    }
    const failed = random() < 0.04
    const failure = ERRORS[Math.floor(random() * ERRORS.length)] as (typeof ERRORS)[number]
    const streamed = random() < 0.6
    const latencyMs = Math.round(150 + -Math.log(1 - random()) * 1200)
    const promptTokens = failed ? null : Math.round(50 + random() * random() * 4000)
    const completionTokens = failed ? null : Math.round(10 + random() * 1000)
    const cacheReadTokens = failed || random() > 0.2 ? null : Math.round((promptTokens ?? 0) * random())
    const costNano =
      promptTokens === null || completionTokens === null ? null : promptTokens * spec.inNano + completionTokens * spec.outNano
    const withProperties = random() < 0.6
    const user = random() < 0.9 ? `user-${Math.floor(random() * 2000)}` : null
    const record: RequestRecord = {
      id: uuid(random),
      orgId: main ? mainOrg : otherOrg,
      apiKeyId: `bench-key-${Math.floor(random() * 5)}`,
      userId: user,
      sessionId: random() < 0.5 ? `sess-${Math.floor(random() * 50_000)}` : null,
      customerId: null,
      stripeCustomerId: null,
      memberId: null,
      properties: withProperties
        ? {
            environment: ENVIRONMENTS[Math.floor(random() * ENVIRONMENTS.length)] as string,
            feature: FEATURES[Math.floor(random() * FEATURES.length)] as string,
          }
        : null,
      provider: spec.provider,
      model: spec.model,
      path: spec.provider === 'anthropic' ? '/v1/messages' : '/v1/chat/completions',
      gatewayMode: random() < 0.1 ? 'translated' : 'passthrough',
      translationWarning: null,
      status: failed ? 'error' : 'success',
      httpStatus: failed ? failure.httpStatus : 200,
      latencyMs,
      timeToFirstTokenMs: streamed && !failed ? Math.round(latencyMs * (0.1 + random() * 0.3)) : null,
      promptTokens,
      completionTokens,
      cacheReadTokens,
      cacheWriteTokens: null,
      totalTokens: promptTokens === null || completionTokens === null ? null : promptTokens + completionTokens,
      costNano,
      costNote: costNano === null ? 'no usage reported' : null,
      priceSource: costNano === null ? null : 'builtin',
      estimatedCostNano: null,
      ptb: random() < 0.05,
      country: COUNTRIES[Math.floor(random() * COUNTRIES.length)] ?? null,
      attempts: null,
      cached: false,
      fallbackChainId: null,
      cacheSavedNano: null,
      downgradedFrom: null,
      creditsRemainingNano: null,
      error: failed ? failure.error : null,
      createdAt: new Date(at),
    }
    if (main) {
      expected.total += 1
      const day = Math.floor(at / DAY) * DAY
      expected.perDay.set(day, (expected.perDay.get(day) ?? 0) + 1)
      expected.perModel.set(spec.model, (expected.perModel.get(spec.model) ?? 0) + 1)
      expected.costNano += costNano ?? 0
      if (spec.model === TARGET_MODEL && at >= WEEK_START && at < WEEK_END) {
        expected.weekOfTargetModel += 1
        expected.newestOfTargetModelInWeek = Math.max(expected.newestOfTargetModelInWeek, at)
      }
    }
    chunk.push(record)
    if (chunk.length === CHUNK) {
      yield chunk
      chunk = []
    }
  }
  if (chunk.length > 0) yield chunk
}

interface Captured {
  sql: string
  params: unknown[]
}

/** The statements on `requests` that `work` runs, read from drizzle's query logger (swapped in for the call). */
async function captureQueries<T>(db: Database, work: () => Promise<T>): Promise<{ result: T; queries: Captured[] }> {
  const session = (db.orm as unknown as { session?: { logger?: { logQuery(sql: string, params: unknown[]): void } } }).session
  const queries: Captured[] = []
  const before = session?.logger
  if (session)
    session.logger = {
      logQuery: (sql, params) => {
        if (/from "requests"/.test(sql)) queries.push({ sql, params })
      },
    }
  try {
    return { result: await work(), queries }
  } finally {
    if (session) session.logger = before
  }
}

interface Case {
  name: string
  path: string
  body: unknown
  /** Milliseconds, with the words for the table; absent: informational. */
  target?: { ms: number; label: string }
  /** Returns what was wrong with the answer, or undefined. */
  check: (data: unknown) => string | undefined
}

const weekFilter = {
  operator: 'and',
  left: { request: { model: { equals: TARGET_MODEL } } },
  right: {
    operator: 'and',
    left: { request: { created_at: { gte: new Date(WEEK_START).toISOString() } } },
    right: { request: { created_at: { lt: new Date(WEEK_END).toISOString() } } },
  },
}
const wholeSet = {
  timeFilter: { start: new Date(DATA_START).toISOString(), end: new Date(DATA_END - 1).toISOString() },
  dbIncrement: 'day',
  timeZoneDifference: 0,
}

function cases(expected: Expected): Case[] {
  const countCheck = (want: number) => (data: unknown) => {
    const n = (data as { count: number }).count
    return n === want ? undefined : `${n}, expected ${want}`
  }
  const seriesCheck = (field: 'count' | 'cost') => (data: unknown) => {
    const rows = data as Array<{ time: string; count?: number; cost?: number }>
    if (rows.length !== 90) return `${rows.length} buckets, expected 90`
    if (field === 'count') {
      for (const row of rows) {
        const want = expected.perDay.get(Date.parse(`${row.time}Z`)) ?? 0
        if (row.count !== want) return `bucket ${row.time}: ${row.count}, expected ${want}`
      }
      return undefined
    }
    const sum = rows.reduce((n, r) => n + (r.cost ?? 0), 0)
    const want = expected.costNano / 1e9
    return Math.abs(sum - want) > 1e-6 * want ? `cost sum ${sum}, expected ${want}` : undefined
  }
  return [
    {
      name: `query: first page, model = ${TARGET_MODEL}, one week, limit 100`,
      path: '/v1/request/query',
      body: { filter: weekFilter, limit: 100 },
      target: { ms: 100, label: '< 100 ms' },
      check: (data) => {
        const rows = (data as { requests: Array<{ model: string; createdAt: string }> }).requests
        if (rows.length !== Math.min(100, expected.weekOfTargetModel)) return `${rows.length} rows`
        const times = rows.map((r) => Date.parse(r.createdAt))
        if (rows.some((r) => r.model !== TARGET_MODEL)) return 'a row of another model'
        if (times.some((t, i) => t < WEEK_START || t >= WEEK_END || (i > 0 && t > (times[i - 1] as number))))
          return 'a row out of range or out of order'
        if (times[0] !== expected.newestOfTargetModelInWeek) return 'the first row is not the newest'
        return undefined
      },
    },
    {
      name: `count: model = ${TARGET_MODEL}, one week`,
      path: '/v1/request/count/query',
      body: { filter: weekFilter },
      target: { ms: 300, label: '< 300 ms' },
      check: countCheck(expected.weekOfTargetModel),
    },
    {
      name: 'count: no filter (whole organisation)',
      path: '/v1/request/count/query',
      body: {},
      target: { ms: 300, label: '< 300 ms' },
      check: countCheck(expected.total),
    },
    {
      name: 'metrics/requestOverTime: 90 days by day',
      path: '/v1/metrics/requestOverTime',
      body: wholeSet,
      target: { ms: 1000, label: '< 1 s' },
      check: seriesCheck('count'),
    },
    {
      name: 'metrics/costOverTime: 90 days by day',
      path: '/v1/metrics/costOverTime',
      body: wholeSet,
      target: { ms: 1000, label: '< 1 s' },
      check: seriesCheck('cost'),
    },
    {
      name: 'metrics/quantiles: 90 days',
      path: '/v1/metrics/quantiles',
      body: wholeSet,
      check: (data) => {
        const q = (data as { latencyMs: { p50: number | null; p99: number | null } }).latencyMs
        return q.p50 !== null && q.p99 !== null && q.p50 <= q.p99 ? undefined : 'no latency quantiles'
      },
    },
    {
      name: 'metrics/models: 90 days',
      path: '/v1/metrics/models',
      body: wholeSet,
      check: (data) => {
        for (const row of data as Array<{ key: string; count: number }>) {
          if (row.count !== expected.perModel.get(row.key)) return `${row.key}: ${row.count}`
        }
        return (data as unknown[]).length === expected.perModel.size ? undefined : 'models missing'
      },
    },
  ]
}

interface Timing {
  name: string
  median: number
  max: number
  target?: Case['target']
  problem?: string
  queries: Captured[]
}

async function call(app: App, apiKey: string, item: Case): Promise<{ ms: number; data: unknown }> {
  const started = Bun.nanoseconds()
  const response = await app.handle(
    new Request(`http://localhost${item.path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(item.body),
    }),
  )
  const text = await response.text()
  const ms = (Bun.nanoseconds() - started) / 1e6
  if (response.status !== 200) throw new Error(`${item.path}: ${response.status} ${text.slice(0, 300)}`)
  return { ms, data: (JSON.parse(text) as { data: unknown }).data }
}

async function measure(runtime: Runtime, app: App, apiKey: string, expected: Expected): Promise<Timing[]> {
  const out: Timing[] = []
  for (const item of cases(expected)) {
    let problem: string | undefined
    let queries: Captured[] = []
    for (let i = 0; i < WARMUP; i++) {
      const captured = await captureQueries(runtime.db, () => call(app, apiKey, item))
      queries = captured.queries
      problem = item.check(captured.result.data)
    }
    const samples: number[] = []
    for (let i = 0; i < RUNS; i++) {
      const { ms, data } = await call(app, apiKey, item)
      samples.push(ms)
      problem ??= item.check(data)
    }
    samples.sort((a, b) => a - b)
    const median = ((samples[(RUNS - 1) >> 1] as number) + (samples[RUNS >> 1] as number)) / 2
    out.push({ name: item.name, median, max: samples[RUNS - 1] as number, target: item.target, problem, queries })
  }
  return out
}

function table(timings: Timing[]): string {
  const lines = ['| query | median ms | max ms | target | answer |', '|---|---|---|---|---|']
  for (const t of timings) {
    const verdict = t.target ? `${t.target.label}: ${t.median < t.target.ms ? 'met' : 'NOT met'}` : '(informational)'
    lines.push(`| ${t.name} | ${t.median.toFixed(1)} | ${t.max.toFixed(1)} | ${verdict} | ${t.problem ?? 'checked'} |`)
  }
  return lines.join('\n')
}

/** EXPLAIN QUERY PLAN as an indented tree. */
async function sqlitePlan(db: Database, q: Captured): Promise<string> {
  const rows = await db.query<{ id: number; parent: number; detail: string }>(`EXPLAIN QUERY PLAN ${q.sql}`, q.params)
  const depth = new Map<number, number>([[0, 0]])
  return rows
    .map((r) => {
      const d = (depth.get(r.parent) ?? 0) + 1
      depth.set(r.id, d)
      return `${'  '.repeat(d - 1)}${r.detail}`
    })
    .join('\n')
}

async function postgresPlan(client: postgres.Sql, q: Captured): Promise<string> {
  const rows = await client.unsafe(`EXPLAIN (ANALYZE, BUFFERS) ${q.sql}`, q.params as never[])
  return rows.map((r) => String((r as Record<string, unknown>)['QUERY PLAN'])).join('\n')
}

const mib = (bytes: number) => `${(bytes / 1048576).toFixed(0)} MiB`

async function bench(target: string): Promise<void> {
  const isSqlite = target === 'sqlite'
  let url = target
  let admin: postgres.Sql | undefined
  let dbName = ''
  const sqlitePath = join(WORK_DIR, 'traffic.db')
  if (isSqlite) {
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${sqlitePath}${suffix}`, { force: true })
    url = `sqlite:${sqlitePath}`
  } else {
    const parsed = new URL(target)
    dbName = decodeURIComponent(parsed.pathname.slice(1))
    if (!/^gw_bench\w*$/.test(dbName)) throw new Error(`the Postgres database must be named gw_bench...: ${dbName}`)
    parsed.pathname = '/postgres'
    admin = postgres(parsed.toString(), { max: 1, onnotice: () => undefined })
    await admin.unsafe(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`)
    await admin.unsafe(`CREATE DATABASE "${dbName}"`)
  }
  const runtime = await openRuntime(
    loadConfig({
      GW_DATABASE_URL: url,
      GW_DATA_DIR: WORK_DIR,
      GW_SECRET: 'bench-secret-bench-secret-bench-secret-0123',
      GW_LOG_LEVEL: 'warn',
    }),
    { migrate: true },
  )
  const explain = isSqlite ? undefined : postgres(target, { max: 1, onnotice: () => undefined })
  try {
    const { db, deps } = runtime
    const services = createServices(deps)
    const app = createApp(deps, services)
    const main = await services.organizations.bootstrap({ orgName: 'bench', email: 'bench@example.test', tier: 'growth' })
    const other = await services.organizations.bootstrap({ orgName: 'other', email: 'other@example.test', tier: 'growth' })
    const version = isSqlite
      ? `SQLite ${(await db.query<{ v: string }>('select sqlite_version() as v'))[0]?.v}`
      : String((await db.query<{ v: string }>('select version() as v'))[0]?.v).replace(/ on .*/, '')

    const expected: Expected = {
      total: 0,
      weekOfTargetModel: 0,
      newestOfTargetModelInWeek: 0,
      perDay: new Map(),
      perModel: new Map(),
      costNano: 0,
    }
    let started = performance.now()
    let written = 0
    for (const chunk of generate(main.orgId, other.orgId, expected)) {
      await deps.store.transaction((tx) => tx.requests.insertMany(chunk))
      written += chunk.length
      if (written % 200_000 < CHUNK) process.stderr.write(`${version}: ${written} rows\n`)
    }
    const generateSeconds = (performance.now() - started) / 1000

    let autoAnalyzed = ''
    if (!isSqlite) {
      const [stat] = await db.query<{ a: unknown; v: unknown }>(
        "select last_autoanalyze as a, last_autovacuum as v from pg_stat_user_tables where relname = 'requests'",
      )
      autoAnalyzed = `; autovacuum before the as-loaded runs: analyze ${stat?.a ?? 'never'}, vacuum ${stat?.v ?? 'never'}`
    }
    const asLoaded = await measure(runtime, app, main.apiKey, expected)

    started = performance.now()
    if (isSqlite) {
      await db.execute('ANALYZE')
      await db.execute('PRAGMA wal_checkpoint(TRUNCATE)')
    } else {
      await db.execute('VACUUM ANALYZE requests')
      await db.execute('ANALYZE')
    }
    const analyzeSeconds = (performance.now() - started) / 1000
    const analyzed = await measure(runtime, app, main.apiKey, expected)

    let size: string
    if (isSqlite) {
      size = `database file ${mib(statSync(sqlitePath).size)}`
    } else {
      const [s] = await db.query<{ d: string; t: string; i: string }>(
        "select pg_database_size(current_database()) as d, pg_table_size('requests') as t, pg_indexes_size('requests') as i",
      )
      size = `database ${mib(Number(s?.d))}; requests table ${mib(Number(s?.t))}, its indexes ${mib(Number(s?.i))}`
    }

    console.log(`\n## ${version}\n`)
    console.log(
      `${ROWS} request records for the measured organisation + ${OTHER_ROWS} for another, over 90 days; ` +
        `generated and inserted in ${generateSeconds.toFixed(1)} s (${Math.round((ROWS + OTHER_ROWS) / generateSeconds)} rows/s, ` +
        `transactions of ${CHUNK}); ${size}.\n`,
    )
    console.log(`### As loaded (no ANALYZE${autoAnalyzed})\n`)
    console.log(table(asLoaded))
    console.log(`\n### After ${isSqlite ? 'ANALYZE' : 'VACUUM ANALYZE requests; ANALYZE'} (${analyzeSeconds.toFixed(1)} s)\n`)
    console.log(table(analyzed))
    console.log(`\n### Plans of the target queries (after ${isSqlite ? 'ANALYZE' : 'VACUUM ANALYZE'})\n`)
    for (const t of analyzed.filter((x) => x.target)) {
      for (const q of t.queries) {
        const plan = explain ? await postgresPlan(explain, q) : await sqlitePlan(db, q)
        console.log(`${t.name}:\n\n\`\`\`sql\n${q.sql}\n\`\`\`\n\n\`\`\`\n${plan}\n\`\`\`\n`)
      }
    }
  } finally {
    await explain?.end({ timeout: 5 })
    await runtime.close()
    if (admin) {
      if (!options.keep) await admin.unsafe(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`)
      await admin.end({ timeout: 5 })
    }
    if (isSqlite && !options.keep) for (const suffix of ['', '-wal', '-shm']) rmSync(`${sqlitePath}${suffix}`, { force: true })
  }
}

console.log(
  `# Traffic queries over the request log\n\n` +
    `Through the HTTP app (app.handle), ${WARMUP} warm-up + ${RUNS} timed runs per query, median and max; ` +
    `Bun ${Bun.version}, ${cpus().length} cores, ${mib(totalmem())} memory, Linux ${release()}; seed ${SEED}.`,
)
for (const target of positionals.length > 0 ? positionals : ['sqlite']) await bench(target)
