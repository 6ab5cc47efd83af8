import { and, eq, getTableColumns, inArray, sql } from 'drizzle-orm'
import type { Database } from '../database'

export interface RequestBodyRecord {
  requestId: string
  orgId: string
  requestBody: string
  responseBody: string | null
  truncated: boolean
  createdAt: Date
}

/** Bodies are large: fewer rows per INSERT than the request log. */
const BATCH_ROWS = 100

export const requestBodiesRepository = ({ orm, dialect, tables: { requestBodies } }: Database) => {
  // As for the records (requests.ts): on SQLite one prepared single-row INSERT per body.
  let prepared: { run(values: Record<string, unknown>): unknown } | undefined
  const insertPrepared = () =>
    (prepared ??= orm
      .insert(requestBodies)
      .values(
        Object.fromEntries(Object.keys(getTableColumns(requestBodies)).map((name) => [name, sql.placeholder(name)])) as never,
      )
      .prepare())
  return {
    async insertMany(bodies: readonly RequestBodyRecord[]): Promise<void> {
      if (dialect === 'sqlite') {
        const statement = insertPrepared()
        for (const body of bodies) statement.run({ ...body })
        return
      }
      for (let i = 0; i < bodies.length; i += BATCH_ROWS) {
        await orm.insert(requestBodies).values(bodies.slice(i, i + BATCH_ROWS) as RequestBodyRecord[])
      }
    },
    async getMany(orgId: string, requestIds: readonly string[]): Promise<RequestBodyRecord[]> {
      if (requestIds.length === 0) return []
      return orm
        .select()
        .from(requestBodies)
        .where(and(eq(requestBodies.orgId, orgId), inArray(requestBodies.requestId, [...requestIds])))
    },
    /** Scoped by organisation: another organisation's bodies are not found. */
    async get(orgId: string, requestId: string): Promise<RequestBodyRecord | undefined> {
      const [row] = await orm
        .select()
        .from(requestBodies)
        .where(and(eq(requestBodies.orgId, orgId), eq(requestBodies.requestId, requestId)))
        .limit(1)
      return row
    },
  }
}
