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
  close(): Promise<void>
}

export async function openDatabase(config: Pick<Config, 'database'>): Promise<Database> {
  return config.database.kind === 'sqlite' ? openSqlite(config.database.path) : openPostgres(config.database.url)
}

/** `$1` -> `?1`: SQLite's numbered parameter, so raw statements are written once for both dialects. */
const toSqliteParams = (statement: string): string => statement.replace(/\$(\d+)/g, '?$1')

function openSqlite(path: string): Database {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true })
  const client = new SqliteClient(path, { create: true, strict: true })
  client.run('PRAGMA journal_mode = WAL')
  client.run('PRAGMA busy_timeout = 5000')
  client.run('PRAGMA foreign_keys = ON')
  client.run('PRAGMA synchronous = NORMAL')
  const orm = drizzleSqlite({ client, schema: sqliteSchema })
  // bun:sqlite is one connection: an async transaction must not interleave with another one, so
  // transactions queue behind each other. Statements outside a transaction are single and atomic.
  let queue: Promise<unknown> = Promise.resolve()
  const db: Database = {
    dialect: 'sqlite',
    orm,
    tables: sqliteSchema,
    migrations: sqliteMigrations,
    async execute(statement, params = []) {
      client.run(toSqliteParams(statement), params as never)
    },
    async query<Row>(statement: string, params: readonly unknown[] = []) {
      return client.query(toSqliteParams(statement)).all(...(params as never[])) as Row[]
    },
    async all<Row>(statement: SQL) {
      return orm.all<Row>(statement)
    },
    transaction<T>(work: (tx: Database) => Promise<T>): Promise<T> {
      const run = async (): Promise<T> => {
        client.run('BEGIN IMMEDIATE')
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
