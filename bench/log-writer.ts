/**
 * What the request log's writer thread spends on one record, by the size of the prompt: the security
 * scan of the request body, the PII redaction of both bodies, and the batch's transaction (record,
 * bodies, flags, credits) in SQLite, as `writeEntries` does it with an organisation's default policy
 * (bodies kept, redacted). One writer thread keeps up with 1 / (time a record) requests a second;
 * past that, records queue and, once the queue is full, are dropped (counted and logged).
 *
 *   bun bench/log-writer.ts
 *
 * Prints a Markdown table. The overhead suite's calls carry a two-word prompt, so this is where the
 * cost of real prompts shows.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../src/config'
import { newRequestId } from '../src/gateway/request-id'
import type { WritableEntry } from '../src/gateway/request-log/request-log'
import { writeEntries } from '../src/gateway/request-log/writer'
import { redactPii } from '../src/security/pii'
import { scanRequestBody } from '../src/security/scan'
import { openDatabase } from '../src/store/database'
import { migrate } from '../src/store/migrate'
import { createStore } from '../src/store/store'
import { requestRecord } from '../test/support/records'
import { table } from './overhead/report'

const PROMPT_KB = [1, 8, 32, 64]
const BATCH = 50
const BATCHES = 30
const WARMUP_BATCHES = 5
/** Prose with the digits and punctuation of ordinary text, none of it personal data. */
const PROSE = 'The quarterly report covers 12 regions, 404 stores and the plans for next year; summarise it. '
const ANSWER = JSON.stringify({ choices: [{ message: { role: 'assistant', content: PROSE.repeat(8) } }] })

const dir = mkdtempSync(join(tmpdir(), 'gw-bench-writer-'))
const db = await openDatabase(loadConfig({ GW_DATABASE_URL: `sqlite:${join(dir, 'gw.db')}` }))
await migrate(db)
const store = createStore(db)
const orgId = crypto.randomUUID()
await store.organizations.create({ id: orgId, name: 'bench', tier: 'enterprise', creditBalanceNano: 1e15, createdAt: new Date() })
const write = writeEntries(store)

function entry(requestBody: string): WritableEntry {
  return {
    record: requestRecord({ id: newRequestId(), orgId, ptb: true, costNano: 2_000_000, createdAt: new Date() }),
    bodies: { request: requestBody, response: ANSWER, truncated: false, policy: { store: true, redact: true } },
  }
}

/** Mean microseconds of `work` over `runs` runs, after a few unmeasured ones. */
function microseconds(runs: number, work: () => unknown): number {
  for (let i = 0; i < 5; i++) work()
  const started = Bun.nanoseconds()
  for (let i = 0; i < runs; i++) work()
  return (Bun.nanoseconds() - started) / 1_000 / runs
}

const rows: string[][] = []
for (const kb of PROMPT_KB) {
  const prompt = PROSE.repeat(Math.ceil((kb * 1024) / PROSE.length)).slice(0, kb * 1024)
  const requestBody = JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: prompt }] })
  const scan = microseconds(100, () => scanRequestBody(requestBody))
  const redact = microseconds(100, () => {
    redactPii(requestBody)
    redactPii(ANSWER)
  })
  let measured = 0
  for (let i = 0; i < WARMUP_BATCHES + BATCHES; i++) {
    const batch = Array.from({ length: BATCH }, () => entry(requestBody))
    const started = Bun.nanoseconds()
    await write(batch)
    if (i >= WARMUP_BATCHES) measured += Bun.nanoseconds() - started
  }
  const perRecord = measured / 1_000 / (BATCHES * BATCH)
  rows.push([`${kb} KB`, scan.toFixed(0), redact.toFixed(0), perRecord.toFixed(0), String(Math.floor(1e6 / perRecord))])
}
await db.close()
rmSync(dir, { recursive: true, force: true })

console.log(
  `Request-log writer, SQLite, batches of ${BATCH} (${BATCHES} timed after ${WARMUP_BATCHES}); bodies kept and redacted`,
)
console.log(`Bun ${Bun.version}, ${cpus().length} cores (${cpus()[0]?.model.trim()})\n`)
console.log(
  table(['prompt', 'scan µs', 'redaction of both bodies µs', 'whole batch, µs a record', 'records a second, one writer'], rows),
)
