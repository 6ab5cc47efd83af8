import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { type Database, openDatabase } from '../src/store/database'
import { migrate, SQLITE_SCHEMA_DUMP } from '../src/store/migrate'
import { DIALECTS, emptyDatabase } from './support/harness'

/**
 * A new SQLite database is given the schema its migrations end at in one transaction, rather than
 * replaying them (which rebuilds tables over and over). Either way must end at the same schema, and
 * a database that has applied some migrations must get exactly the rest.
 */
const schemaOf = async (on: Database) => (await on.query<{ sql: string }>(SQLITE_SCHEMA_DUMP)).map((r) => r.sql)
const ledger = async (on: Database) =>
  (await on.query<{ tag: string }>('SELECT tag FROM gw_migrations ORDER BY tag')).map((r) => r.tag)
/** The same database, with only the migrations to replay (no fresh schema to take a short cut with). */
const replaying = (on: Database, migrations = on.migrations): Database => ({ ...on, migrations, freshSchema: undefined })

describe('migrations on SQLite', () => {
  let db: Database
  let drop: () => Promise<void>

  beforeEach(async () => {
    const empty = await emptyDatabase('sqlite')
    db = await openDatabase({ database: empty.location })
    drop = empty.drop
  })
  afterEach(async () => {
    await db.close()
    await drop()
  })

  test('a new database gets the whole schema at once and records every migration as applied', async () => {
    const tags = db.migrations.map((m) => m.tag)
    expect(db.freshSchema?.length).toBeGreaterThan(0)
    expect(await migrate(db)).toEqual(tags)
    expect(await schemaOf(db)).toEqual([...(db.freshSchema ?? [])])
    expect(await ledger(db)).toEqual(tags)
    expect(await migrate(db)).toEqual([])
  })

  test('replaying every migration ends at exactly the fresh schema (regenerate it when this fails)', async () => {
    expect(await migrate(replaying(db))).toEqual(db.migrations.map((m) => m.tag))
    expect(await schemaOf(db)).toEqual([...(db.freshSchema ?? [])])
  })

  test('a database part of the way along replays only the migrations it has not seen', async () => {
    const seen = db.migrations.slice(0, 10)
    await migrate(replaying(db, seen))
    expect(await migrate(db)).toEqual(db.migrations.slice(10).map((m) => m.tag))
    expect(await schemaOf(db)).toEqual([...(db.freshSchema ?? [])])
    expect(await ledger(db)).toEqual(db.migrations.map((m) => m.tag))
  })

  test('a fresh schema that fails part-way leaves no table and no record behind, and a later run succeeds', async () => {
    const broken: Database = { ...db, freshSchema: [...(db.freshSchema ?? []), 'CREATE TABLE broken (id text,'] }
    await expect(migrate(broken)).rejects.toThrow()
    expect(await schemaOf(db)).toEqual([])
    expect(await ledger(db)).toEqual([])
    expect(await migrate(db)).toEqual(db.migrations.map((m) => m.tag))
  })
})

for (const dialect of DIALECTS)
  describe(`gateways starting on one database at once (${dialect})`, () => {
    /** Two processes' connections to one database, each migrating it. */
    async function migrateTwiceAtOnce(before?: (db: Database) => Promise<unknown>) {
      const { location, drop } = await emptyDatabase(dialect)
      const [a, b] = [await openDatabase({ database: location }), await openDatabase({ database: location })]
      try {
        await before?.(a)
        const results = await Promise.all([migrate(a), migrate(b)])
        return { results, ledger: await ledger(a), tags: a.migrations.map((m) => m.tag) }
      } finally {
        await a.close()
        await b.close()
        await drop()
      }
    }

    test('on a new database both succeed, and every migration is applied once', async () => {
      const { results, ledger: recorded, tags } = await migrateTwiceAtOnce()
      expect(results.flat().sort()).toEqual([...tags].sort())
      expect(recorded).toEqual([...tags].sort())
    })

    test('part of the way along, both succeed, and the rest is applied once', async () => {
      const {
        results,
        ledger: recorded,
        tags,
      } = await migrateTwiceAtOnce((db) => migrate(replaying(db, db.migrations.slice(0, 10))))
      expect(results.flat().sort()).toEqual(tags.slice(10).sort())
      expect(recorded).toEqual([...tags].sort())
    })
  })
