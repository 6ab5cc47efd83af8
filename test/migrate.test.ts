import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Database, openDatabase } from '../src/store/database'
import { migrate, SQLITE_SCHEMA_DUMP } from '../src/store/migrate'
import { sqliteMigrationTags } from '../src/store/migration-tags.generated'
import { placeSqliteTemplate } from '../src/store/sqlite-template'
import { DIALECTS, emptyDatabase } from './support/harness'

/**
 * A new SQLite database is given the schema its migrations end at in one transaction, rather than
 * replaying them (which rebuilds tables over and over). Either way must end at the same schema, and
 * a database that has applied some migrations must get exactly the rest.
 */
const schemaOf = async (on: Database) => (await on.query<{ sql: string }>(SQLITE_SCHEMA_DUMP)).map((r) => r.sql)
const ledger = async (on: Database) =>
  (await on.query<{ tag: string }>('SELECT tag FROM gw_migrations ORDER BY tag')).map((r) => r.tag)
/** The schema every migration ends at, as the dialect embeds it. */
const freshSchemaOf = async (on: Database) => [...((await on.loadMigrations()).freshSchema ?? [])]
/** The same database, with only its first `count` migrations to replay (no fresh schema to take a short cut with). */
const replaying = async (on: Database, count?: number): Promise<Database> => {
  const migrations = (await on.loadMigrations()).migrations.slice(0, count)
  return { ...on, migrationTags: migrations.map((m) => m.tag), loadMigrations: async () => ({ migrations }) }
}

describe('migrations on SQLite', () => {
  let db: Database
  let drop: () => Promise<void>

  beforeEach(async () => {
    const empty = await emptyDatabase('sqlite')
    // Made by its statements, as a database is when the embedded copy cannot be placed.
    db = await openDatabase({ database: empty.location }, { template: false })
    drop = empty.drop
  })
  afterEach(async () => {
    await db.close()
    await drop()
  })

  test('a new database gets the whole schema at once and records every migration as applied', async () => {
    const tags = db.migrationTags
    expect((await freshSchemaOf(db)).length).toBeGreaterThan(0)
    expect(await migrate(db)).toEqual([...tags])
    expect(await schemaOf(db)).toEqual(await freshSchemaOf(db))
    expect(await ledger(db)).toEqual([...tags])
    expect(await migrate(db)).toEqual([])
  })

  test('replaying every migration ends at exactly the fresh schema (regenerate it when this fails)', async () => {
    expect(await migrate(await replaying(db))).toEqual([...db.migrationTags])
    expect(await schemaOf(db)).toEqual(await freshSchemaOf(db))
  })

  test('a database part of the way along replays only the migrations it has not seen', async () => {
    await migrate(await replaying(db, 10))
    expect(await migrate(db)).toEqual(db.migrationTags.slice(10))
    expect(await schemaOf(db)).toEqual(await freshSchemaOf(db))
    expect(await ledger(db)).toEqual([...db.migrationTags])
  })

  test('a fresh schema that fails part-way leaves no table and no record behind, and a later run succeeds', async () => {
    const { migrations } = await db.loadMigrations()
    const freshSchema = [...(await freshSchemaOf(db)), 'CREATE TABLE broken (id text,']
    const broken: Database = { ...db, loadMigrations: async () => ({ migrations, freshSchema }) }
    await expect(migrate(broken)).rejects.toThrow()
    expect(await schemaOf(db)).toEqual([])
    expect(await ledger(db)).toEqual([])
    expect(await migrate(db)).toEqual([...db.migrationTags])
  })
})

for (const dialect of DIALECTS)
  test(`a start compares the embedded migrations' own tags, in order (${dialect})`, async () => {
    const { location, drop } = await emptyDatabase(dialect)
    const db = await openDatabase({ database: location }, { template: false })
    try {
      expect(db.migrationTags.length).toBeGreaterThan(0)
      expect((await db.loadMigrations()).migrations.map((m) => m.tag)).toEqual([...db.migrationTags])
    } finally {
      await db.close()
      await drop()
    }
  })

for (const dialect of DIALECTS)
  describe(`gateways starting on one database at once (${dialect})`, () => {
    /** Two processes' connections to one database, each migrating it. */
    async function migrateTwiceAtOnce(before?: (db: Database) => Promise<unknown>) {
      const { location, drop } = await emptyDatabase(dialect)
      const open = () => openDatabase({ database: location }, { template: false })
      const [a, b] = [await open(), await open()]
      try {
        await before?.(a)
        const results = await Promise.all([migrate(a), migrate(b)])
        return { results, ledger: await ledger(a), tags: [...a.migrationTags] }
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
      const { results, ledger: recorded, tags } = await migrateTwiceAtOnce(async (db) => migrate(await replaying(db, 10)))
      expect(results.flat().sort()).toEqual(tags.slice(10).sort())
      expect(recorded).toEqual([...tags].sort())
    })
  })

describe('a new SQLite database from the embedded copy', () => {
  let dir: string
  const path = () => join(dir, 'gw.db')
  const open = () => openDatabase({ database: { kind: 'sqlite', path: path() } })
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'gw-template-test-'))
  })
  afterEach(() => rmSync(dir, { recursive: true, force: true }))

  test('has the fresh schema and every migration, recorded as applied when it was made', async () => {
    const before = Date.now()
    const db = await open()
    try {
      const tags = db.migrationTags
      expect(db.created).toEqual(tags)
      expect(await schemaOf(db)).toEqual(await freshSchemaOf(db))
      const recorded = await db.query<{ tag: string; applied_at: number }>(
        'SELECT tag, applied_at FROM gw_migrations ORDER BY tag',
      )
      expect(recorded.map((r) => r.tag)).toEqual([...tags].sort())
      for (const row of recorded) expect(Number(row.applied_at)).toBeGreaterThanOrEqual(before)
      expect(await migrate(db)).toEqual([])
      expect((await db.query<{ journal_mode: string }>('PRAGMA journal_mode'))[0]?.journal_mode).toBe('wal')
      expect(await db.query('PRAGMA integrity_check')).toEqual([{ integrity_check: 'ok' }])
      // Nothing staged is left beside it.
      expect(readdirSync(dir).filter((f) => f.endsWith('.new'))).toEqual([])
    } finally {
      await db.close()
    }
  })

  test('a database that exists is opened as it is, with what it holds', async () => {
    const first = await open()
    await first.execute("INSERT INTO organizations (id, name, tier, created_at) VALUES ('org_kept', 'Kept', 'free', 1)")
    await first.close()
    const again = await open()
    try {
      expect(again.created).toBeUndefined()
      expect(await again.query<{ id: string }>('SELECT id FROM organizations')).toEqual([{ id: 'org_kept' }])
    } finally {
      await again.close()
    }
  })

  test('beside what is left of a database (its write-ahead log), nothing is copied: it is made by its statements', async () => {
    writeFileSync(`${path()}-wal`, '')
    expect(await placeSqliteTemplate(path())).toBeUndefined()
    expect(existsSync(path())).toBe(false)
    const db = await open()
    try {
      expect(db.created).toBeUndefined()
      expect(await migrate(db)).toEqual([...db.migrationTags])
      expect(await schemaOf(db)).toEqual(await freshSchemaOf(db))
    } finally {
      await db.close()
    }
  })

  test('when two start on one new directory, one copy is placed and the other opens it', async () => {
    expect(await placeSqliteTemplate(path())).toEqual(sqliteMigrationTags)
    expect(await placeSqliteTemplate(path())).toBeUndefined()
    const db = await open()
    try {
      expect(db.created).toBeUndefined()
      expect(await migrate(db)).toEqual([])
      expect(await schemaOf(db)).toEqual(await freshSchemaOf(db))
    } finally {
      await db.close()
    }
  })
})
