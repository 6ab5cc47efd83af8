import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { randomUUID } from 'node:crypto'
import type { Logger } from '../src/log'
import { RetentionJob } from '../src/modules/organization/retention'
import { DAY_MS, RecordRetention } from '../src/spend/retention'
import type { Store } from '../src/store/store'
import { data, errorOf, putLimit } from './support/budgets'
import { type FakeProvider, providersAt, startFakeProvider } from './support/fake-provider'
import { createHarness, DIALECTS, type Harness, type HarnessOptions, loggedChat, type Org } from './support/harness'
import { requestRecord } from './support/records'

/**
 * Request-record retention: the operator's bound (GW_REQUEST_RETENTION_DAYS), an organisation's own
 * days within it (`POST /v1/organization/request-retention-config`), how budgets and retention hold
 * each other in, and the job that deletes records with what hangs off them, in bounded batches.
 */

/** 2026-03-20 12:00 UTC: the month window of a budget then started 19.5 days earlier. */
const T = Date.UTC(2026, 2, 20, 12)
const daysAgo = (days: number) => new Date(T - days * DAY_MS)

interface RetentionAnswer {
  days: number | null
  own: number | null
  operatorDays: number | null
  budgetWindowDays: number | null
}

let fake: FakeProvider
beforeAll(async () => {
  fake = await startFakeProvider()
})
afterAll(() => fake.close())

const harnesses: Harness[] = []
afterEach(async () => {
  for (const h of harnesses.splice(0).reverse()) await h.close()
})

/** Counts rows of a log table, of one organisation or of some requests. */
async function count(h: Harness, table: string, where: { orgId?: string; requestIds?: readonly string[] }): Promise<number> {
  if (where.requestIds) {
    if (where.requestIds.length === 0) return 0
    const list = where.requestIds.map((_, i) => `$${i + 1}`).join(', ')
    const [row] = await h.db.query<{ n: number | string }>(
      `SELECT count(*) AS n FROM ${table} WHERE request_id IN (${list})`,
      where.requestIds,
    )
    return Number(row?.n ?? 0)
  }
  const [row] = await h.db.query<{ n: number | string }>(`SELECT count(*) AS n FROM ${table} WHERE org_id = $1`, [where.orgId])
  return Number(row?.n ?? 0)
}

const DEPENDENTS = ['request_bodies', 'request_flags', 'request_feedback', 'request_scores'] as const
const DATED = ['request_log_rejects', 'budget_actions', 'mcp_tool_calls', 'a2a_calls'] as const

/**
 * Request records of an organisation at the given times, each with a body, a flag, a rating and two
 * scores, and a row of every dated log at the same time; written in chunks as the log's writer does.
 */
async function seed(store: Store, orgId: string, times: readonly Date[], costNano = 1_000_000): Promise<string[]> {
  const ids: string[] = []
  for (let from = 0; from < times.length; from += 1_000) {
    const chunk = times.slice(from, from + 1_000).map((createdAt) => ({ id: randomUUID(), createdAt }))
    ids.push(...chunk.map((c) => c.id))
    await store.transaction(async (tx) => {
      await tx.requests.insertMany(chunk.map(({ id, createdAt }) => requestRecord({ id, orgId, createdAt, costNano })))
      await tx.requestBodies.insertMany(
        chunk.map(({ id, createdAt }) => ({
          requestId: id,
          orgId,
          requestBody: '{"messages":[]}',
          responseBody: '{}',
          truncated: false,
          createdAt,
        })),
      )
      await tx.requestFlags.insertMany(
        chunk.map(({ id, createdAt }) => ({
          requestId: id,
          orgId,
          kind: 'pii' as const,
          category: 'email',
          occurrences: 1,
          createdAt,
        })),
      )
    })
    for (const { id, createdAt } of chunk.slice(0, 20)) {
      const org = store.org(orgId)
      await org.feedback.upsert({ requestId: id, rating: 1, actorId: null, createdAt })
      await org.annotations.score({ requestId: id, name: 'a', value: 1, actorId: null, createdAt })
      await org.annotations.score({ requestId: id, name: 'b', value: 0, actorId: null, createdAt })
      await store.requestRejects.add({ requestId: randomUUID(), orgId, error: 'x', record: '{}', createdAt })
      await store.budgetActions.add({
        id: randomUUID(),
        orgId,
        scope: 'org',
        scopeId: null,
        action: 'alert',
        requestId: id,
        model: 'gpt-4o',
        amountNano: 1,
        createdAt,
      })
      const call = { userId: null, apiKeyId: null, status: 'success' as const, latencyMs: 1, costNano: 0, error: null, createdAt }
      await store.mcpToolCalls.add({ ...call, id: randomUUID(), orgId, serverId: 's', serverName: 's', toolName: 't' })
      await store.a2aCalls.add({ ...call, id: randomUUID(), orgId, agentId: 'a', agentName: 'a', skill: null })
    }
  }
  return ids
}

const capture = () => {
  const lines: Array<{ message: string; fields?: Record<string, unknown> }> = []
  const at = (message: string, fields?: Record<string, unknown>) => lines.push({ message, fields })
  const log: Logger = { debugging: false, debug: at, info: at, warn: at, error: at }
  return { log, lines }
}

for (const dialect of DIALECTS) {
  describe(`request-record retention on ${dialect}`, () => {
    async function world(options: HarnessOptions = {}) {
      const h = await createHarness({ dialect, providers: providersAt(fake), now: () => T, ...options })
      harnesses.push(h)
      const org = await h.org('growth')
      return { h, org }
    }
    const settingsOf = async (h: Harness, org: Org) =>
      data<{ requestRetention: RetentionAnswer; name: string }>(
        await h.request('GET', '/v1/organization/settings', { token: org.ownerSession }),
      )
    const setRetention = (h: Harness, org: Org, body: unknown, token = org.ownerSession) =>
      h.request('POST', '/v1/organization/request-retention-config', { token, body })

    describe('the setting', () => {
      test("the operator's default, an organisation's own days within it, and back to the default", async () => {
        const { h, org } = await world({ requestRetentionDays: 90 })
        expect((await settingsOf(h, org)).requestRetention).toEqual({
          days: 90,
          own: null,
          operatorDays: 90,
          budgetWindowDays: null,
        })
        const set = await setRetention(h, org, { mode: 'days', days: 30 })
        expect(set.status).toBe(200)
        expect((await data<{ requestRetention: RetentionAnswer }>(set)).requestRetention).toEqual({
          days: 30,
          own: 30,
          operatorDays: 90,
          budgetWindowDays: null,
        })
        expect((await settingsOf(h, org)).requestRetention.own).toBe(30)
        await setRetention(h, org, { mode: 'days', days: 90 })
        expect((await settingsOf(h, org)).requestRetention.days).toBe(90)
        await setRetention(h, org, { mode: 'default' })
        expect((await settingsOf(h, org)).requestRetention).toMatchObject({ days: 90, own: null })
      })

      test('without an operator bound records are kept forever, and an organisation may still keep them for fewer days', async () => {
        const { h, org } = await world()
        expect((await settingsOf(h, org)).requestRetention).toEqual({
          days: null,
          own: null,
          operatorDays: null,
          budgetWindowDays: null,
        })
        expect((await setRetention(h, org, { mode: 'days', days: 3650 })).status).toBe(200)
        expect((await settingsOf(h, org)).requestRetention).toMatchObject({ days: 3650, own: 3650 })
      })

      test.each([
        ['a fraction', { mode: 'days', days: 7.5 }, 'days'],
        ['zero', { mode: 'days', days: 0 }, 'days'],
        ['a negative number', { mode: 'days', days: -3 }, 'days'],
        ['no days', { mode: 'days' }, 'days'],
        ['days with the default', { mode: 'default', days: 10 }, 'default'],
        ['an unknown mode', { mode: 'weeks', days: 2 }, 'mode'],
        ['above the largest', { mode: 'days', days: 3651 }, '3650'],
      ])('bad input (%s): 400 naming what is wrong, nothing stored', async (_name, body, named) => {
        const { h, org } = await world({ requestRetentionDays: 90 })
        await setRetention(h, org, { mode: 'days', days: 45 })
        const response = await setRetention(h, org, body)
        expect(response.status).toBe(400)
        expect((await errorOf(response)).message).toContain(named)
        expect((await settingsOf(h, org)).requestRetention.own).toBe(45)
      })

      test("more days than the operator's bound: 400 naming the bound, nothing stored", async () => {
        const { h, org } = await world({ requestRetentionDays: 90 })
        const response = await setRetention(h, org, { mode: 'days', days: 91 })
        expect(response.status).toBe(400)
        const { message } = await errorOf(response)
        expect(message).toContain('at most 90')
        expect(message).toContain('GW_REQUEST_RETENTION_DAYS')
        expect((await settingsOf(h, org)).requestRetention.own).toBeNull()
      })

      test('fewer days than the longest budget window: 400 naming the budget and its window, nothing stored', async () => {
        const { h, org } = await world({ requestRetentionDays: 90 })
        await putLimit(h, org, { scope: { kind: 'org' }, metric: 'usd', limit: 5, window: 'week' })
        const month = await putLimit(h, org, {
          scope: { kind: 'customer', id: 'acme' },
          metric: 'usd',
          limit: 5,
          window: 'month',
        })
        const response = await setRetention(h, org, { mode: 'days', days: 30 })
        expect(response.status).toBe(400)
        const { message } = await errorOf(response)
        expect(message).toContain(month.id)
        expect(message).toContain('month')
        expect(message).toContain('at least 31')
        expect((await settingsOf(h, org)).requestRetention).toMatchObject({ own: null, budgetWindowDays: 31 })
        expect((await setRetention(h, org, { mode: 'days', days: 31 })).status).toBe(200)
      })

      test("a Member or an API key cannot change it (403); another organisation's setting is untouched; the change is audited", async () => {
        const { h, org } = await world({ requestRetentionDays: 90 })
        const other = await h.org('growth')
        await setRetention(h, other, { mode: 'days', days: 60 })
        const member = await h.member(org.orgId, 'member')
        expect((await setRetention(h, org, { mode: 'days', days: 10 }, member.sessionToken)).status).toBe(403)
        expect((await setRetention(h, org, { mode: 'days', days: 10 }, org.apiKey)).status).toBe(403)
        expect((await h.request('POST', '/v1/organization/request-retention-config', { body: { mode: 'default' } })).status).toBe(
          401,
        )
        // A Member reads it (org.read).
        const seen = await h.request('GET', '/v1/organization/settings', { token: member.sessionToken })
        expect((await data<{ requestRetention: RetentionAnswer }>(seen)).requestRetention.own).toBeNull()

        expect((await setRetention(h, org, { mode: 'days', days: 10 })).status).toBe(200)
        expect((await settingsOf(h, other)).requestRetention.own).toBe(60)
        const entries = await h.store.org(org.orgId).audit.list()
        const changes = entries.filter((e) => e.action === 'POST /v1/organization/request-retention-config')
        expect(changes.map((e) => [e.outcome, e.target])).toContainEqual(['success', org.orgId])
        expect(changes.some((e) => e.outcome === 'failure')).toBe(true)
        expect((await h.store.org(other.orgId).audit.list()).filter((e) => e.action.includes('request-retention')).length).toBe(1)
      })
    })

    describe('budgets within the retention', () => {
      test('a budget window longer than the retention is refused (400, naming both), a shorter one is made', async () => {
        const { h, org } = await world({ requestRetentionDays: 90 })
        await setRetention(h, org, { mode: 'days', days: 7 })
        const refuse = async (path: string, body: Record<string, unknown>, named: string) => {
          const response = await h.request('PUT', path, { token: org.ownerSession, body })
          expect(response.status).toBe(400)
          const { message } = await errorOf(response)
          expect(message).toContain(named)
          expect(message).toContain('7 days')
        }
        await refuse('/v1/budget/window-limit', { scope: { kind: 'org' }, metric: 'usd', limit: 5, window: 'month' }, 'month')
        await refuse(
          '/v1/budget/window-limit',
          { scope: { kind: 'org' }, metric: 'usd', limit: 5, window: { seconds: 8 * 86_400 } },
          '691200 s',
        )
        await refuse('/v1/budget/customer', { customerId: 'acme', limit: 5 }, 'month')
        expect(await h.store.org(org.orgId).budgetLimits.list()).toEqual([])
        await putLimit(h, org, { scope: { kind: 'org' }, metric: 'usd', limit: 5, window: 'week' })
        await putLimit(h, org, { scope: { kind: 'org' }, maxUsd: 1, windowSeconds: 3600 }, '/v1/budget/velocity-limit')
        expect(await h.store.org(org.orgId).budgetLimits.list()).toHaveLength(2)
      })

      test("the operator's bound alone refuses a longer window", async () => {
        const { h, org } = await world({ requestRetentionDays: 5 })
        const response = await h.request('PUT', '/v1/budget/window-limit', {
          token: org.ownerSession,
          body: { scope: { kind: 'org' }, metric: 'requests', limit: 5, window: 'week' },
        })
        expect(response.status).toBe(400)
        await putLimit(h, org, { scope: { kind: 'org' }, metric: 'requests', limit: 5, window: 'day' })
      })

      test("an operator's bound shorter than an existing budget window: the records the window counts are kept, it is logged, and a restarted instance counts them", async () => {
        // The budget was made before the operator set the bound: a second instance over the same database has it.
        const first = await world()
        const limit = await putLimit(first.h, first.org, { scope: { kind: 'org' }, metric: 'usd', limit: 100, window: 'month' })
        const { orgId } = first.org
        const [beforeWindow] = await seed(first.h.store, orgId, [new Date(Date.UTC(2026, 1, 20))], 4_000_000)
        const [inWindowOld] = await seed(first.h.store, orgId, [new Date(Date.UTC(2026, 2, 2))], 1_000_000)
        const [recent] = await seed(first.h.store, orgId, [daysAgo(1)], 2_000_000)
        const { log, lines } = capture()
        const h = await createHarness({ dialect, database: first.h, now: () => T, requestRetentionDays: 3, log })
        harnesses.push(h)

        const run = await h.services.retention.run()
        expect(run.records).toBe(1)
        expect(await h.store.requests.get(orgId, beforeWindow as string)).toBeUndefined()
        expect(await h.store.requests.get(orgId, inWindowOld as string)).toBeDefined()
        expect(await h.store.requests.get(orgId, recent as string)).toBeDefined()
        const told = lines.filter((l) => l.message.startsWith('retention: records kept longer'))
        expect(told).toHaveLength(1)
        expect(told[0]?.fields).toMatchObject({ orgId, retentionDays: 3, budget: limit.id, keptFrom: '2026-03-01T00:00:00.000Z' })
        await h.services.retention.run()
        expect(lines.filter((l) => l.message.startsWith('retention: records kept longer'))).toHaveLength(1)

        // This instance's counters are new: they count the month from the log, all of it still there.
        const summary = await data<Array<{ id: string; spent: number }>>(
          await h.request('GET', '/v1/budget/summary', { token: first.org.ownerSession }),
        )
        expect(summary).toEqual([expect.objectContaining({ id: limit.id, spent: 0.003 })])
        expect((await settingsOf(h, first.org)).requestRetention).toEqual({
          days: 31,
          own: null,
          operatorDays: 3,
          budgetWindowDays: 31,
        })
      })
    })

    describe('the job', () => {
      test('deletes records past each organisation’s retention with what hangs off them, and nothing else', async () => {
        const { h, org: a } = await world({ requestRetentionDays: 60 })
        const b = await h.org('growth')
        const c = await h.org('growth')
        await setRetention(h, a, { mode: 'days', days: 10 })
        await setRetention(h, b, { mode: 'days', days: 30 })
        // c takes the operator's 60 days. Bodies are kept longer than any record here: they go with their records.
        for (const org of [a, b, c])
          await h.request('POST', '/v1/organization/body-retention-config', {
            token: org.ownerSession,
            body: { mode: 'days', days: 3650 },
          })
        const ages = [1, 9, 11, 29, 31, 59, 61, 400]
        const seeded = new Map<string, string[]>()
        for (const org of [a, b, c]) seeded.set(org.orgId, await seed(h.store, org.orgId, ages.map(daysAgo)))
        const kept = { [a.orgId]: 2, [b.orgId]: 4, [c.orgId]: 6 }

        const run = await h.services.retention.run()
        expect(run.records).toBe(6 + 4 + 2)
        expect(run.logs).toBe(4 * (6 + 4 + 2))
        for (const org of [a, b, c]) {
          const ids = seeded.get(org.orgId) as string[]
          const keep = kept[org.orgId] as number
          const stays = ids.slice(0, keep)
          const goes = ids.slice(keep)
          expect(await count(h, 'requests', { orgId: org.orgId })).toBe(keep)
          for (const id of stays) expect(await h.store.requests.get(org.orgId, id)).toBeDefined()
          for (const table of DEPENDENTS) {
            expect(await count(h, table, { requestIds: goes })).toBe(0)
            // Two scores each; one body, flag and rating.
            expect(await count(h, table, { requestIds: stays })).toBe(table === 'request_scores' ? 2 * keep : keep)
          }
          for (const table of DATED) expect(await count(h, table, { orgId: org.orgId })).toBe(keep)
        }
        // Nothing left to do.
        expect((await h.services.retention.run()).records).toBe(0)
      })

      test('bodies follow their own retention, and go with their record when the record goes first', async () => {
        const { h, org } = await world({ requestRetentionDays: 20 })
        await h.request('POST', '/v1/organization/body-retention-config', {
          token: org.ownerSession,
          body: { mode: 'days', days: 5 },
        })
        const ids = await seed(h.store, org.orgId, [daysAgo(1), daysAgo(6), daysAgo(25)])
        const run = await h.services.retention.run()
        expect(run).toMatchObject({ records: 1, bodies: 1 })
        expect(await count(h, 'request_bodies', { requestIds: ids })).toBe(1)
        expect(await count(h, 'requests', { orgId: org.orgId })).toBe(2)
      })

      test('batches are bounded: each deletes at most its rows, in a transaction of its own', async () => {
        const { h, org } = await world({ requestRetentionDays: 7 })
        await seed(
          h.store,
          org.orgId,
          Array.from({ length: 260 }, (_, i) => daysAgo(8 + i / 100)),
        )
        await seed(h.store, org.orgId, [daysAgo(1)])
        const sizes: number[] = []
        const counting: Store = {
          ...h.store,
          transaction: (work) =>
            h.store.transaction(async (tx) => {
              const n = await work(tx)
              if (typeof n === 'number') sizes.push(n)
              return n
            }),
        }
        const job = new RetentionJob(
          { store: counting, retention: new RecordRetention(h.store, 7), log: capture().log, now: () => T },
          { batchRows: 50, pauseMs: 0 },
        )
        const run = await job.run()
        expect(run.records).toBe(260)
        expect(Math.max(...sizes)).toBe(50)
        // Records: five full batches and a short one; each dated log: one full batch of 20 rows; bodies: one empty batch.
        expect(sizes.slice(0, 6)).toEqual([50, 50, 50, 50, 50, 10])
        expect(run.batches).toBe(sizes.length)
        expect(await count(h, 'requests', { orgId: org.orgId })).toBe(1)
      })

      test('a request-log write during a long deletion is written promptly', async () => {
        const { h, org } = await world({ requestRetentionDays: 7, retentionJob: { batchRows: 500, pauseMs: 5 } })
        await seed(
          h.store,
          org.orgId,
          Array.from({ length: 20_000 }, (_, i) => daysAgo(8 + i / 10_000)),
        )
        let finished = false
        const running = h.services.retention.run().then((run) => {
          finished = true
          return run
        })
        await Bun.sleep(30)
        const id = randomUUID()
        const started = performance.now()
        h.requestLog.record({ record: requestRecord({ id, orgId: org.orgId, createdAt: new Date(T) }) })
        await h.requestLog.flush()
        const waited = performance.now() - started
        expect(await h.store.requests.get(org.orgId, id)).toBeDefined()
        expect(finished).toBe(false)
        const run = await running
        expect(run.records).toBe(20_000)
        expect(waited).toBeLessThan(Math.max(250, 3 * run.longestBatchMs))
        expect(await count(h, 'requests', { orgId: org.orgId })).toBe(1)
      }, 60_000)

      test('stopped mid-run, the batch under way finishes whole and nothing is half-deleted', async () => {
        const { h, org } = await world({ requestRetentionDays: 7, retentionJob: { batchRows: 100, pauseMs: 2 } })
        // Oldest first: ids[0] is ten days old, the last one eight.
        const ids = await seed(
          h.store,
          org.orgId,
          Array.from({ length: 2_000 }, (_, i) => daysAgo(10 - i / 1_000)),
        )
        const running = h.services.retention.run()
        while ((await count(h, 'requests', { orgId: org.orgId })) === 2_000) await Bun.sleep(1)
        await h.services.retention.stop()
        const run = await running
        expect(run.stopped).toBe(true)
        expect(run.records % 100).toBe(0)
        expect(run.records).toBeGreaterThan(0)
        expect(run.records).toBeLessThan(2_000)
        const left = await count(h, 'requests', { orgId: org.orgId })
        expect(left).toBe(2_000 - run.records)
        // Every record left has its body and flag; the deleted ones have none.
        expect(await count(h, 'request_bodies', { orgId: org.orgId })).toBe(left)
        expect(await count(h, 'request_flags', { orgId: org.orgId })).toBe(left)
        expect(await count(h, 'request_bodies', { requestIds: ids.slice(0, run.records) })).toBe(0)
        // Oldest first: the newest is left.
        expect(await h.store.requests.get(org.orgId, ids.at(-1) as string)).toBeDefined()
        // Stopped, it starts nothing more.
        expect((await h.services.retention.run()).records).toBe(0)
      })

      test('two instances running at once share the work: every old record goes once, no error, no orphan', async () => {
        const { h, org } = await world({ requestRetentionDays: 7, retentionJob: { batchRows: 100, pauseMs: 0 } })
        const other = await createHarness({
          dialect,
          database: h,
          now: () => T,
          requestRetentionDays: 7,
          retentionJob: { batchRows: 100, pauseMs: 0 },
        })
        harnesses.push(other)
        await seed(
          h.store,
          org.orgId,
          Array.from({ length: 1_500 }, (_, i) => daysAgo(8 + i / 1_000)),
        )
        const [one, two] = await Promise.all([h.services.retention.run(), other.services.retention.run()])
        expect((one?.records ?? 0) + (two?.records ?? 0)).toBe(1_500)
        for (const table of ['requests', ...DEPENDENTS]) expect(await count(h, table, { orgId: org.orgId })).toBe(0)
      })

      test('the metadata lookup (300 s) and feedback on a fresh call keep working after the job', async () => {
        const clock = { now: T }
        const { h, org } = await world({ requestRetentionDays: 1, now: () => clock.now })
        await h.services.organizations.addCredits(org.orgId, 10)
        const old = await loggedChat(h, org.apiKey, 'old')
        clock.now += 2 * DAY_MS
        const fresh = await loggedChat(h, org.apiKey, 'fresh')
        expect((await h.services.retention.run()).records).toBe(1)
        expect(await h.store.requests.get(org.orgId, old)).toBeUndefined()
        const meta = await h.request('GET', `/gateway/v1/meta/${fresh}`, { token: org.apiKey })
        expect(meta.status).toBe(200)
        expect(((await meta.json()) as { requestId: string }).requestId).toBe(fresh)
        const rated = await h.request('POST', '/v1/feedback', { token: org.apiKey, body: { requestId: fresh, rating: true } })
        expect(rated.status).toBe(200)
      })
    })
  })
}
