import { type AnyColumn, and, asc, count, desc, eq, gte, inArray, isNotNull, lt, type SQL, sql } from 'drizzle-orm'
import { compiledRead, rowById } from '../compiled-read'
import type { Database } from '../database'
import { type Grouping, grouping } from '../grouping'
import type { CallAttempt } from '../json-columns'
import { positionalInsert } from '../positional-insert'

/** One row of the request log (spec 2.1 and 2.5 fields, and what cost and analytics need). */
export interface RequestRecord {
  id: string
  orgId: string
  apiKeyId: string | null
  userId: string | null
  sessionId: string | null
  /** The caller's own customer the call was made for (`Gw-Customer-Id`). */
  customerId: string | null
  /** The Stripe customer the call's usage is metered to (`Gw-Stripe-Customer-Id`). */
  stripeCustomerId: string | null
  /** The member the call is attributed to: the key's creator, or the person whose session made it. */
  memberId: string | null
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
  /** Which price the cost was computed with: `builtin` or `override:<id>`. */
  priceSource: string | null
  estimatedCostNano: number | null
  ptb: boolean
  error: string | null
  country: string | null
  /** Every provider call the request took; null when it called none. */
  attempts: CallAttempt[] | null
  /** Answered from gw's response cache. */
  cached: boolean
  /** The fallback chain whose alias the call named. */
  fallbackChainId: string | null
  /** What a cached answer would have cost from the provider. */
  cacheSavedNano: number | null
  /** The model the caller asked for, when a budget's downgrade had another serve the call. */
  downgradedFrom: string | null
  /** The credits (nano-USD) a call billed to them (PTB) left the organisation. */
  creditsRemainingNano: number | null
  createdAt: Date
}

/** A scope of the spend controls, as the log's columns hold it. */
export interface SpendScope {
  orgId: string
  start: Date
  end: Date
  match: Partial<Record<'apiKeyId' | 'memberId' | 'customerId' | 'model' | 'provider', string>>
  /** A team's members. */
  memberIds?: readonly string[]
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

/** Rows per INSERT on Postgres: 30 columns x 400 rows stays under its bound-parameter limit. */
const BATCH_ROWS = 400

export const requestsRepository = ({ orm, dialect, all, prepare, tables: { requests } }: Database) => {
  // SQLite runs in-process: one prepared single-row INSERT run per record is three times faster than
  // building multi-row statements, and the writer does this all day.
  let insertOne: ((record: RequestRecord) => boolean) | undefined
  // A call's record by its id is read for every metadata lookup and feedback (compiled-read.ts).
  const recordById = rowById<RequestRecord>({ orm, dialect }, requests)
  const recordByOrgAndId = compiledRead<RequestRecord>(dialect, () =>
    orm
      .select()
      .from(requests)
      .where(and(eq(requests.orgId, sql.placeholder('orgId')), eq(requests.id, sql.placeholder('id'))))
      .limit(1),
  )
  const countWhere = async (where: SQL): Promise<number> => {
    const [row] = await orm.select({ n: count() }).from(requests).where(where)
    return Number(row?.n ?? 0)
  }
  /** Grouped aggregates: `groups` and `measures` name SQL expressions built by the analytics module. */
  const aggregate = async (
    where: SQL,
    groups: Record<string, SQL | Grouping>,
    measures: Record<string, SQL>,
  ): Promise<Array<Record<string, unknown>>> => {
    const keys = Object.entries(groups).map(([name, g]) => [name, grouping(g)] as const)
    const selection = { ...Object.fromEntries(keys.map(([name, g]) => [name, g.select])), ...measures }
    const query = orm.select(selection).from(requests).where(where)
    return (keys.length > 0 ? query.groupBy(...keys.map(([, g]) => g.groupBy)) : query) as Promise<Array<Record<string, unknown>>>
  }
  return {
    /**
     * What a scope spent in a window, by the log: nano-USD, tokens, or answered calls. The spend
     * controls count a counter in from here when it is new (a restart, a new window, Redis lost).
     */
    async spendOf(scope: SpendScope, metric: 'usd' | 'tokens' | 'requests'): Promise<number> {
      const conditions: Array<SQL | undefined> = [
        eq(requests.orgId, scope.orgId),
        gte(requests.createdAt, scope.start),
        lt(requests.createdAt, scope.end),
      ]
      for (const [field, value] of Object.entries(scope.match) as Array<[keyof SpendScope['match'], string | undefined]>)
        if (value !== undefined) conditions.push(eq(requests[field], value))
      if (scope.memberIds) conditions.push(scope.memberIds.length > 0 ? inArray(requests.memberId, scope.memberIds) : sql`false`)
      const where = and(...conditions) as SQL
      if (metric === 'requests') return countWhere(and(where, eq(requests.status, 'success')) as SQL)
      const column = metric === 'usd' ? requests.costNano : requests.totalTokens
      const [row] = await orm
        .select({ total: sql<number>`coalesce(sum(${column}), 0)` })
        .from(requests)
        .where(where)
      return Number(row?.total ?? 0)
    },
    /**
     * Writes the records whose ids are not in the log yet and answers those ids: a record is in the log
     * once, however often its batch is tried (a retry after a commit whose answer was lost finds it
     * there). Run it in a transaction: the records are written together or not at all.
     */
    async insertMany(records: readonly RequestRecord[]): Promise<Set<string>> {
      const written = new Set<string>()
      if (prepare) {
        insertOne ??= positionalInsert<RequestRecord>(requests, prepare, { skipConflicts: true })
        for (const record of records) if (insertOne(record)) written.add(record.id)
        return written
      }
      for (let i = 0; i < records.length; i += BATCH_ROWS) {
        const rows = await orm
          .insert(requests)
          .values(records.slice(i, i + BATCH_ROWS) as RequestRecord[])
          .onConflictDoNothing()
          .returning({ id: requests.id })
        for (const row of rows) written.add(row.id)
      }
      return written
    },
    /**
     * A request by its id alone, whichever organisation's it is: only for the metadata lookup, whose
     * answer depends on the owner (spec 4.2: another organisation's id is 404, an unknown one 202), and
     * which compares the owner before it shows anything.
     */
    ofAnyOrganization(id: string): Promise<RequestRecord | undefined> {
      return recordById(id)
    },
    /** Scoped by organisation: another organisation's request is not found. */
    async get(orgId: string, id: string): Promise<RequestRecord | undefined> {
      return (await recordByOrgAndId({ orgId, id }))[0]
    },
    /** The latest calls a fallback chain served (or failed), newest first. */
    async recentForChain(orgId: string, chainId: string, limit: number): Promise<RequestRecord[]> {
      return orm
        .select()
        .from(requests)
        .where(and(eq(requests.orgId, orgId), eq(requests.fallbackChainId, chainId)))
        .orderBy(desc(requests.createdAt), desc(requests.id))
        .limit(limit)
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
    aggregate,
    /**
     * Measures per time bucket over the rows `scope` selects within the buckets' ranges (which cover the
     * window), as rows `{bucket, ...measures}`; buckets without rows are absent. SQLite, which has no
     * hash aggregate, would sort every row by its bucket: it reads each bucket's range of the time
     * index instead (3x faster on a million rows). Postgres groups by the bucket.
     */
    async series(
      scope: SQL,
      buckets: { grouping: Grouping; ranges: ReadonlyArray<{ key: number; from: number; to: number }> },
      measures: Record<string, SQL>,
    ): Promise<Array<Record<string, unknown>>> {
      const first = buckets.ranges[0]
      const last = buckets.ranges.at(-1)
      if (!first || !last) return []
      if (dialect === 'postgres') {
        const window = and(scope, gte(requests.createdAt, new Date(first.from)), lt(requests.createdAt, new Date(last.to)))
        return aggregate(window as SQL, { bucket: buckets.grouping }, measures)
      }
      // Only the bucket's own bounds on created_at: given the window's too, SQLite may pick those for
      // the index range and read the whole window once per bucket.
      const names = Object.keys(measures)
      const ranges = JSON.stringify(buckets.ranges.map((r) => [r.key, r.from, r.to]))
      const rows = await all<{ bucket: number; m: string | null }>(
        sql`select b.value ->> 0 as bucket, (select json_array(${sql.join(Object.values(measures), sql`, `)}) from ${requests} where ${scope} and ${requests.createdAt} >= b.value ->> 1 and ${requests.createdAt} < b.value ->> 2) as m from json_each(${ranges}) as b`,
      )
      return rows.map((r) => {
        const values = JSON.parse(r.m ?? '[]') as unknown[]
        return { bucket: r.bucket, ...Object.fromEntries(names.map((name, i) => [name, values[i] ?? null])) }
      })
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
    async propertyKeyCounts(where: SQL, bucket?: Grouping): Promise<Array<{ key: string; bucket?: number; requests: number }>> {
      const keys =
        dialect === 'postgres'
          ? sql`${requests} cross join lateral jsonb_object_keys(${requests.properties}) as k(key)`
          : sql`${requests}, json_each(${requests.properties}) as k`
      const rows = await all<{ key: string; bucket?: unknown; requests: unknown }>(
        bucket
          ? sql`select k.key as key, ${bucket.select} as bucket, count(*) as requests from ${keys} where ${where} group by k.key, ${bucket.groupBy}`
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
