import { describe, expect, test } from 'bun:test'
import { getTableName, is, Table } from 'drizzle-orm'
import { getTableConfig as pgTableConfig } from 'drizzle-orm/pg-core'
import { getTableConfig as sqliteTableConfig } from 'drizzle-orm/sqlite-core'
import * as pgKit from '../drizzle/pg.schema'
import * as sqliteKit from '../drizzle/sqlite.schema'
import { tables as pg } from '../src/store/schema.pg'
import { tables as sqlite } from '../src/store/schema.sqlite'

// src/store/schema-parity.ts holds the two schemas to the same columns and TS types at compile time;
// what types do not carry (default values, keys, indexes, foreign keys and their actions) is compared
// here, on the tables as drizzle-kit reads them to write the migrations.

type TableConfig = ReturnType<typeof pgTableConfig> | ReturnType<typeof sqliteTableConfig>

const tablesOf = (tables: object) =>
  new Map(Object.entries(tables).filter((entry): entry is [string, Table] => is(entry[1], Table)))

const names = (columns: readonly unknown[]) => columns.map((c) => (c as { name?: string }).name ?? String(c))

/** What must be the same in both dialects, in a form that does not depend on the dialect's classes. */
function shape(config: TableConfig) {
  return {
    name: config.name,
    columns: config.columns.map((c) => ({
      name: c.name,
      dataType: c.dataType,
      notNull: c.notNull,
      primary: c.primary,
      unique: c.isUnique,
      default: c.default,
    })),
    primaryKeys: config.primaryKeys.map((k) => names(k.columns)),
    uniqueConstraints: config.uniqueConstraints.map((u) => ({ name: u.name, columns: names(u.columns) })),
    indexes: config.indexes
      .map((i) => ({ name: i.config.name ?? '', unique: i.config.unique, columns: names(i.config.columns) }))
      .sort((a, b) => a.name.localeCompare(b.name)),
    foreignKeys: config.foreignKeys
      .map((fk) => {
        const ref = fk.reference()
        return {
          name: fk.getName(),
          columns: names(ref.columns),
          table: getTableName(ref.foreignTable),
          foreignColumns: names(ref.foreignColumns),
          // Postgres's builder says 'no action' where SQLite's leaves it unset: the same in SQL.
          onDelete: fk.onDelete ?? 'no action',
          onUpdate: fk.onUpdate ?? 'no action',
        }
      })
      .sort((a, b) => a.name.localeCompare(b.name)),
  }
}

const pgTables = tablesOf(pg)
const sqliteTables = tablesOf(sqlite)

describe('the two dialect schemas', () => {
  test('export the same tables', () => {
    expect([...pgTables.keys()].sort()).toEqual([...sqliteTables.keys()].sort())
    expect(pgTables.size).toBeGreaterThan(40)
  })

  // drizzle-kit writes the migrations from these modules: a table they do not name would be dropped.
  test('are named whole, and as they are, for drizzle-kit', () => {
    for (const [kit, tables] of [
      [pgKit, pgTables],
      [sqliteKit, sqliteTables],
    ] as const) {
      expect(Object.keys(kit).sort()).toEqual([...tables.keys()].sort())
      for (const [key, table] of tables) expect((kit as Record<string, unknown>)[key]).toBe(table)
    }
  })

  for (const [key, pgTable] of pgTables) {
    test(`${key}: same columns, defaults, keys, indexes and foreign keys`, () => {
      const sqliteTable = sqliteTables.get(key)
      if (!sqliteTable) throw new Error(`${key} is missing from schema.sqlite.ts`)
      expect(shape(sqliteTableConfig(sqliteTable as Parameters<typeof sqliteTableConfig>[0]))).toEqual(
        shape(pgTableConfig(pgTable as Parameters<typeof pgTableConfig>[0])),
      )
    })
  }
})
