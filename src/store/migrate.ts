import type { Database } from './database'

export interface EmbeddedMigration {
  /** drizzle-kit's file name without `.sql`; applied in this order, each exactly once. */
  tag: string
  sql: string
}

/** Every migration of a dialect, and, where it has one, the schema they end at (created at once on a database that has none). */
export interface MigrationSet {
  migrations: readonly EmbeddedMigration[]
  freshSchema?: readonly string[]
}

const BREAKPOINT = '--> statement-breakpoint'

/** A migration's statements, in order: drizzle-kit separates them with a breakpoint comment. */
export function statementsOf(migration: EmbeddedMigration): string[] {
  return migration.sql
    .split(BREAKPOINT)
    .map((s) => s.trim())
    .filter((s) => s.length > 0)
}

/** Where each applied migration is recorded, by its tag. */
export const LEDGER_DDL = 'CREATE TABLE IF NOT EXISTS gw_migrations (tag TEXT PRIMARY KEY, applied_at BIGINT NOT NULL)'

/**
 * Brings the database's schema up to date, and records every migration applied in `gw_migrations`.
 * Our own runner rather than drizzle's folder-based migrator: inside the compiled binary there is no
 * migrations folder to read.
 *
 * A database that has applied none of them is given the schema they end at in one transaction, when
 * the dialect has it (`freshSchema`): replayed, the SQLite migrations rebuild tables over and over,
 * and that was most of a first start's time. A database that has applied some gets the rest replayed,
 * each in its own transaction, so a failing one leaves the database at the one before it.
 *
 * Several gateways may start on one new database at once (replicas of a deployment, or `gw bootstrap`
 * beside `gw serve`): each step runs under the migration lock and first checks what is recorded by
 * then, so a step another process took is skipped, not run twice.
 */
export async function migrate(db: Database, now: () => number = Date.now): Promise<string[]> {
  // Most starts find every migration recorded: a read says so without the lock's write transaction.
  // Any failure of that read (no ledger yet, above all) leaves it to the steps below.
  const recorded = await appliedTags(db).catch(() => undefined)
  if (recorded && db.migrationTags.every((tag) => recorded.has(tag))) return []
  const { migrations, freshSchema } = await db.loadMigrations()
  await underLock(db, (tx) => tx.execute(LEDGER_DDL))
  // Each step below reads the ledger again under the lock: what another process applied since is skipped.
  const applied = recorded ?? (await appliedTags(db))
  if (applied.size === 0 && freshSchema !== undefined) {
    const created = await underLock(db, async (tx) => {
      if ((await appliedTags(tx)).size > 0) return false
      for (const statement of freshSchema) await tx.execute(statement)
      for (const migration of migrations) await record(tx, migration, now)
      return true
    })
    if (created) return migrations.map((m) => m.tag)
  }
  const done: string[] = []
  for (const migration of migrations) {
    if (applied.has(migration.tag)) continue
    const ran = await underLock(db, async (tx) => {
      if ((await appliedTags(tx)).has(migration.tag)) return false
      for (const statement of statementsOf(migration)) await tx.execute(statement)
      await record(tx, migration, now)
      return true
    })
    if (ran) done.push(migration.tag)
  }
  return done
}

/**
 * Postgres's advisory lock for migrating, held until the transaction ends: a number of gw's own (no
 * other user of a shared database is likely to pick it). SQLite needs none: a transaction there
 * begins IMMEDIATE, which already takes the database's one write lock.
 */
const MIGRATION_LOCK = 7_073_101_001

/** A transaction that no other process's migration step runs beside. */
function underLock<T>(db: Database, work: (tx: Database) => Promise<T>): Promise<T> {
  return db.transaction(async (tx) => {
    if (db.dialect === 'postgres') await tx.execute(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`)
    return work(tx)
  })
}

async function appliedTags(db: Database): Promise<Set<string>> {
  return new Set((await db.query<{ tag: string }>('SELECT tag FROM gw_migrations')).map((r) => r.tag))
}

function record(tx: Database, migration: EmbeddedMigration, now: () => number): Promise<void> {
  return tx.execute('INSERT INTO gw_migrations (tag, applied_at) VALUES ($1, $2)', [migration.tag, now()])
}

/**
 * Reads back a SQLite database's schema as the statements that create it: tables, then indexes, then
 * anything else, each kind in the order it was created. SQLite keeps each object's definition as
 * written (after renames), so two databases with the same dump have the same schema. The migration
 * ledger is left out: it is the runner's, not the schema's.
 */
export const SQLITE_SCHEMA_DUMP = `SELECT sql FROM sqlite_master
  WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' AND name <> 'gw_migrations'
  ORDER BY CASE type WHEN 'table' THEN 0 WHEN 'index' THEN 1 ELSE 2 END, rowid`
