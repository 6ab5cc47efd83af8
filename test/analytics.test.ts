import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { bucketOf, bucketsOf, INCREMENTS, type Increment, type TimeWindow } from '../src/query/time'
import type { RequestRecord } from '../src/store/repositories/requests'
import { createHarness, DIALECTS, type Harness, type Org } from './support/harness'
import { requestRecord } from './support/records'

const iso = (ms: number) => new Date(ms).toISOString().replace('Z', '')
const window = (
  increment: Increment,
  offsetMinutes = 0,
  start = '2026-01-30T00:00:00Z',
  end = '2026-02-02T00:00:00Z',
): TimeWindow => ({
  start: new Date(start),
  end: new Date(end),
  offsetMinutes,
  increment,
})

describe('time buckets', () => {
  test('a month bucket follows the local calendar across a month end', () => {
    const at = Date.parse('2026-01-31T23:30:00Z')
    expect(iso(bucketOf(at, window('month', 0)))).toBe('2026-01-01T00:00:00.000')
    expect(iso(bucketOf(at, window('month', 60)))).toBe('2026-02-01T00:00:00.000')
    expect(iso(bucketOf(Date.parse('2026-02-01T03:00:00Z'), window('month', -300)))).toBe('2026-01-01T00:00:00.000')
  })

  test('days start at local midnight; weeks on Monday', () => {
    expect(iso(bucketOf(Date.parse('2026-03-10T02:00:00Z'), window('day', -300)))).toBe('2026-03-09T00:00:00.000')
    expect(iso(bucketOf(Date.parse('2026-03-10T02:00:00Z'), window('day', 330)))).toBe('2026-03-10T00:00:00.000')
    expect(iso(bucketOf(Date.parse('2026-11-22T12:00:00Z'), window('week')))).toBe('2026-11-16T00:00:00.000') // a Sunday: the Monday before
    expect(iso(bucketOf(Date.parse('2026-11-23T00:00:00Z'), window('week')))).toBe('2026-11-23T00:00:00.000')
  })

  test('every bucket of the window is listed, in order', () => {
    expect(bucketsOf(window('day')).map(iso)).toEqual([
      '2026-01-30T00:00:00.000',
      '2026-01-31T00:00:00.000',
      '2026-02-01T00:00:00.000',
      '2026-02-02T00:00:00.000',
    ])
    expect(bucketsOf(window('month', 0, '2025-11-15T00:00:00Z', '2026-02-15T00:00:00Z')).map(iso)).toEqual([
      '2025-11-01T00:00:00.000',
      '2025-12-01T00:00:00.000',
      '2026-01-01T00:00:00.000',
      '2026-02-01T00:00:00.000',
    ])
  })
})

function rng(seed: number) {
  let s = seed >>> 0
  return () => {
    s = (s + 0x6d2b79f5) >>> 0
    let t = s
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const START = Date.parse('2025-12-20T00:00:00Z')
const SPAN = 60 * 86_400_000

function records(orgId: string, n: number, random: () => number): RequestRecord[] {
  return Array.from({ length: n }, (_, i) =>
    requestRecord({
      id: `${orgId.slice(0, 6)}-${i}`,
      orgId,
      userId: random() < 0.5 ? 'u1' : random() < 0.5 ? 'u2' : null,
      model: random() < 0.5 ? 'gpt-4o' : 'gpt-4o-mini',
      status: random() < 0.2 ? 'error' : 'success',
      httpStatus: random() < 0.5 ? 500 : 429,
      latencyMs: 1 + Math.floor(random() * 1000),
      promptTokens: 100,
      completionTokens: 50,
      cacheReadTokens: i % 10 === 0 ? 40 : 0,
      totalTokens: 150,
      createdAt: new Date(START + Math.floor(random() * SPAN)),
    }),
  )
}

for (const dialect of DIALECTS) {
  describe(`metrics on ${dialect}`, () => {
    let h: Harness
    let org: Org
    let rows: RequestRecord[]
    const whole = { timeFilter: { start: new Date(START).toISOString(), end: new Date(START + SPAN).toISOString() } }

    beforeAll(async () => {
      h = await createHarness({ dialect })
      org = await h.org('growth')
      const other = await h.org('growth')
      rows = records(org.orgId, 500, rng(3))
      await h.store.requests.insertMany(rows)
      await h.store.requests.insertMany(records(other.orgId, 100, rng(4)))
    })
    afterAll(() => h.close())

    const metric = async <T>(name: string, body: Record<string, unknown>) => {
      const response = await h.request('POST', `/v1/metrics/${name}`, { token: org.apiKey, body })
      expect(response.status).toBe(200)
      return ((await response.json()) as { data: T }).data
    }

    test('series: the SQL buckets agree with the bucket arithmetic, every increment, across time zones', async () => {
      for (const increment of INCREMENTS) {
        // Minutes over one day, the rest over the whole set: within the bound on buckets.
        const end = increment === 'min' ? START + 86_400_000 : START + SPAN
        for (const offset of [0, 330, -480]) {
          const w = { ...window(increment, offset), start: new Date(START), end: new Date(end) }
          const expected = new Map<string, number>()
          for (const b of bucketsOf(w)) expected.set(iso(b), 0)
          for (const r of rows.filter((r) => r.createdAt.getTime() <= end)) {
            const bucket = iso(bucketOf(r.createdAt.getTime(), w))
            expected.set(bucket, (expected.get(bucket) ?? 0) + 1)
          }
          const body = {
            timeFilter: { start: w.start.toISOString(), end: w.end.toISOString() },
            dbIncrement: increment,
            timeZoneDifference: offset,
          }
          const series = await metric<Array<{ time: string; count: number }>>('requestOverTime', body)
          expect({ increment, offset, series: series.map((p) => [p.time, p.count]) }).toEqual({
            increment,
            offset,
            series: [...expected.entries()],
          })
          // Breakdowns over time group by the bucket in SQL on both dialects: the same buckets.
          const byModel = await metric<Array<{ time: string; values: Record<string, { count: number }> }>>('modelsOverTime', body)
          const totals = byModel.map((p) => [p.time, Object.values(p.values).reduce((n, v) => n + v.count, 0)])
          expect({ increment, offset, totals }).toEqual({ increment, offset, totals: [...expected.entries()] })
        }
      }
    })

    test('scalars: count, cost in USD, average latency, active users', async () => {
      expect(await metric('totalRequests', whole)).toEqual({ count: 500 })
      expect(await metric('totalCost', whole)).toEqual({ cost: 0.5 })
      const avg = rows.reduce((s, r) => s + (r.latencyMs ?? 0), 0) / rows.length
      expect((await metric<{ latencyMs: number }>('averageLatency', whole)).latencyMs).toBeCloseTo(avg, 6)
      expect(await metric('activeUsers', whole)).toEqual({ users: 2 })
    })

    test('an empty window: counts are 0, averages null, every bucket still there', async () => {
      const empty = { timeFilter: { start: '2030-01-01T00:00:00Z', end: '2030-01-01T05:00:00Z' } }
      expect(await metric('averageLatency', empty)).toEqual({ latencyMs: null })
      // No dbIncrement: hours, the documented default.
      const series = await metric<Array<{ count: number }>>('requestOverTime', empty)
      expect(series.map((p) => p.count)).toEqual([0, 0, 0, 0, 0, 0])
    })

    test('breakdowns: by model, and errors by status', async () => {
      const models = await metric<Array<{ key: string; count: number }>>('models', whole)
      const expected = Object.entries(Object.groupBy(rows, (r) => r.model)).map(([key, list]) => ({
        key,
        count: list?.length ?? 0,
      }))
      expect(models.map((m) => ({ key: m.key, count: m.count })).sort((a, b) => a.key.localeCompare(b.key))).toEqual(
        expected.sort((a, b) => a.key.localeCompare(b.key)),
      )
      const errorRows = rows.filter((r) => r.status === 'error')
      const byStatus = await metric<Array<{ key: string; count: number }>>('errorBreakdown', whole)
      expect(byStatus.reduce((n, b) => n + b.count, 0)).toBe(errorRows.length)
    })

    test('quantiles by nearest rank, computed in the database', async () => {
      const sorted = rows.map((r) => r.latencyMs as number).sort((a, b) => a - b)
      const q = (p: number): number => sorted[Math.ceil(p * sorted.length) - 1] as number
      const response = await h.request('POST', '/v1/metrics/quantiles', { token: org.apiKey, body: whole })
      const data = ((await response.json()) as { data: unknown }).data
      // No request of the set has a time to first token: no value, not zero.
      expect(data).toEqual({
        latencyMs: { p50: q(0.5), p90: q(0.9), p95: q(0.95), p99: q(0.99) },
        timeToFirstTokenMs: { p50: null, p90: null, p95: null, p99: null },
      })
    })

    test('a filter narrows every metric; bad input is 400', async () => {
      const filtered = await metric<{ count: number }>('requestCount', {
        ...whole,
        filter: { request: { model: { equals: 'gpt-4o' } } },
      })
      expect(filtered.count).toBe(rows.filter((r) => r.model === 'gpt-4o').length)
      for (const body of [
        { dbIncrement: 'year' },
        { timeFilter: { start: '2026-02-01T00:00:00Z', end: '2026-01-01T00:00:00Z' } },
        { timeZoneDifference: 2000 },
        { ...whole, dbIncrement: 'min' },
      ]) {
        expect((await h.request('POST', '/v1/metrics/requestOverTime', { token: org.apiKey, body })).status).toBe(400)
      }
    })
  })
}
