import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { asc, eq, sql } from 'drizzle-orm'
import { compiledRead, orgRead } from '../src/store/compiled-read'
import type { Organization } from '../src/store/repositories/organizations'
import { orgRows } from '../src/store/scope'
import { DIALECTS, openTestDatabase, type TestDatabase } from './support/harness'

for (const dialect of DIALECTS)
  describe(`reads compiled once (${dialect})`, () => {
    let t: TestDatabase
    const created = new Date(Date.UTC(2026, 10, 28, 12))
    beforeAll(async () => {
      t = await openTestDatabase(dialect)
      await t.store.organizations.create({ id: 'org_a', name: 'A', tier: 'pro', creditBalanceNano: 5, createdAt: created })
      await t.store.organizations.create({ id: 'org_b', name: 'B', tier: 'free', creditBalanceNano: 0, createdAt: created })
      for (const [orgId, matchModel] of [
        ['org_a', 'fast'],
        ['org_a', 'smart'],
        ['org_b', 'cheap'],
      ] as const)
        await t.store.org(orgId).fallbackChains.create({
          id: `chain_${orgId}_${matchModel}`,
          name: matchModel,
          matchModel,
          steps: [{ model: 'gpt-4o' }],
          retry: null,
          triggers: null,
          createdAt: created,
          updatedAt: created,
        })
    })
    afterAll(() => t.close())

    const organizationById = () => {
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

    test('a read answers each call its own row, its columns mapped as the query builder maps them', async () => {
      const { read } = organizationById()
      const [a] = await read({ id: 'org_a' })
      expect(a).toMatchObject({ id: 'org_a', name: 'A', tier: 'pro', creditBalanceNano: 5 })
      expect(a?.createdAt).toEqual(created)
      expect((await read({ id: 'org_b' }))[0]?.name).toBe('B')
      expect(await read({ id: 'org_none' })).toEqual([])
    })

    test('the query is built on the first read and never again', async () => {
      const { read, builds } = organizationById()
      expect(builds()).toBe(0)
      for (const id of ['org_a', 'org_b', 'org_none', 'org_a']) await read({ id })
      expect(builds()).toBe(1)
    })

    test('a value that looks like SQL is a value, not a statement', async () => {
      const { read } = organizationById()
      expect(await read({ id: "org_a' OR '1'='1" })).toEqual([])
      expect((await read({ id: 'org_a' }))[0]?.id).toBe('org_a')
    })

    /** An organisation's chains through one statement per name, as its repository reads them. */
    const chainsOf = (orgId: string, name: string, onBuild: () => void = () => undefined) => {
      const { fallbackChains } = t.db.tables
      return orgRead<{ id: string; matchModel: string }>(t.db, orgRows(fallbackChains, orgId), name, (where) => {
        onBuild()
        return t.db.orm.select().from(fallbackChains).where(where()).orderBy(asc(fallbackChains.matchModel))
      })
    }

    test("an organisation's read finds its own rows only", async () => {
      expect((await chainsOf('org_a', 'test.chains')()).map((c) => c.matchModel)).toEqual(['fast', 'smart'])
      expect((await chainsOf('org_b', 'test.chains')()).map((c) => c.matchModel)).toEqual(['cheap'])
      expect(await chainsOf('org_none', 'test.chains')()).toEqual([])
    })

    test('every organisation shares one statement, and the read binds its own organisation over a value passed for it', async () => {
      let builds = 0
      const count = () => {
        builds += 1
      }
      const ofA = chainsOf('org_a', 'test.shared', count)
      const ofB = chainsOf('org_b', 'test.shared', count)
      await ofA()
      await ofB()
      await chainsOf('org_a', 'test.shared', count)()
      expect(builds).toBe(1)
      expect((await ofB({ orgId: 'org_a' })).map((c) => c.matchModel)).toEqual(['cheap'])
    })

    test("a read's further placeholders take its values", async () => {
      const { fallbackChains } = t.db.tables
      const byAlias = orgRead<{ id: string }>(t.db, orgRows(fallbackChains, 'org_a'), 'test.byAlias', (where) =>
        t.db.orm
          .select()
          .from(fallbackChains)
          .where(where(eq(fallbackChains.matchModel, sql.placeholder('alias')))),
      )
      expect((await byAlias({ alias: 'smart' })).map((c) => c.id)).toEqual(['chain_org_a_smart'])
      expect(await byAlias({ alias: 'cheap' })).toEqual([])
    })
  })
