/**
 * The two dialect schemas, checked against each other by the type checker: the repositories are
 * written once against the SQLite tables' types and handed the Postgres tables under those types
 * (store/database.ts), so a column that one schema has and the other lacks, names differently or
 * types differently would otherwise surface only as a wrong row at run time. Nothing here runs.
 *
 * When the check fails, tsc names the table and the keys that differ (`never`: no difference there),
 * e.g. for a column added to one side only:
 *   Types of property 'requests' are incompatible.
 *     Type '{ tableName: never; columnNames: "retentionDays"; select: "retentionDays"; insert: "retentionDays"; }'
 *     is not assignable to type '"same"'.
 * Checked: the tables each schema has, their SQL names, their columns' SQL names, and their select and insert
 * types. Not checked (types do not carry them): defaults' values, indexes, foreign keys; those are
 * compared at run time by test/schema-parity.test.ts.
 */
import type { Table } from 'drizzle-orm'
import type { tables as pgTables } from './schema.pg'
import type { tables as sqliteTables } from './schema.sqlite'

/**
 * Exact equality: unlike mutual assignability, it tells `{ a?: string }` from `{ a: string | undefined }`,
 * `string | null` from `string`, and `any` from everything.
 */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false

type PgTables = typeof pgTables
type SqliteTables = typeof sqliteTables

/**
 * The keys of A and B that are not the same on both sides: present on one only, or of another type or
 * optionality (`Pick` keeps the `?`). Never when the two are equal. Passed through a template literal
 * so that tsc prints the keys themselves rather than the alias that computed them.
 */
type Differing<A, B> = `${DifferingKeys<A, B> & string}`
type DifferingKeys<A, B> = {
  [K in keyof A | keyof B]-?: K extends keyof A
    ? K extends keyof B
      ? Equal<Pick<A, K>, Pick<B, K>> extends true
        ? never
        : K
      : K
    : K
}[keyof A | keyof B]

/** Each column's SQL name, by its key: a column renamed in the database but not in TS is drift too. */
type ColumnNames<T extends Table> = { [K in keyof T['_']['columns']]: T['_']['columns'][K]['_']['name'] }

/** Where a table of one schema differs from its namesake in the other, by the keys that differ; `'same'` when nowhere. */
type TableDrift<P extends Table, S extends Table> = [
  Equal<P['_']['name'], S['_']['name']>,
  Equal<ColumnNames<P>, ColumnNames<S>>,
  Equal<P['$inferSelect'], S['$inferSelect']>,
  Equal<P['$inferInsert'], S['$inferInsert']>,
] extends [true, true, true, true]
  ? 'same'
  : {
      tableName: Equal<P['_']['name'], S['_']['name']> extends true ? never : [P['_']['name'], S['_']['name']]
      columnNames: Differing<ColumnNames<P>, ColumnNames<S>>
      select: Differing<P['$inferSelect'], S['$inferSelect']>
      insert: Differing<P['$inferInsert'], S['$inferInsert']>
    }

type SchemaDrift = {
  [K in keyof PgTables | keyof SqliteTables]: K extends keyof PgTables
    ? K extends keyof SqliteTables
      ? PgTables[K] extends Table
        ? SqliteTables[K] extends Table
          ? TableDrift<PgTables[K], SqliteTables[K]>
          : never
        : never
      : 'missing from schema.sqlite.ts'
    : 'missing from schema.pg.ts'
}

/** Fails to compile, naming the table, unless every table of either schema is `'same'` in the other. */
type ExpectSame<T extends { [K in keyof T]: 'same' }> = T

export type SchemaParity = ExpectSame<SchemaDrift>
