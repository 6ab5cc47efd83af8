import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Database, openDatabase } from '../src/store/database'
import { migrate, SQLITE_SCHEMA_DUMP } from '../src/store/migrate'

/**
 * A new SQLite database is given the schema its migrations end at in one transaction, rather than
 * replaying them (which rebuilds tables over and over). Either way must end at the same schema, and
 * a database that has applied some migrations must get exactly the rest.
 */
let dir: string
let db: Database

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gw-migrate-'))
  db = await openDatabase({ database: { kind: 'sqlite', path: join(dir, 'gw.db') } })
})
afterEach(async () => {
  await db.close()
  rmSync(dir, { recursive: true, force: true })
})

const schemaOf = async (on: Database) => (await on.query<{ sql: string }>(SQLITE_SCHEMA_DUMP)).map((r) => r.sql)
const ledger = async (on: Database) =>
  (await on.query<{ tag: string }>('SELECT tag FROM gw_migrations ORDER BY tag')).map((r) => r.tag)
/** The same database, with only the migrations to replay (no fresh schema to take a short cut with). */
const replaying = (migrations = db.migrations): Database => ({ ...db, migrations, freshSchema: undefined })

describe('migrations on SQLite', () => {
  test('a new database gets the whole schema at once and records every migration as applied', async () => {
    const tags = db.migrations.map((m) => m.tag)
    expect(db.freshSchema?.length).toBeGreaterThan(0)
    expect(await migrate(db)).toEqual(tags)
    expect(await schemaOf(db)).toEqual([...(db.freshSchema ?? [])])
    expect(await ledger(db)).toEqual(tags)
    expect(await migrate(db)).toEqual([])
  })

  test('replaying every migration ends at exactly the fresh schema (regenerate it when this fails)', async () => {
    expect(await migrate(replaying())).toEqual(db.migrations.map((m) => m.tag))
    expect(await schemaOf(db)).toEqual([...(db.freshSchema ?? [])])
  })

  test('a database part of the way along replays only the migrations it has not seen', async () => {
    const seen = db.migrations.slice(0, 10)
    await migrate(replaying(seen))
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
