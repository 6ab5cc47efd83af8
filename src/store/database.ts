import { Database as SqliteClient } from 'bun:sqlite'
import type { AsyncLocalStorage } from 'node:async_hooks'
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { type SQL, sql } from 'drizzle-orm'
import { type BunSQLiteDatabase, drizzle as drizzleSqlite } from 'drizzle-orm/bun-sqlite'
import type { drizzle as drizzlePg } from 'drizzle-orm/postgres-js'
import type { MigrationSet } from './migrate'
import { pgMigrationTags, sqliteMigrationTags } from './migration-tags.generated'
import type { tables as pgTables } from './schema.pg'
import { tables as sqliteTables } from './schema.sqlite'
import { placeSqliteTemplate } from './sqlite-template'

export type Tables = typeof sqliteTables

/**
 * The query builder the repositories are written against. Both dialect schemas are kept column for
 * column alike (same names, same JS types), so one repository serves both; the Postgres instance is
 * seen through the SQLite builder's type (see `openPostgres`) and the store contract tests run every
 * repository on both dialects, which is what keeps that view honest.
 */
export type Orm = BunSQLiteDatabase

export type Dialect = 'sqlite' | 'postgres'

export interface Database {
  readonly dialect: Dialect
  readonly orm: Orm
  readonly tables: Tables
  /** The migrations' tags, in the order they apply: what a database at the current schema has recorded. */
  readonly migrationTags: readonly string[]
  /**
   * The migrations themselves, and the schema they end at where the dialect has one: read only when a
   * database lacks some. Their text is most of what the executable embeds, and evaluating it was about
   * 2 ms of every start on a database that has them all.
   */
  loadMigrations(): Promise<MigrationSet>
  /** The migrations a new SQLite database was created at, as a copy of the embedded one (sqlite-template.ts). */
  readonly created?: readonly string[]
  /** Raw statement, `$1`-style parameters; used by the migration runner and health checks. */
  execute(statement: string, params?: readonly unknown[]): Promise<void>
  query<Row>(statement: string, params?: readonly unknown[]): Promise<Row[]>
  /** A statement built with drizzle's `sql` (values bound), for what the query builder cannot say in both dialects. */
  all<Row>(statement: SQL): Promise<Row[]>
  /** Runs `work` atomically; everything it does goes through the `Database` it is handed. */
  transaction<T>(work: (tx: Database) => Promise<T>): Promise<T>
  /**
   * SQLite only: a statement compiled once, run with positional `?` parameters, answering how many rows
   * it changed. For the writes made thousands of times a second (the request log's records and bodies,
   * see positional-insert.ts). Postgres has none: its writes go in multi-row statements.
   */
  readonly prepare?: (statement: string) => (params: readonly unknown[]) => number
  /**
   * Runs `work`, a statement that is part of no transaction: every repository call of the store goes
   * through it. Issued from inside a transaction's work it is refused at once, since it would not be
   * part of that transaction (use the repositories the transaction hands its work). On SQLite it also
   * waits until no transaction of ours is open (bun:sqlite is one connection, and a statement run
   * meanwhile would join it), and while another connection holds the write lock it tries again on a
   * timer, never stalling the event loop on the request log's writer.
   */
  outsideTransactions<T>(work: () => Promise<T>): Promise<T>
  close(): Promise<void>
}

/** Knows whether the code running now is a transaction's work: a statement outside it is then a mistake. */
class TransactionScope {
  /**
   * Made with the first transaction: a process that runs none (a start, and the gateway's own calls,
   * whose records the log's writer thread writes) never evaluates node:async_hooks.
   */
  private inside: AsyncLocalStorage<true> | undefined

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (!this.inside) {
      const { AsyncLocalStorage } = await import('node:async_hooks')
      // Checked again after the import: two first transactions at once must share one store.
      this.inside ??= new AsyncLocalStorage<true>()
    }
    return this.inside.run(true, work)
  }

  refuseInside(): void {
    if (this.inside?.getStore())
      throw new Error(
        'a statement outside the transaction was issued from inside it; use the repositories the transaction hands its work',
      )
  }
}

/** Where the database is: GW_DATABASE_URL, read by the configuration. */
export type DatabaseLocation = { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string }

export async function openDatabase(
  config: { database: DatabaseLocation },
  options: { lockWaitMs?: number; template?: boolean } = {},
): Promise<Database> {
  return config.database.kind === 'sqlite'
    ? await openSqlite(config.database.path, options.lockWaitMs, options.template)
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

async function openSqlite(path: string, lockWaitMs = LOCK_WAIT_MS, template = true): Promise<Database> {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true })
  const created = template && path !== ':memory:' ? await placeSqliteTemplate(path) : undefined
  const client = new SqliteClient(path, { create: true, strict: true })
  // Opening may wait for a lock the old way: nothing is being served yet.
  client.run(`PRAGMA busy_timeout = ${lockWaitMs}`)
  client.run('PRAGMA journal_mode = WAL')
  client.run('PRAGMA foreign_keys = ON')
  client.run('PRAGMA synchronous = NORMAL')
  // The copy recorded its migrations as applied at time 0; they were applied now.
  if (created) client.run('UPDATE gw_migrations SET applied_at = ?', [Date.now()])
  // From here a locked database fails at once and `whenUnlocked` waits: SQLite's own busy handler
  // sleeps the calling thread, and on the server's loop a write that met one of the request log's
  // transactions held every request in flight (a lock held 20 ms stalled it 34 ms; docs/decisions.md).
  client.run('PRAGMA busy_timeout = 0')
  // Without the schema: given one, drizzle builds its relational-query map of every table (each
  // table's indexes and keys) when the database is opened, for an API gw does not use.
  const orm = drizzleSqlite({ client })

  /**
   * bun:sqlite is one connection, and a statement runs on it whatever else is open: one issued by
   * another request between the awaits of an open transaction would join that transaction, and be
   * rolled back with it. So transactions take turns, and a statement from outside waits until none is
   * open. A statement issued from inside a transaction's own work through the store outside it would
   * wait for itself: that is refused at once, loudly.
   */
  let queue: Promise<unknown> = Promise.resolve()
  let open = false
  let closed: Array<() => void> = []
  const scope = new TransactionScope()
  // Checked in place: every repository call passes here, and mostly no transaction is open.
  const noTransactionOpen = (): Promise<void> | undefined => {
    scope.refuseInside()
    return open ? untilClosed() : undefined
  }
  const untilClosed = async (): Promise<void> => {
    while (open) await new Promise<void>((resolve) => closed.push(resolve))
  }

  const outsideTransactions = async <T>(work: () => Promise<T>): Promise<T> => {
    const waiting = noTransactionOpen()
    if (waiting) await waiting
    // Real time, not the injected clock: this bounds how long the caller really sleeps on a lock.
    const deadline = Date.now() + lockWaitMs
    for (let attempt = 0; ; attempt++) {
      try {
        return await work()
      } catch (error) {
        if (!isBusy(error) || Date.now() >= deadline) throw error
        await Bun.sleep(lockRetryDelayMs(attempt))
        await untilClosed()
      }
    }
  }

  /** Statements run as they come: only a transaction's own work holds this one. */
  const direct = {
    execute: async (statement: string, params: readonly unknown[] = []) => {
      client.run(toSqliteParams(statement), params as never)
    },
    query: async <Row>(statement: string, params: readonly unknown[] = []) =>
      client.query(toSqliteParams(statement)).all(...(params as never[])) as Row[],
    all: async <Row>(statement: SQL) => orm.all<Row>(statement),
  }
  const common = {
    dialect: 'sqlite' as const,
    orm,
    tables: sqliteTables,
    migrationTags: sqliteMigrationTags,
    loadMigrations: async (): Promise<MigrationSet> => {
      const { sqliteMigrations, sqliteFreshSchema } = await import('./migrations.generated')
      return { migrations: sqliteMigrations, freshSchema: sqliteFreshSchema }
    },
    created,
    prepare: (statement: string) => {
      const compiled = client.prepare(statement)
      return (params: readonly unknown[]) => compiled.run(...(params as never[])).changes
    },
    close: async () => client.close(),
  }
  const inTransaction: Database = {
    ...common,
    ...direct,
    outsideTransactions: (work) => work(),
    // Already atomic: work nested in a transaction is part of it.
    transaction: (work) => work(inTransaction),
  }
  const db: Database = {
    ...common,
    outsideTransactions,
    execute: (statement, params) => outsideTransactions(() => direct.execute(statement, params)),
    query: <Row>(statement: string, params?: readonly unknown[]) =>
      outsideTransactions(() => direct.query<Row>(statement, params)),
    all: <Row>(statement: SQL) => outsideTransactions(() => direct.all<Row>(statement)),
    transaction<T>(work: (tx: Database) => Promise<T>): Promise<T> {
      const run = async (): Promise<T> => {
        await outsideTransactions(async () => client.run('BEGIN IMMEDIATE'))
        open = true
        try {
          const result = await scope.run(() => work(inTransaction))
          client.run('COMMIT')
          return result
        } catch (error) {
          client.run('ROLLBACK')
          throw error
        } finally {
          open = false
          const waiting = closed
          closed = []
          for (const resume of waiting) resume()
        }
      }
      const result = queue.then(run, run)
      queue = result.catch(() => undefined)
      return result
    },
  }
  return db
}

/** The Postgres driver, its drizzle adapter and schema are loaded only when configured: they weigh on start-up. */
async function openPostgres(url: string): Promise<Database> {
  const [{ default: postgres }, { drizzle }, { tables }] = await Promise.all([
    import('postgres'),
    import('drizzle-orm/postgres-js'),
    import('./schema.pg'),
  ])
  // A database that does not answer fails a call within seconds instead of holding it for the driver's 30 s default.
  const client = postgres(url, { max: 10, connect_timeout: 5, onnotice: () => undefined })
  return wrapPostgres(drizzle({ client }), tables, () => client.end({ timeout: 5 }), new TransactionScope())
}

type PgOrm = ReturnType<typeof drizzlePg>
type PgExecutor = Pick<PgOrm, 'execute' | 'transaction'>

/**
 * The database, or (without `scope`) one transaction of it. Postgres serves each statement outside a
 * transaction on a pooled connection of its own, so nothing waits; only the mistake of a statement
 * meant for a transaction but issued outside it is refused.
 */
function wrapPostgres(pg: PgExecutor, tables: typeof pgTables, close: () => Promise<void>, scope?: TransactionScope): Database {
  const outsideTransactions = async <T>(work: () => Promise<T>): Promise<T> => {
    scope?.refuseInside()
    return work()
  }
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
    tables: tables as unknown as Tables,
    migrationTags: pgMigrationTags,
    loadMigrations: async (): Promise<MigrationSet> => ({ migrations: (await import('./migrations.generated')).pgMigrations }),
    outsideTransactions,
    execute: (statement, params = []) =>
      outsideTransactions(async () => {
        await pg.execute(raw(statement, params))
      }),
    query: <Row>(statement: string, params: readonly unknown[] = []) =>
      outsideTransactions(async () => [...(await pg.execute(raw(statement, params)))] as Row[]),
    all: <Row>(statement: SQL) => outsideTransactions(async () => [...(await pg.execute(statement))] as Row[]),
    transaction<T>(work: (tx: Database) => Promise<T>): Promise<T> {
      scope?.refuseInside()
      const run = (tx: unknown) => work(wrapPostgres(tx as PgExecutor, tables, close))
      return scope ? pg.transaction((tx) => scope.run(() => run(tx))) : pg.transaction(run)
    },
    close,
  }
}
