import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq, sql } from 'drizzle-orm'
import { compiledRead } from '../src/store/compiled-read'
import type { Organization } from '../src/store/repositories/organizations'
import { DIALECTS, openTestDatabase, type TestDatabase } from './support/harness'

for (const dialect of DIALECTS)
  describe(`a read compiled once (${dialect})`, () => {
    let t: TestDatabase
    const created = new Date(Date.UTC(2026, 10, 28, 12))
    beforeAll(async () => {
      t = await openTestDatabase(dialect)
      await t.store.organizations.create({ id: 'org_a', name: 'A', tier: 'pro', creditBalanceNano: 5, createdAt: created })
      await t.store.organizations.create({ id: 'org_b', name: 'B', tier: 'free', creditBalanceNano: 0, createdAt: created })
    })
    afterAll(() => t.close())

    const byId = () => {
      let builds = 0
      const { organizations } = t.db.tables
      const read = compiledRead<Organization>(t.db.dialect, () => {
        builds += 1
        return t.db.orm
          .select()
          .from(organizations)
          .where(eq(organizations.id, sql.placeholder('id')))
          .limit(1)
      })
      return { read, builds: () => builds }
    }

    test('answers each call its own row, its columns mapped as the query builder maps them', async () => {
      const { read } = byId()
      const a = await read({ id: 'org_a' })
      expect(a).toMatchObject({ id: 'org_a', name: 'A', tier: 'pro', creditBalanceNano: 5 })
      expect(a?.createdAt).toEqual(created)
      expect((await read({ id: 'org_b' }))?.name).toBe('B')
    })

    test('answers nothing for a key with no row', async () => {
      expect(await byId().read({ id: 'org_none' })).toBeUndefined()
    })

    test('builds the query on the first read and never again', async () => {
      const { read, builds } = byId()
      expect(builds()).toBe(0)
      for (const id of ['org_a', 'org_b', 'org_none', 'org_a']) await read({ id })
      expect(builds()).toBe(1)
    })

    test('a value that looks like SQL is a value, not a statement', async () => {
      const { read } = byId()
      expect(await read({ id: "org_a' OR '1'='1" })).toBeUndefined()
      expect((await read({ id: 'org_a' }))?.id).toBe('org_a')
    })
  })
