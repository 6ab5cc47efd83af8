import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { FIELDS, MAX_CONDITIONS, MAX_DEPTH, OPERATORS, requestScope } from '../src/query/filter'
import type { RequestRecord } from '../src/store/repositories/requests'
import { tables as sqliteTables } from '../src/store/schema.sqlite'
import { DIALECTS, openTestDatabase, type TestDatabase } from './support/harness'
import { requestRecord } from './support/records'

/** A small evaluator of the same language over records in memory: what the SQL must agree with. */
function matches(record: RequestRecord, node: unknown): boolean {
  if (node === 'all') return true
  const n = node as Record<string, unknown>
  if ('operator' in n)
    return n.operator === 'and'
      ? matches(record, n.left) && matches(record, n.right)
      : matches(record, n.left) || matches(record, n.right)
  const fields = n.request as Record<string, Record<string, unknown>>
  return Object.entries(fields).every(([field, test]) => {
    if (field === 'properties') {
      return Object.entries(test as Record<string, Record<string, unknown>>).every(([name, t]) =>
        compare(record.properties?.[name.toLowerCase()] ?? null, t, 'text', 1),
      )
    }
    const spec = FIELDS[field]
    if (!spec) throw new Error(field)
    return compare(fieldValue(record, field), test, spec.type, spec.scale ?? 1)
  })
}

const COLUMN: Record<string, keyof RequestRecord> = {
  request_id: 'id',
  user_id: 'userId',
  session_id: 'sessionId',
  api_key_id: 'apiKeyId',
  model: 'model',
  provider: 'provider',
  path: 'path',
  status: 'status',
  gateway_mode: 'gatewayMode',
  error: 'error',
  http_status: 'httpStatus',
  latency_ms: 'latencyMs',
  time_to_first_token_ms: 'timeToFirstTokenMs',
  prompt_tokens: 'promptTokens',
  completion_tokens: 'completionTokens',
  cache_read_tokens: 'cacheReadTokens',
  cache_write_tokens: 'cacheWriteTokens',
  total_tokens: 'totalTokens',
  cost: 'costNano',
  estimated_cost: 'estimatedCostNano',
  ptb: 'ptb',
  country: 'country',
  created_at: 'createdAt',
}
const fieldValue = (r: RequestRecord, field: string): unknown => r[COLUMN[field] as keyof RequestRecord] ?? null

function likeRegex(pattern: string, flags: string): RegExp {
  const body = [...pattern].map((c) => (c === '%' ? '.*' : c === '_' ? '.' : c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('')
  return new RegExp(`^${body}$`, `s${flags}`)
}

function compare(actual: unknown, test: Record<string, unknown>, type: string, scale: number): boolean {
  const [op, raw] = Object.entries(test)[0] as [string, unknown]
  if (actual === null) return false
  if (type === 'text') {
    const a = actual as string
    const v = raw as string
    return {
      equals: a === v,
      'not-equals': a !== v,
      contains: a.includes(v),
      'not-contains': !a.includes(v),
      like: likeRegex(v, '').test(a),
      ilike: likeRegex(v, 'i').test(a),
    }[op] as boolean
  }
  const a = type === 'time' ? (actual as Date).getTime() : type === 'boolean' ? Number(actual) : (actual as number)
  const v =
    type === 'time' ? new Date(raw as string).getTime() : type === 'boolean' ? Number(raw) : Math.round((raw as number) * scale)
  return { equals: a === v, 'not-equals': a !== v, gt: a > v, gte: a >= v, lt: a < v, lte: a <= v }[op] as boolean
}

/** A seeded generator, so a failing case can be replayed. */
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

const MODELS = ['gpt-4o', 'gpt-4o-mini', 'claude-sonnet-4-5', 'Claude-X', "o'brien", '50%_off']
const USERS = ['alice', 'bob', 'ALICE', null]
const BASE = Date.UTC(2026, 0, 1)

function records(orgId: string, count: number, random: () => number): RequestRecord[] {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T
  return Array.from({ length: count }, (_, i) =>
    requestRecord({
      id: `r${String(i).padStart(4, '0')}`,
      orgId,
      userId: pick(USERS),
      properties: random() < 0.5 ? { customer: pick(['acme', 'globex', 'ACME']) } : null,
      provider: pick(['openai', 'anthropic']),
      model: pick(MODELS),
      gatewayMode: pick(['passthrough', 'translated'] as const),
      status: pick(['success', 'error'] as const),
      httpStatus: pick([200, 400, 429, 502]),
      latencyMs: random() < 0.9 ? Math.floor(random() * 2000) : null,
      promptTokens: Math.floor(random() * 1000),
      completionTokens: Math.floor(random() * 500),
      totalTokens: null,
      costNano: random() < 0.8 ? Math.floor(random() * 10_000_000) : null,
      ptb: random() < 0.5,
      country: pick(['DE', 'US', null]),
      createdAt: new Date(BASE + Math.floor(random() * 30) * 86_400_000),
    }),
  )
}

function randomFilter(random: () => number, depth = 0): unknown {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T
  if (depth < 3 && random() < 0.4)
    return { operator: pick(['and', 'or']), left: randomFilter(random, depth + 1), right: randomFilter(random, depth + 1) }
  const field = pick([
    'model',
    'user_id',
    'status',
    'http_status',
    'latency_ms',
    'cost',
    'ptb',
    'created_at',
    'country',
    'properties',
  ])
  if (field === 'properties')
    return { request: { properties: { customer: { [pick(OPERATORS.text)]: pick(['acme', 'ACME', 'ac%', '_cme', 'me']) } } } }
  const type = (FIELDS[field] as { type: keyof typeof OPERATORS }).type
  const op = pick(OPERATORS[type])
  const values: Record<string, readonly unknown[]> = {
    model: [...MODELS, 'gpt%', 'claude%', '%o%', "o'%", '50\\%%', 'gpt-4o_mini'],
    user_id: ['alice', 'ALICE', 'al%', 'b_b', 'x'],
    status: ['success', 'error', 'succ%'],
    http_status: [200, 400, 429],
    latency_ms: [0, 500, 1999],
    cost: [0, 0.001, 0.005],
    ptb: [true, false],
    country: ['DE', 'de', 'U%'],
    created_at: [new Date(BASE + 10 * 86_400_000).toISOString(), new Date(BASE).toISOString()],
  }
  return { request: { [field]: { [op]: pick(values[field] as readonly unknown[]) } } }
}

for (const dialect of DIALECTS) {
  describe(`the filter compiler on ${dialect}`, () => {
    let t: TestDatabase
    let rows: RequestRecord[]
    const orgId = 'org-filter'

    beforeAll(async () => {
      t = await openTestDatabase(dialect)
      rows = records(orgId, 300, rng(7))
      await t.store.requests.insertMany(rows)
      // Another organisation's rows must never come back, whatever the filter.
      await t.store.requests.insertMany(records('org-other', 50, rng(8)).map((r) => ({ ...r, id: `x${r.id}` })))
    })
    afterAll(() => t.close())

    const run = async (filter: unknown): Promise<string[]> => {
      const { requests } = t.db.tables
      const found = await t.db.orm
        .select({ id: requests.id })
        .from(requests)
        .where(requestScope(t.db, orgId, filter))
      return found.map((r) => r.id).sort()
    }
    const expected = (filter: unknown) =>
      rows
        .filter((r) => matches(r, filter))
        .map((r) => r.id)
        .sort()

    test('every operator of every type agrees with the evaluator', async () => {
      const cases: unknown[] = [
        'all',
        ...OPERATORS.text.map((op) => ({ request: { model: { [op]: 'gpt-4o' } } })),
        ...OPERATORS.number.map((op) => ({ request: { latency_ms: { [op]: 1000 } } })),
        ...OPERATORS.number.map((op) => ({ request: { cost: { [op]: 0.005 } } })),
        ...OPERATORS.time.map((op) => ({ request: { created_at: { [op]: new Date(BASE + 15 * 86_400_000).toISOString() } } })),
        { request: { ptb: { equals: true } } },
        { request: { model: { equals: 'gpt-4o' }, status: { equals: 'success' } } },
        { request: { properties: { Customer: { equals: 'acme' } } } },
      ]
      for (const filter of cases) expect({ filter, ids: await run(filter) }).toEqual({ filter, ids: expected(filter) })
    })

    test('hostile values are data: quotes, %, _ and SQL find only what they literally say', async () => {
      const hostile = ["o'brien", "' OR 1=1 --", '50%_off', '%', '_', '"); DROP TABLE requests; --', '\\']
      for (const v of hostile) {
        for (const op of ['equals', 'contains']) {
          const filter = { request: { model: { [op]: v } } }
          expect({ filter, ids: await run(filter) }).toEqual({ filter, ids: expected(filter) })
        }
      }
      expect((await t.db.query<{ n: number }>('SELECT count(*) AS n FROM requests')).length).toBe(1)
    })

    test('random filters over random records: the SQL agrees with the evaluator (200 cases)', async () => {
      const random = rng(42)
      for (let i = 0; i < 200; i++) {
        const filter = randomFilter(random)
        expect({ case: i, filter, ids: await run(filter) }).toEqual({ case: i, filter, ids: expected(filter) })
      }
    })
  })
}

describe('the filter compiler refuses what it does not know, naming it', () => {
  const db = { dialect: 'sqlite' as const, tables: sqliteTables }
  const refused: Array<[unknown, string]> = [
    [{ request: { "model'; --": { equals: 'x' } } }, 'unknown field'],
    [{ request: { constructor: { equals: 0 } } }, 'unknown field "constructor"'],
    [{ request: { toString: { equals: 'x' } } }, 'unknown field "toString"'],
    [{ request: { model: { gt: 'x' } } }, 'operator "gt" does not apply to model'],
    [{ request: { latency_ms: { equals: '5' } } }, 'latency_ms takes a number'],
    // Past what the column holds: Postgres would fail the query on it, which once answered 500.
    [{ request: { latency_ms: { equals: -1e308 } } }, 'latency_ms takes a number from -2147483647 to 2147483647'],
    [{ request: { cost: { gt: 1e12 } } }, 'cost takes a number from'],
    [{ request: { created_at: { gt: 'yesterday' } } }, 'ISO 8601'],
    [{ request: { ptb: { equals: 'yes' } } }, 'true or false'],
    [{ request: { properties: { 'bad name': { equals: 'x' } } } }, 'property name'],
    [{ request_response_rmt: { model: { equals: 'x' } } }, 'a leaf is {"request"'],
    [{ operator: 'xor', left: 'all', right: 'all' }, 'must be "and" or "or"'],
    [{ request: { model: { equals: 'x', contains: 'y' } } }, 'exactly one'],
    [42, 'must be an object'],
  ]
  for (const [filter, message] of refused) {
    test(`${JSON.stringify(filter)}: ${message}`, () => {
      expect(() => requestScope(db, 'org', filter)).toThrow(message)
    })
  }

  test(`deeper than ${MAX_DEPTH} levels, or more than ${MAX_CONDITIONS} conditions`, () => {
    let deep: unknown = { request: { model: { equals: 'x' } } }
    for (let i = 0; i < MAX_DEPTH; i++) deep = { operator: 'and', left: deep, right: { request: { model: { equals: 'y' } } } }
    expect(() => requestScope(db, 'org', deep)).toThrow(`nested deeper than ${MAX_DEPTH} levels`)
    // A balanced tree 8 levels deep holds 128 leaves: within the depth, beyond the conditions.
    const balanced = (levels: number): unknown =>
      levels === 0
        ? { request: { model: { equals: 'x' } } }
        : { operator: 'or', left: balanced(levels - 1), right: balanced(levels - 1) }
    expect(() => requestScope(db, 'org', balanced(7))).toThrow(`more than ${MAX_CONDITIONS} conditions`)
  })
})
