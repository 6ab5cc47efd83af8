import type { Database } from './database'

export interface EmbeddedMigration {
  /** drizzle-kit's file name without `.sql`; applied in this order, each exactly once. */
  tag: string
  sql: string
}

const BREAKPOINT = '--> statement-breakpoint'

/**
 * Applies the embedded migrations that the database has not seen yet, each in its own transaction,
 * and records them in `gw_migrations`. Our own runner rather than drizzle's folder-based migrator:
 * inside the compiled binary there is no migrations folder to read.
 */
export async function migrate(
  db: Database,
  migrations: readonly EmbeddedMigration[],
  now: () => number = Date.now,
): Promise<string[]> {
  await db.execute('CREATE TABLE IF NOT EXISTS gw_migrations (tag TEXT PRIMARY KEY, applied_at BIGINT NOT NULL)')
  const applied = new Set((await db.query<{ tag: string }>('SELECT tag FROM gw_migrations')).map((r) => r.tag))
  const done: string[] = []
  for (const migration of migrations) {
    if (applied.has(migration.tag)) continue
    const statements = migration.sql
      .split(BREAKPOINT)
      .map((s) => s.trim())
      .filter((s) => s.length > 0)
    await db.transaction(async (tx) => {
      for (const statement of statements) await tx.execute(statement)
      await tx.execute('INSERT INTO gw_migrations (tag, applied_at) VALUES ($1, $2)', [migration.tag, now()])
    })
    done.push(migration.tag)
  }
  return done
}
