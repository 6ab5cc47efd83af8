import { eq, sql } from 'drizzle-orm'
import type { SQLiteColumn, SQLiteTable } from 'drizzle-orm/sqlite-core'
import type { Database, Dialect, Orm } from './database'
import { narrowing, type OrgRows, type OrgTable } from './scope'

/** A select drizzle can compile, its values given as `sql.placeholder`s (the SQLite builder's type stands for both dialects). */
interface CompilableSelect {
  prepare(): { all(values: Record<string, unknown>): unknown }
}

type Read<Row> = (values: Record<string, unknown>) => Promise<Row[]>

/**
 * A read that drizzle builds and the database compiles once, then runs with each call's values: for
 * the reads made many times a second. Built anew each time, a query took about 50 µs of the server's
 * loop to build and, on SQLite, as long again to compile, against under 10 µs to run; with 500 API
 * keys in use (each key's record read again every second) that was a third of the loop's time.
 *
 * `build` runs on the first read. On Postgres the query runs as the query builder runs it, as an unnamed
 * statement: drizzle's named form makes postgres.js keep a prepared statement per connection, and
 * with it POST /v1/feedback answered 503 in three runs of the hostile-input suite on one machine (not
 * in three on another; the cause is not known). `_prepare` is drizzle's own step between building and
 * running (what `await query` calls), kept out of its public types.
 */
export function compiledRead<Row>(dialect: Dialect, build: () => CompilableSelect): Read<Row> {
  let read: Read<Row> | undefined
  const compile = (): Read<Row> => {
    if (dialect === 'sqlite') {
      const statement = build().prepare()
      return async (values) => statement.all(values) as Row[]
    }
    type PgBuilt = { execute(values: Record<string, unknown>): Promise<Row[]> }
    const statement = (build() as unknown as { _prepare(): PgBuilt })._prepare()
    return (values) => statement.execute(values)
  }
  return (values) => {
    read ??= compile()
    return read(values)
  }
}

/** A table's row by its id, read by a statement compiled once. */
export function rowById<Row>(
  { orm, dialect }: Pick<Database, 'orm' | 'dialect'>,
  table: SQLiteTable & { id: SQLiteColumn },
): (id: string) => Promise<Row | undefined> {
  const read = compiledRead<Row>(dialect, () =>
    orm
      .select()
      .from(table)
      .where(eq(table.id, sql.placeholder('id')))
      .limit(1),
  )
  return async (id) => (await read({ id }))[0]
}

/** The statements compiled for every organisation, per query builder and by name (a Postgres transaction's has its own). */
const perQueryBuilder = new WeakMap<Orm, Map<string, Read<unknown>>>()

/**
 * One organisation's rows read by a statement compiled once for all organisations, and kept with its
 * database under `name`: an organisation's repositories are made for each call that uses them, and
 * their cached reads (chains, prices, keys, limits, rules, settings) are read again every second for
 * each organisation in use. `build` is given a `where` like `rows.where`, with a placeholder for the
 * organisation's id where `rows.where` names it, and each read binds `rows`' own organisation: scoped
 * by construction, as every statement of an organisation's repository is. Other placeholders take the
 * read's `values`.
 */
export function orgRead<Row>(
  db: Pick<Database, 'orm' | 'dialect'>,
  rows: OrgRows<OrgTable>,
  name: string,
  build: (where: OrgRows<OrgTable>['where']) => CompilableSelect,
): (values?: Record<string, unknown>) => Promise<Row[]> {
  let compiled = perQueryBuilder.get(db.orm)
  if (!compiled) {
    compiled = new Map()
    perQueryBuilder.set(db.orm, compiled)
  }
  let read = compiled.get(name)
  if (!read) {
    read = compiledRead<unknown>(db.dialect, () => build(narrowing(eq(rows.table.orgId, sql.placeholder('orgId')))))
    compiled.set(name, read)
  }
  const orgId = rows.orgId
  return (values) => (read as Read<Row>)({ ...values, orgId })
}
