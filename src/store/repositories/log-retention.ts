import { asc, inArray, lt, sql } from 'drizzle-orm'
import type { SQLiteColumn } from 'drizzle-orm/sqlite-core'
import type { Database, Tables } from '../database'
import { type OrgTable, orgRows } from '../scope'

/** The logs kept as long as the request records, each dated by its own `created_at`: none hangs off a record. */
export const DATED_LOGS = ['requestLogRejects', 'budgetActions', 'mcpToolCalls', 'a2aCalls'] as const
export type DatedLog = (typeof DATED_LOGS)[number]

type DatedTable = OrgTable & { createdAt: SQLiteColumn }

/** Each dated table with its primary key (one column): the request bodies, and the logs above. */
const keyed = (tables: Tables) =>
  ({
    requestBodies: [tables.requestBodies, tables.requestBodies.requestId],
    requestLogRejects: [tables.requestLogRejects, tables.requestLogRejects.requestId],
    budgetActions: [tables.budgetActions, tables.budgetActions.id],
    mcpToolCalls: [tables.mcpToolCalls, tables.mcpToolCalls.id],
    a2aCalls: [tables.a2aCalls, tables.a2aCalls.id],
  }) satisfies Record<DatedLog | 'requestBodies', readonly [DatedTable, SQLiteColumn]>

/**
 * The retention job's deletes of one organisation's logs, a bounded batch a call, oldest first. Run
 * each call in a transaction: a batch goes whole or not at all.
 *
 * A batch reads the keys of the organisation's oldest rows before the cut-off, then deletes by those
 * keys only. The organisation is in the statement that chose them, and they are primary keys read in
 * this transaction (locked, on Postgres), so the delete cannot reach another organisation's row; naming
 * the organisation again would let SQLite's planner, which has no statistics, take the
 * `(org_id, created_at)` index and visit every row of the organisation for each batch (measured).
 */
export const logRetentionRepository = ({ orm, dialect, all, tables }: Database, orgId: string) => {
  const { requests, requestBodies, requestFlags, requestFeedback, requestScores } = tables
  const dated = keyed(tables)

  /**
   * The keys of the organisation's oldest rows before the cut-off, at most `limit`. On Postgres they
   * are locked, skipping rows another instance's batch holds: instances sharing a database share the
   * work instead of waiting on each other.
   */
  const oldest = async (table: DatedTable, key: SQLiteColumn, cutoff: Date, limit: number): Promise<string[]> => {
    const where = orgRows(table, orgId).where(lt(table.createdAt, cutoff))
    const rows =
      dialect === 'postgres'
        ? await all<{ key: string }>(
            sql`select ${key} as ${sql.identifier('key')} from ${table} where ${where} order by ${table.createdAt} limit ${limit} for update skip locked`,
          )
        : await orm.select({ key }).from(table).where(where).orderBy(asc(table.createdAt)).limit(limit)
    return rows.map((row) => String(row.key))
  }

  const deleteOldest = async (table: DatedTable, key: SQLiteColumn, cutoff: Date, limit: number): Promise<number> => {
    const keys = await oldest(table, key, cutoff, limit)
    if (keys.length > 0) await orm.delete(table).where(inArray(key, keys))
    return keys.length
  }

  return {
    /**
     * The organisation's oldest request records before the cut-off, at most `limit`, with what hangs
     * off them (bodies, security flags, rating, scores): a record and its rows go together, and no row
     * of a record that stays is touched. Answers the records deleted.
     */
    async deleteRecordsBefore(cutoff: Date, limit: number): Promise<number> {
      const ids = await oldest(requests, requests.id, cutoff, limit)
      if (ids.length === 0) return 0
      for (const [table, requestId] of [
        [requestBodies, requestBodies.requestId],
        [requestFlags, requestFlags.requestId],
        [requestFeedback, requestFeedback.requestId],
        [requestScores, requestScores.requestId],
      ] as const)
        await orm.delete(table).where(inArray(requestId, ids))
      await orm.delete(requests).where(inArray(requests.id, ids))
      return ids.length
    },
    /** The organisation's oldest stored bodies before the cut-off, at most `limit` (their records stay). */
    async deleteBodiesBefore(cutoff: Date, limit: number): Promise<number> {
      const [table, key] = dated.requestBodies
      return deleteOldest(table, key, cutoff, limit)
    },
    /** The organisation's oldest rows of a dated log before the cut-off, at most `limit`. */
    async deleteLogBefore(log: DatedLog, cutoff: Date, limit: number): Promise<number> {
      const [table, key] = dated[log]
      return deleteOldest(table, key, cutoff, limit)
    },
  }
}
