import { and, type Column, eq, inArray, type SQL } from 'drizzle-orm'
import type { SQLiteColumn, SQLiteTable } from 'drizzle-orm/sqlite-core'
import type { Orm } from './database'

/** A table whose rows each belong to one organisation. */
export type OrgTable = SQLiteTable & { orgId: SQLiteColumn }

/**
 * One organisation's rows of a table. Every condition an organisation's repository writes starts
 * here, so the organisation is part of each statement by construction, not by remembering a `where`;
 * and every row it inserts is given the organisation, whatever the caller passed.
 */
export interface OrgRows<T extends OrgTable> {
  readonly table: T
  readonly orgId: string
  /** The organisation's rows, narrowed by `conditions`. */
  where(...conditions: Array<SQL | undefined>): SQL
  /** Values to insert, as a row of the organisation. */
  row<V extends object>(values: V): V & { orgId: string }
}

export function orgRows<T extends OrgTable>(table: T, orgId: string): OrgRows<T> {
  return { table, orgId, where: narrowing(eq(table.orgId, orgId)), row: (values) => ({ ...values, orgId }) }
}

/** Conditions that start from `mine` (an organisation's rows): what `OrgRows.where` answers. */
export const narrowing =
  (mine: SQL) =>
  (...conditions: Array<SQL | undefined>): SQL =>
    conditions.length === 0 ? mine : (and(mine, ...conditions) as SQL)

/**
 * The condition for child rows whose parent is one of the organisation's rows (by `parentId` when
 * given): a child table without an organisation column is reached through its parent, never by the
 * parent's id alone, so naming another organisation's parent finds no child to read or change.
 */
export function childrenOf<T extends OrgTable & { id: SQLiteColumn }>(
  orm: Orm,
  foreignKey: Column,
  parent: OrgRows<T>,
  parentId?: string,
): SQL {
  const parents = orm
    .select({ id: parent.table.id })
    .from(parent.table as SQLiteTable)
    .where(parent.where(parentId === undefined ? undefined : eq(parent.table.id, parentId)))
  return inArray(foreignKey, parents)
}
