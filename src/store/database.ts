import { Database as SqliteClient } from 'bun:sqlite'
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { type SQL, sql } from 'drizzle-orm'
import { type BunSQLiteDatabase, drizzle as drizzleSqlite } from 'drizzle-orm/bun-sqlite'
import type { drizzle as drizzlePg } from 'drizzle-orm/postgres-js'
import type { Config } from '../config'
import type { EmbeddedMigration } from './migrate'
import { pgMigrations, sqliteMigrations } from './migrations.generated'
import type * as pgSchema from './schema.pg'
import * as sqliteSchema from './schema.sqlite'

export type Tables = typeof sqliteSchema

/**
 * The query builder the repositories are written against. Both dialect schemas are kept column for
 * column alike (same names, same JS types), so one repository serves both; the Postgres instance is
 * seen through the SQLite builder's type (see `openPostgres`) and the store contract tests run every
 * repository on both dialects, which is what keeps that view honest.
 */
export type Orm = BunSQLiteDatabase<Tables>

export type Dialect = 'sqlite' | 'postgres'

export interface Database {
  readonly dialect: Dialect
  readonly orm: Orm
  readonly tables: Tables
  readonly migrations: readonly EmbeddedMigration[]
  /** Raw statement, `$1`-style parameters; used by the migration runner and health checks. */
  execute(statement: string, params?: readonly unknown[]): Promise<void>
  query<Row>(statement: string, params?: readonly unknown[]): Promise<Row[]>
  /** A statement built with drizzle's `sql` (values bound), for what the query builder cannot say in both dialects. */
  all<Row>(statement: SQL): Promise<Row[]>
  /** Runs `work` atomically; everything it does goes through the `Database` it is handed. */
  transaction<T>(work: (tx: Database) => Promise<T>): Promise<T>
  /**
   * Runs `work`, and again while another connection holds the database's write lock, waiting on a
   * timer in between. SQLite only (Postgres waits for locks in the server, off our thread): a
   * repository call through it never stalls the event loop on the request log's writer.
   */
  readonly whenUnlocked?: <T>(work: () => Promise<T>) => Promise<T>
  close(): Promise<void>
}

export async function openDatabase(config: Pick<Config, 'database'>, options: { lockWaitMs?: number } = {}): Promise<Database> {
  return config.database.kind === 'sqlite'
    ? openSqlite(config.database.path, options.lockWaitMs)
    : openPostgres(config.database.url)
}

/** How long a SQLite statement waits for another connection's write lock before it fails. */
const LOCK_WAIT_MS = 5_000
/** Between tries: short, since the writer's transactions last a few ms, and capped, since a timer costs little. */
const lockRetryDelayMs = (attempt: number) => Math.min(1 + attempt, 5)

const isBusy = (error: unknown): boolean => {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY')
}

/** `$1` -> `?1`: SQLite's numbered parameter, so raw statements are written once for both dialects. */
const toSqliteParams = (statement: string): string => statement.replace(/\$(\d+)/g, '?$1')

function openSqlite(path: string, lockWaitMs = LOCK_WAIT_MS): Database {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true })
  const client = new SqliteClient(path, { create: true, strict: true })
  // Opening may wait for a lock the old way: nothing is being served yet.
  client.run(`PRAGMA busy_timeout = ${lockWaitMs}`)
  client.run('PRAGMA journal_mode = WAL')
  client.run('PRAGMA foreign_keys = ON')
  client.run('PRAGMA synchronous = NORMAL')
  // From here a locked database fails at once and `whenUnlocked` waits: SQLite's own busy handler
  // sleeps the calling thread, and on the server's loop a write that met one of the request log's
  // transactions held every request in flight (a lock held 20 ms stalled it 34 ms; docs/decisions.md).
  client.run('PRAGMA busy_timeout = 0')
  const orm = drizzleSqlite({ client, schema: sqliteSchema })
  const whenUnlocked = async <T>(work: () => Promise<T>): Promise<T> => {
    const deadline = Date.now() + lockWaitMs
    for (let attempt = 0; ; attempt++) {
      try {
        return await work()
      } catch (error) {
        // Inside a transaction the lock is ours already: a busy error there is no wait for it, and
        // its statements must not run twice.
        if (!isBusy(error) || client.inTransaction || Date.now() >= deadline) throw error
        await Bun.sleep(lockRetryDelayMs(attempt))
      }
    }
  }
  // bun:sqlite is one connection: an async transaction must not interleave with another one, so
  // transactions queue behind each other. Statements outside a transaction are single and atomic.
  let queue: Promise<unknown> = Promise.resolve()
  const db: Database = {
    dialect: 'sqlite',
    orm,
    tables: sqliteSchema,
    migrations: sqliteMigrations,
    whenUnlocked,
    execute: (statement, params = []) =>
      whenUnlocked(async () => {
        client.run(toSqliteParams(statement), params as never)
      }),
    query: <Row>(statement: string, params: readonly unknown[] = []) =>
      whenUnlocked(async () => client.query(toSqliteParams(statement)).all(...(params as never[])) as Row[]),
    all: <Row>(statement: SQL) => whenUnlocked(async () => orm.all<Row>(statement)),
    transaction<T>(work: (tx: Database) => Promise<T>): Promise<T> {
      const run = async (): Promise<T> => {
        await whenUnlocked(async () => client.run('BEGIN IMMEDIATE'))
        try {
          const result = await work(db)
          client.run('COMMIT')
          return result
        } catch (error) {
          client.run('ROLLBACK')
          throw error
        }
      }
      const result = queue.then(run, run)
      queue = result.catch(() => undefined)
      return result
    },
    async close() {
      client.close()
    },
  }
  return db
}

/** The Postgres driver, its drizzle adapter and schema are loaded only when configured: they weigh on start-up. */
async function openPostgres(url: string): Promise<Database> {
  const [{ default: postgres }, { drizzle }, schema] = await Promise.all([
    import('postgres'),
    import('drizzle-orm/postgres-js'),
    import('./schema.pg'),
  ])
  const client = postgres(url, { max: 10, onnotice: () => undefined })
  return wrapPostgres(drizzle({ client, schema }), schema, () => client.end({ timeout: 5 }))
}

type PgOrm = ReturnType<typeof drizzlePg<typeof pgSchema>>
type PgExecutor = Pick<PgOrm, 'execute' | 'transaction'>

function wrapPostgres(pg: PgExecutor, schema: typeof pgSchema, close: () => Promise<void>): Database {
  const raw = (statement: string, params: readonly unknown[]): SQL => {
    // Raw statements carry `$n` placeholders; rebuild them as a drizzle SQL with bound values.
    const parts = statement.split(/\$\d+/)
    const order = [...statement.matchAll(/\$(\d+)/g)].map((m) => Number(m[1]) - 1)
    const chunks = parts.flatMap((part, i) =>
      i < order.length ? [sql.raw(part), sql`${params[order[i] as number]}`] : [sql.raw(part)],
    )
    return sql.join(chunks)
  }
  return {
    dialect: 'postgres',
    // The one place the two dialects meet; see the comment on `Orm`.
    orm: pg as unknown as Orm,
    tables: schema as unknown as Tables,
    migrations: pgMigrations,
    async execute(statement, params = []) {
      await pg.execute(raw(statement, params))
    },
    async query<Row>(statement: string, params: readonly unknown[] = []) {
      return [...(await pg.execute(raw(statement, params)))] as Row[]
    },
    async all<Row>(statement: SQL) {
      return [...(await pg.execute(statement))] as Row[]
    },
    transaction<T>(work: (tx: Database) => Promise<T>): Promise<T> {
      return pg.transaction((tx) => work(wrapPostgres(tx as unknown as PgExecutor, schema, close)))
    },
    close,
  }
}
