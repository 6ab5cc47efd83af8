/**
 * Does request-record retention keep the database's size flat? Writes request records continuously, as
 * the request log's writer does (`writeEntries`: record, redacted bodies, security flag), under a
 * simulated clock that advances an hour per round, and runs the retention job once a round, as
 * `gw serve` runs it hourly, concurrently with the writes. Samples the size of the log tables at the
 * end of each simulated day, with retention on and, for contrast, off.
 *
 *   bun bench/retention-soak.ts [sqlite|postgres] [on|off|catch-up] [days] [records a day] [batch rows|-] [daily]
 *
 * Postgres is the server of GW_TEST_DATABASE_URL, where a scratch database is made and dropped. Sizes: SQLite, the file (after a WAL checkpoint) and the pages in use
 * (`page_count - freelist_count`: SQLite reuses freed pages without VACUUM); Postgres,
 * `pg_total_relation_size` of the log tables (tables, indexes, TOAST), with autovacuum as configured.
 * Prints Markdown: the samples, then the job's batches and the writer's batches while it ran.
 */
import { statSync } from 'node:fs'
import { cpus } from 'node:os'
import { newRequestId } from '../src/gateway/request-id'
import type { WritableEntry } from '../src/gateway/request-log/request-log'
import { writeEntries } from '../src/gateway/request-log/writer'
import { silentLogger } from '../src/log'
import { RetentionJob } from '../src/modules/organization/retention'
import { DAY_MS, RecordRetention } from '../src/spend/retention'
import { createStore, type Store } from '../src/store/store'
import { openTestDatabase } from '../test/support/harness'
import { requestRecord } from '../test/support/records'
import { table } from './overhead/report'

const dialect = (process.argv[2] ?? 'sqlite') as 'sqlite' | 'postgres'
/** on: retention from the start; off: none; catch-up: none for the days, then on, deleting the backlog while writes go on. */
const mode = (process.argv[3] ?? 'on') as 'on' | 'off' | 'catch-up'
const retentionOn = mode === 'on'
const DAYS = Number(process.argv[4] ?? 21)
const PER_DAY = Number(process.argv[5] ?? 12_000)
/** Rows a job batch deletes at most; the job's own default for the dialect when not given. */
const BATCH_ROWS = process.argv[6] === undefined || process.argv[6] === '-' ? undefined : Number(process.argv[6])
/**
 * Postgres: `daily` runs VACUUM (ANALYZE) on the log tables at the end of each simulated day, standing in
 * for autovacuum, which a compressed day gives no time to run (and which the test server has off).
 */
const VACUUM_DAILY = process.argv[7] === 'daily'
const RETENTION_DAYS = 7
const WRITE_BATCH = 50
const LOG_TABLES = [
  'requests',
  'request_bodies',
  'request_flags',
  'request_feedback',
  'request_scores',
  'request_log_rejects',
  'budget_actions',
  'mcp_tool_calls',
  'a2a_calls',
]
/** About 1 KB each way, with an email address, so each record has a body, redacted, and a security flag. */
const PROMPT = JSON.stringify({
  model: 'gpt-4o',
  messages: [
    {
      role: 'user',
      content: `Write to jane@example.com about the plan. ${'The quarterly report covers 12 regions. '.repeat(24)}`,
    },
  ],
})
const ANSWER = JSON.stringify({ choices: [{ message: { role: 'assistant', content: 'Done. '.repeat(170) } }] })

const T0 = Date.UTC(2026, 0, 1)
let simNow = T0

if (dialect === 'postgres' && !process.env.GW_TEST_DATABASE_URL)
  throw new Error('set GW_TEST_DATABASE_URL to a Postgres server: a scratch database is made there')
const scratch = await openTestDatabase(dialect)
const { db, location } = scratch
const store = createStore(db, { now: () => simNow })
const orgId = crypto.randomUUID()
await store.organizations.create({ id: orgId, name: 'bench', tier: 'enterprise', creditBalanceNano: 0, createdAt: new Date(T0) })

/** Each batch of the job, timed around its transaction: how long it held the database (and, on SQLite, the event loop). */
const batches: Array<{ ms: number; wallMs: number; rows: number }> = []
const timed: Store = {
  ...store,
  transaction: async (work) => {
    const asked = performance.now()
    let ms = 0
    const result = await store.transaction(async (tx) => {
      const began = performance.now()
      const done = await work(tx)
      ms = performance.now() - began
      return done
    })
    if (typeof result === 'number') batches.push({ ms, wallMs: performance.now() - asked, rows: result })
    return result
  },
}
const jobWith = (days: number | undefined) =>
  new RetentionJob(
    { store: timed, retention: new RecordRetention(store, days), log: silentLogger, now: () => simNow },
    { batchRows: BATCH_ROWS },
  )
const job = jobWith(retentionOn ? RETENTION_DAYS : undefined)
const write = writeEntries(store, () => simNow)

const entry = (createdAt: number): WritableEntry => ({
  record: requestRecord({ id: newRequestId(), orgId, ptb: false, createdAt: new Date(createdAt) }),
  bodies: { request: PROMPT, response: ANSWER, truncated: false, policy: { store: true, redact: true } },
})

async function sizes(): Promise<{ fileMb: number; usedMb: number; records: number }> {
  const [counted] = await db.query<{ n: number | string }>('SELECT count(*) AS n FROM requests')
  const records = Number(counted?.n ?? 0)
  if (dialect === 'postgres') {
    const list = LOG_TABLES.map((_, i) => `$${i + 1}`).join(', ')
    const [row] = await db.query<{ bytes: string | number }>(
      `SELECT sum(pg_total_relation_size(c.oid)) AS bytes FROM pg_class c WHERE c.relkind = 'r' AND c.relname IN (${list})`,
      LOG_TABLES,
    )
    const mb = Number(row?.bytes ?? 0) / 2 ** 20
    return { fileMb: mb, usedMb: mb, records }
  }
  await db.execute('PRAGMA wal_checkpoint(TRUNCATE)')
  const pragma = async (name: string) =>
    Number(Object.values((await db.query<Record<string, number>>(`PRAGMA ${name}`))[0] ?? {})[0])
  const [pages, free, pageSize] = [await pragma('page_count'), await pragma('freelist_count'), await pragma('page_size')]
  return {
    fileMb: statSync(location.kind === 'sqlite' ? location.path : '').size / 2 ** 20,
    usedMb: ((pages - free) * pageSize) / 2 ** 20,
    records,
  }
}

const quantile = (values: readonly number[], q: number) => {
  if (values.length === 0) return 0
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number
}

const samples: string[][] = []
/** The writer's batches over the simulated days (the job running hourly among them), and during a catch-up run. */
const writesSoak: number[] = []
const writesCatchUp: number[] = []
const perHour = Math.ceil(PER_DAY / 24)
const started = performance.now()
for (let day = 1; day <= DAYS; day++) {
  for (let hour = 0; hour < 24; hour++) {
    const hourStart = T0 + (day - 1) * DAY_MS + hour * 3_600_000
    simNow = hourStart
    const run = job.run()
    for (let i = 0; i < perHour; i += WRITE_BATCH) {
      const count = Math.min(WRITE_BATCH, perHour - i)
      const batch = Array.from({ length: count }, (_, k) => entry(hourStart + ((i + k) * 3_600_000) / perHour))
      simNow = hourStart + ((i + count) * 3_600_000) / perHour
      const at = performance.now()
      await write(batch)
      writesSoak.push(performance.now() - at)
    }
    await run
  }
  if (VACUUM_DAILY && dialect === 'postgres') await db.execute(`VACUUM (ANALYZE) ${LOG_TABLES.join(', ')}`)
  const size = await sizes()
  samples.push([
    String(day),
    size.records.toLocaleString('en'),
    size.fileMb.toFixed(1),
    size.usedMb.toFixed(1),
    ((performance.now() - started) / 1000).toFixed(0),
  ])
}

if (mode === 'catch-up') {
  // The operator sets the retention on a database that kept everything: one run deletes the backlog in
  // full batches, while the writer goes on writing, a batch every few milliseconds as a loaded gw does.
  batches.length = 0
  const hourStart = T0 + DAYS * DAY_MS
  simNow = hourStart
  let jobRunning = true
  const run = jobWith(RETENTION_DAYS)
    .run()
    .finally(() => {
      jobRunning = false
    })
  for (let i = 0; jobRunning; i += WRITE_BATCH) {
    const batch = Array.from({ length: WRITE_BATCH }, (_, k) => entry(hourStart + i + k))
    const at = performance.now()
    await write(batch)
    writesCatchUp.push(performance.now() - at)
    await Bun.sleep(5)
  }
  await run
  const size = await sizes()
  samples.push([
    `after catch-up (${RETENTION_DAYS} days kept)`,
    size.records.toLocaleString('en'),
    size.fileMb.toFixed(1),
    size.usedMb.toFixed(1),
    ((performance.now() - started) / 1000).toFixed(0),
  ])
}

const deleting = batches.filter((b) => b.rows > 0)
const deletedRows = deleting.reduce((sum, b) => sum + b.rows, 0)
const deletingMs = deleting.reduce((sum, b) => sum + b.ms, 0)
const held = deleting.map((b) => b.ms)
await scratch.close()

console.log(
  `Retention soak, ${dialect}, retention ${mode === 'off' ? 'off' : mode === 'on' ? `on (${RETENTION_DAYS} days)` : `off, then on (${RETENTION_DAYS} days) at the end`}: ${DAYS} simulated days, ${PER_DAY.toLocaleString('en')} records a day (${perHour} an hour, writer batches of ${WRITE_BATCH}), the job once a simulated hour${VACUUM_DAILY ? ', VACUUM (ANALYZE) of the log tables each simulated day' : ''}`,
)
console.log(`Bun ${Bun.version}, ${cpus().length} cores (${cpus()[0]?.model.trim()})\n`)
console.log(
  table(
    dialect === 'sqlite'
      ? ['day', 'records', 'file MB', 'pages in use MB', 'elapsed s']
      : ['day', 'records', 'log tables MB', 'elapsed s'],
    dialect === 'sqlite' ? samples : samples.map((row) => row.filter((_, i) => i !== 3)),
  ),
)
console.log()
console.log(
  table(
    [
      'job batches (deleting)',
      'rows deleted',
      'rows/s while deleting',
      'deleting batch held p50 / p99 / max ms',
      'any batch held max ms',
      'any batch wall max ms',
    ],
    [
      [
        `${batches.length} (${deleting.length})`,
        deletedRows.toLocaleString('en'),
        deletingMs > 0 ? Math.round(deletedRows / (deletingMs / 1000)).toLocaleString('en') : '-',
        `${quantile(held, 0.5).toFixed(1)} / ${quantile(held, 0.99).toFixed(1)} / ${Math.max(0, ...held).toFixed(1)}`,
        Math.max(0, ...batches.map((b) => b.ms)).toFixed(1),
        Math.max(0, ...batches.map((b) => b.wallMs)).toFixed(1),
      ],
    ],
  ),
)
console.log()
console.log(
  table(
    ['writer batches of 50', 'count', 'p50 ms', 'p99 ms', 'max ms'],
    (
      [
        ['over the simulated days', writesSoak],
        ['while the catch-up run deleted', writesCatchUp],
      ] as const
    )
      .filter(([, list]) => list.length > 0)
      .map(([name, list]) => [
        name,
        String(list.length),
        quantile(list, 0.5).toFixed(1),
        quantile(list, 0.99).toFixed(1),
        Math.max(0, ...list).toFixed(1),
      ]),
  ),
)
