import type { Dialect } from './database'

/** A select drizzle can compile, its values given as `sql.placeholder`s (the SQLite builder's type stands for both dialects). */
interface CompilableSelect {
  prepare(): { get(values: Record<string, unknown>): unknown }
}

/**
 * A read of one row by key that drizzle builds and the database compiles once, then runs with each
 * call's values: for the reads made many times a second (an API key's or an organisation's record when
 * the authenticator's cache of it expires, once a second per key in use; a call's record for every
 * metadata lookup). Built anew each time, the query took about 50 µs of the server's loop to build and,
 * on SQLite, as long again to compile, against under 10 µs to run; with 500 keys in use that was a
 * third of the loop's time.
 *
 * `build` runs on the first read. On Postgres the query runs as the query builder runs it, as an unnamed
 * statement: drizzle's named form makes postgres.js keep a prepared statement per connection, and
 * with it POST /v1/feedback answered 503 in three runs of the hostile-input suite on one machine (not
 * in three on another; the cause is not known). `_prepare` is drizzle's own step between building and
 * running (what `await query` calls), kept out of its public types.
 */
export function compiledRead<Row>(
  dialect: Dialect,
  build: () => CompilableSelect,
): (values: Record<string, unknown>) => Promise<Row | undefined> {
  let read: ((values: Record<string, unknown>) => Promise<Row | undefined>) | undefined
  const compile = (): ((values: Record<string, unknown>) => Promise<Row | undefined>) => {
    if (dialect === 'sqlite') {
      const statement = build().prepare()
      return async (values) => statement.get(values) as Row | undefined
    }
    type PgBuilt = { execute(values: Record<string, unknown>): Promise<Row[]> }
    const statement = (build() as unknown as { _prepare(): PgBuilt })._prepare()
    return async (values) => (await statement.execute(values))[0]
  }
  return (values) => {
    read ??= compile()
    return read(values)
  }
}
