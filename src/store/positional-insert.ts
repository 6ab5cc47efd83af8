import { type AnyColumn, getTableColumns, getTableName, type Table } from 'drizzle-orm'
import type { Database } from './database'

/**
 * A one-row INSERT that SQLite compiles once and runs with positional parameters: every column in the
 * table's order, each value through the column's own mapping (dates, booleans, JSON), a missing value
 * as SQL NULL. For the rows written thousands of times a second (the request log's records and
 * bodies), where drizzle's prepared statement mapped a named placeholder per column on every run.
 * Answers whether the row was written (`on conflict do nothing` skips a row whose key is there).
 */
export function positionalInsert<Row extends object>(
  table: Table,
  prepare: NonNullable<Database['prepare']>,
  options: { skipConflicts?: boolean } = {},
): (row: Row) => boolean {
  const columns = Object.entries(getTableColumns(table)) as Array<[keyof Row, AnyColumn]>
  const names = columns.map(([, column]) => `"${column.name}"`).join(', ')
  const placeholders = columns.map(() => '?').join(', ')
  const run = prepare(
    `insert into "${getTableName(table)}" (${names}) values (${placeholders})${options.skipConflicts ? ' on conflict do nothing' : ''}`,
  )
  const params: unknown[] = new Array(columns.length)
  return (row) => {
    for (let i = 0; i < columns.length; i++) {
      const [field, column] = columns[i] as [keyof Row, AnyColumn]
      const value = row[field]
      params[i] = value === null || value === undefined ? null : column.mapToDriverValue(value)
    }
    return run(params) > 0
  }
}
