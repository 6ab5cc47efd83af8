import { and, eq, inArray } from 'drizzle-orm'
import type { Database } from '../database'
import { positionalInsert } from '../positional-insert'

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

export const requestBodiesRepository = ({ orm, prepare, tables: { requestBodies } }: Database) => {
  // As for the records (requests.ts): on SQLite one prepared single-row INSERT per body.
  let insertOne: ((body: RequestBodyRecord) => boolean) | undefined
  return {
    async insertMany(bodies: readonly RequestBodyRecord[]): Promise<void> {
      if (prepare) {
        insertOne ??= positionalInsert<RequestBodyRecord>(requestBodies, prepare)
        for (const body of bodies) insertOne(body)
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
