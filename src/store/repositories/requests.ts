import { type AnyColumn, and, asc, count, desc, eq, inArray, type SQL, sql } from 'drizzle-orm'
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

/** Rows per INSERT: 25 columns x 400 rows stays under both SQLite's and Postgres's bound-parameter limits. */
const BATCH_ROWS = 400

export const requestsRepository = ({ orm, dialect, tables: { requests } }: Database) => ({
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
  /** One numeric column of the matching rows (quantiles are ranked from them). */
  async values(where: SQL, column: AnyColumn): Promise<number[]> {
    const rows = await orm
      .select({ v: sql<number>`${column}` })
      .from(requests)
      .where(where)
    return rows.map((r) => Number(r.v))
  },
  /** The distinct keys of the `properties` of matching rows; JSON is read differently per dialect. */
  async propertyKeys(where: SQL): Promise<string[]> {
    const rows =
      dialect === 'postgres'
        ? await orm
            .selectDistinct({ key: sql<string>`jsonb_object_keys(${requests.properties})` })
            .from(requests)
            .where(where)
        : orm.all<{ key: string }>(
            sql`select distinct k.key as key from ${requests}, json_each(${requests.properties}) as k where ${where}`,
          )
    return rows.map((r) => r.key)
  },
  async count(where: SQL): Promise<number> {
    const [row] = await orm.select({ n: count() }).from(requests).where(where)
    return Number(row?.n ?? 0)
  },
  async getMany(orgId: string, ids: readonly string[]): Promise<RequestRecord[]> {
    if (ids.length === 0) return []
    return orm
      .select()
      .from(requests)
      .where(and(eq(requests.orgId, orgId), inArray(requests.id, [...ids])))
      .orderBy(desc(requests.createdAt), desc(requests.id))
  },
  async countForOrg(orgId: string): Promise<number> {
    const [row] = await orm.select({ n: count() }).from(requests).where(eq(requests.orgId, orgId))
    return Number(row?.n ?? 0)
  },
})
