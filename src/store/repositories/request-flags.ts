import { and, desc, eq, inArray, type SQL, sql } from 'drizzle-orm'
import type { Database } from '../database'
import type { Grouping } from '../grouping'

/** A security finding of one request (src/security/scan.ts), as stored: counts, never the matched text. */
export interface RequestFlag {
  requestId: string
  orgId: string
  kind: 'pii' | 'injection'
  category: string
  occurrences: number
  createdAt: Date
}

/** 6 columns x 1,000 rows stays under both dialects' bound-parameter limits. */
const BATCH_ROWS = 1_000

/**
 * The security flags, always read joined to their requests: the request filter and the
 * organisation's scope (`requestScope`) are conditions on the request log.
 */
export const requestFlagsRepository = ({ orm, tables: { requestFlags, requests } }: Database) => {
  const joined = (selection: Record<string, SQL | typeof requestFlags.requestId>) =>
    orm
      .select(selection)
      .from(requestFlags)
      .innerJoin(requests, and(eq(requests.id, requestFlags.requestId), eq(requests.orgId, requestFlags.orgId)))
  return {
    async insertMany(flags: readonly RequestFlag[]): Promise<void> {
      for (let i = 0; i < flags.length; i += BATCH_ROWS) {
        await orm.insert(requestFlags).values(flags.slice(i, i + BATCH_ROWS) as RequestFlag[])
      }
    },
    /** Per category (and per `bucket` when given) over one kind of flag: the requests flagged and the occurrences. */
    async counts(where: SQL, kind: RequestFlag['kind'], bucket?: Grouping) {
      const groups = bucket ? [requestFlags.category, bucket.groupBy] : [requestFlags.category]
      const rows = await joined({
        category: sql`${requestFlags.category}`,
        ...(bucket ? { bucket: bucket.select } : {}),
        requests: sql`count(*)`,
        occurrences: sql`coalesce(sum(${requestFlags.occurrences}), 0)`,
      })
        .where(and(where, eq(requestFlags.kind, kind)))
        .groupBy(...groups)
      return rows.map((r) => ({
        category: String(r.category),
        bucket: r.bucket === undefined ? undefined : Number(r.bucket),
        requests: Number(r.requests),
        occurrences: Number(r.occurrences),
      }))
    },
    /** How many distinct requests carry a flag of the kind (per `bucket` when given). */
    async flaggedRequests(where: SQL, kind: RequestFlag['kind'], bucket?: Grouping) {
      const query = joined({
        ...(bucket ? { bucket: bucket.select } : {}),
        requests: sql`count(distinct ${requestFlags.requestId})`,
      }).where(and(where, eq(requestFlags.kind, kind)))
      const rows = await (bucket ? query.groupBy(bucket.groupBy) : query)
      return rows.map((r) => ({
        bucket: r.bucket === undefined ? undefined : Number(r.bucket),
        requests: Number(r.requests),
      }))
    },
    /** The latest flagged requests, newest first, each with its flags of the kind. */
    async recent(where: SQL, kind: RequestFlag['kind'], limit: number) {
      const latest = await joined({ requestId: requestFlags.requestId, at: sql`max(${requests.createdAt})` })
        .where(and(where, eq(requestFlags.kind, kind)))
        .groupBy(requestFlags.requestId)
        .orderBy(desc(sql`max(${requests.createdAt})`), desc(requestFlags.requestId))
        .limit(limit)
      const ids = latest.map((r) => String(r.requestId))
      if (ids.length === 0) return []
      const rows = await orm
        .select({ flag: requestFlags, request: { model: requests.model, userId: requests.userId } })
        .from(requestFlags)
        .innerJoin(requests, and(eq(requests.id, requestFlags.requestId), eq(requests.orgId, requestFlags.orgId)))
        .where(and(where, eq(requestFlags.kind, kind), inArray(requestFlags.requestId, ids)))
      const byRequest = Map.groupBy(rows, (r) => r.flag.requestId)
      return ids.flatMap((id) => {
        const mine = byRequest.get(id) ?? []
        const first = mine[0]
        if (!first) return []
        return [
          {
            requestId: id,
            createdAt: first.flag.createdAt,
            model: first.request.model,
            userId: first.request.userId,
            findings: Object.fromEntries(mine.map((r) => [r.flag.category, r.flag.occurrences])),
          },
        ]
      })
    },
  }
}
