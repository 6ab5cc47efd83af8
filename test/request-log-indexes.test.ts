import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { DIALECTS, openTestDatabase, type TestDatabase } from './support/harness'
import { requestRecord } from './support/records'

/**
 * The request log's indexes by user and by customer hold only the calls that name one: most calls name
 * neither, and the writer then touches two indexes fewer a record. Queries by a user or a customer
 * must still be answered through them, and still count every call they should.
 */
const WINDOW = { start: new Date(Date.UTC(2026, 10, 1)), end: new Date(Date.UTC(2026, 11, 1)) }
const AT = new Date(Date.UTC(2026, 10, 15, 12))

/** The shape of the spend controls' read of a customer's (or a user's) spend in a window. */
const spendBy = (column: 'customer_id' | 'user_id', dialect: string) =>
  dialect === 'sqlite'
    ? `SELECT coalesce(sum(cost_nano), 0) FROM requests WHERE org_id = ? AND created_at >= ? AND created_at < ? AND ${column} = ?`
    : `SELECT coalesce(sum(cost_nano), 0) FROM requests WHERE org_id = $1 AND created_at >= $2 AND created_at < $3 AND ${column} = $4`

for (const dialect of DIALECTS)
  describe(`the request log's indexes by user and customer (${dialect})`, () => {
    let t: TestDatabase
    beforeAll(async () => {
      t = await openTestDatabase(dialect)
      for (const orgId of ['org_a', 'org_b'])
        await t.store.organizations.create({ id: orgId, name: orgId, tier: 'pro', creditBalanceNano: 0, createdAt: AT })
      const records = [
        ...Array.from({ length: 40 }, (_, i) => requestRecord({ id: `plain_${i}`, orgId: 'org_a', createdAt: AT })),
        requestRecord({ id: 'cust_1', orgId: 'org_a', customerId: 'acme', costNano: 3_000, createdAt: AT }),
        requestRecord({ id: 'cust_2', orgId: 'org_a', customerId: 'acme', userId: 'u_1', costNano: 4_000, createdAt: AT }),
        requestRecord({ id: 'cust_3', orgId: 'org_b', customerId: 'acme', costNano: 50_000, createdAt: AT }),
        requestRecord({ id: 'user_1', orgId: 'org_a', userId: 'u_1', costNano: 5_000, createdAt: AT }),
      ]
      await t.store.transaction((tx) => tx.requests.insertMany(records))
    })
    afterAll(() => t.close())
    /** The statement's parameters: SQLite holds times as milliseconds. */
    const params = (who: string) =>
      dialect === 'sqlite'
        ? ['org_a', WINDOW.start.getTime(), WINDOW.end.getTime(), who]
        : ['org_a', WINDOW.start.toISOString(), WINDOW.end.toISOString(), who]

    test('hold only the calls that name a user or a customer', async () => {
      const definitions =
        dialect === 'sqlite'
          ? await t.db.query<{ sql: string }>("SELECT sql FROM sqlite_master WHERE type = 'index' AND name LIKE 'requests_org_%'")
          : await t.db.query<{ sql: string }>("SELECT indexdef AS sql FROM pg_indexes WHERE indexname LIKE 'requests_org_%'")
      const of = (name: string) =>
        definitions
          .find((d) => d.sql.includes(name))
          ?.sql.toLowerCase()
          .replace(/["`()]/g, '') ?? ''
      expect(of('requests_org_user_time_idx')).toMatch(/ where (requests\.)?user_id is not null$/)
      expect(of('requests_org_customer_time_idx')).toMatch(/ where (requests\.)?customer_id is not null$/)
      expect(of('requests_org_time_idx')).not.toContain('where')
    })

    test("a customer's and a user's spend count every call of theirs in the organisation, and only those", async () => {
      const customerSpend = (customerId: string, orgId = 'org_a') =>
        t.store.requests.spendOf({ orgId, ...WINDOW, match: { customerId } }, 'usd')
      expect(await customerSpend('acme')).toBe(7_000)
      expect(await customerSpend('acme', 'org_b')).toBe(50_000)
      expect(await customerSpend('nobody')).toBe(0)
      const [byUser] = await t.db.query<Record<string, unknown>>(spendBy('user_id', dialect), params('u_1'))
      expect(Number(Object.values(byUser ?? {})[0])).toBe(9_000)
    })

    for (const [column, index] of [
      ['customer_id', 'requests_org_customer_time_idx'],
      ['user_id', 'requests_org_user_time_idx'],
    ] as const)
      test(`a read of one ${column === 'user_id' ? "user's" : "customer's"} calls is answered through ${index}`, async () => {
        const plan = await t.db.transaction(async (tx) => {
          // A few dozen rows make a full scan the cheaper plan for Postgres: asked not to, it shows
          // whether the index can answer the query at all.
          if (dialect === 'postgres') await tx.execute('SET LOCAL enable_seqscan = off')
          return tx.query<Record<string, unknown>>(
            `EXPLAIN ${dialect === 'sqlite' ? 'QUERY PLAN ' : ''}${spendBy(column, dialect)}`,
            params('acme'),
          )
        })
        expect(JSON.stringify(plan)).toContain(index)
      })
  })
