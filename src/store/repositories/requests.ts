import { type AnyColumn, and, asc, count, desc, eq, inArray, isNotNull, type SQL, sql } from 'drizzle-orm'
import type { Database } from '../database'

/** One row of the request log (spec 2.1 and 2.5 fields, and what cost and analytics need). */
export interface RequestRecord {
  id: string
  orgId: string
  apiKeyId: string | null
  userId: string | null
  sessionId: string | null
  properties: Record<string, string> | null
  provider: string
  model: string
  path: string
  gatewayMode: 'passthrough' | 'translated' | null
  translationWarning: string | null
  status: 'success' | 'error'
  httpStatus: number
  latencyMs: number | null
  timeToFirstTokenMs: number | null
  promptTokens: number | null
  completionTokens: number | null
  cacheReadTokens: number | null
  cacheWriteTokens: number | null
  totalTokens: number | null
  costNano: number | null
  costNote: string | null
  estimatedCostNano: number | null
  ptb: boolean
  error: string | null
  country: string | null
  createdAt: Date
}

export const SORT_COLUMNS = {
  created_at: 'createdAt',
  latency_ms: 'latencyMs',
  cost: 'costNano',
  total_tokens: 'totalTokens',
} as const

export interface RequestSort {
  field: keyof typeof SORT_COLUMNS
  direction: 'asc' | 'desc'
}

/** Rows per INSERT: 27 columns x 400 rows stays under both SQLite's and Postgres's bound-parameter limits. */
const BATCH_ROWS = 400

export const requestsRepository = ({ orm, dialect, all, tables: { requests } }: Database) => {
  const countWhere = async (where: SQL): Promise<number> => {
    const [row] = await orm.select({ n: count() }).from(requests).where(where)
    return Number(row?.n ?? 0)
  }
  return {
    async insertMany(records: readonly RequestRecord[]): Promise<void> {
      for (let i = 0; i < records.length; i += BATCH_ROWS) {
        await orm.insert(requests).values(records.slice(i, i + BATCH_ROWS) as RequestRecord[])
      }
    },
    /** Scoped by organisation: another organisation's request is not found. */
    async get(orgId: string, id: string): Promise<RequestRecord | undefined> {
      const [row] = await orm
        .select()
        .from(requests)
        .where(and(eq(requests.orgId, orgId), eq(requests.id, id)))
        .limit(1)
      return row
    },
    /** A page of records matching a compiled condition (which already holds the organisation's scope). */
    async search(query: { where: SQL; sort: RequestSort; limit: number; offset: number }): Promise<RequestRecord[]> {
      const column = requests[SORT_COLUMNS[query.sort.field]]
      const direction = query.sort.direction === 'asc' ? asc : desc
      return orm
        .select()
        .from(requests)
        .where(query.where)
        .orderBy(direction(column), direction(requests.id))
        .limit(query.limit)
        .offset(query.offset)
    },
    /** Grouped aggregates: `groups` and `measures` name SQL expressions built by the analytics module. */
    async aggregate(
      where: SQL,
      groups: Record<string, SQL>,
      measures: Record<string, SQL>,
    ): Promise<Array<Record<string, unknown>>> {
      const selection = { ...groups, ...measures } as Record<string, SQL>
      const query = orm.select(selection).from(requests).where(where)
      const keys = Object.values(groups)
      return (keys.length > 0 ? query.groupBy(...keys) : query) as Promise<Array<Record<string, unknown>>>
    },
    /**
     * Quantiles of a column over the matching rows by nearest rank (the value at rank ceil(p * n) of the
     * n non-null values), computed in the database so that memory stays flat whatever the row count.
     */
    async quantiles(where: SQL, column: AnyColumn, ps: readonly number[]): Promise<Array<number | null>> {
      const present = and(where, isNotNull(column)) as SQL
      if (dialect === 'postgres') {
        const [row] = await all<{ q: unknown[] | null }>(
          sql`select percentile_disc(array[${sql.raw(ps.map(Number).join(','))}]::float8[]) within group (order by ${column}) as q from ${requests} where ${present}`,
        )
        return ps.map((_, i) => (row?.q?.[i] === null || row?.q?.[i] === undefined ? null : Number(row.q[i])))
      }
      const n = await countWhere(present)
      if (n === 0) return ps.map(() => null)
      const ranks = ps.map((p) => Math.max(1, Math.ceil(p * n)))
      const rows = await all<{ v: number; rank: number }>(
        sql`select v, rank from (select ${column} as v, row_number() over (order by ${column}) as rank from ${requests} where ${present}) where rank in (${sql.raw(ranks.join(','))})`,
      )
      const byRank = new Map(rows.map((r) => [Number(r.rank), Number(r.v)]))
      return ranks.map((r) => byRank.get(r) ?? null)
    },
    /**
     * Per property key of the matching rows (and per time bucket, when one is given): how many rows
     * carry it. The keys of a JSON object are read differently per dialect.
     */
    async propertyKeyCounts(where: SQL, bucket?: SQL): Promise<Array<{ key: string; bucket?: number; requests: number }>> {
      const keys =
        dialect === 'postgres'
          ? sql`${requests} cross join lateral jsonb_object_keys(${requests.properties}) as k(key)`
          : sql`${requests}, json_each(${requests.properties}) as k`
      const rows = await all<{ key: string; bucket?: unknown; requests: unknown }>(
        bucket
          ? sql`select k.key as key, ${bucket} as bucket, count(*) as requests from ${keys} where ${where} group by k.key, ${bucket}`
          : sql`select k.key as key, count(*) as requests from ${keys} where ${where} group by k.key`,
      )
      return rows.map((r) => ({
        key: r.key,
        ...(r.bucket === undefined ? {} : { bucket: Number(r.bucket) }),
        requests: Number(r.requests),
      }))
    },
    count: countWhere,
    async getMany(orgId: string, ids: readonly string[]): Promise<RequestRecord[]> {
      if (ids.length === 0) return []
      return orm
        .select()
        .from(requests)
        .where(and(eq(requests.orgId, orgId), inArray(requests.id, [...ids])))
        .orderBy(desc(requests.createdAt), desc(requests.id))
    },
    countForOrg: (orgId: string): Promise<number> => countWhere(eq(requests.orgId, orgId)),
  }
}
