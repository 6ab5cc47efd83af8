import { and, isNotNull, type SQL, sql } from 'drizzle-orm'
import type { Principal } from '../../auth/principal'
import { requireTier } from '../../auth/tiers'
import { badRequest, forbidden, notFound } from '../../errors'
import { windowScope } from '../../query/filter'
import type { WindowInput } from '../../query/model'
import { bucketName, bucketSql, bucketsOf, parseWindow } from '../../query/time'
import type { Tables } from '../../store/database'
import type { Store } from '../../store/store'
import { GROUP_PAGE, type GroupedInput } from './model'

type Requests = Tables['requests']
const NANO = 1e-9
const PROPERTY_NAME = /^[A-Za-z0-9_-]{1,64}$/

/** What every grouped view reports per key. */
const MEASURES = (t: Requests) => ({
  requests: sql`count(*)`,
  cost: sql`coalesce(sum(${t.costNano}), 0)`,
  tokens: sql`coalesce(sum(${t.totalTokens}), 0)`,
  errors: sql`coalesce(sum(case when ${t.status} = 'error' then 1 else 0 end), 0)`,
  averageLatencyMs: sql`avg(${t.latencyMs})`,
  firstAt: sql`min(${t.createdAt})`,
  lastAt: sql`max(${t.createdAt})`,
})

const SPEND_GROUPS: Record<string, (t: Requests) => SQL> = {
  model: (t) => sql`${t.model}`,
  provider: (t) => sql`${t.provider}`,
  user: (t) => sql`${t.userId}`,
  api_key: (t) => sql`${t.apiKeyId}`,
  path: (t) => sql`${t.path}`,
}

/**
 * Traffic grouped by one key (model, provider, user, session, a property's value): requests, cost,
 * tokens, errors, average latency, first and last time. The filter and the window of the metrics
 * apply; pages of up to 1,000 keys, the costliest (or busiest) first.
 */
export class GroupedViews {
  constructor(
    private readonly store: Store,
    private readonly usersFeature: boolean,
    private readonly now: () => number = Date.now,
  ) {}

  async spendBy(principal: Principal, input: GroupedInput) {
    const groupBy = input.groupBy ?? 'model'
    if (groupBy.startsWith('property:')) return this.byProperty(principal, groupBy.slice('property:'.length), input, 'cost')
    const key = SPEND_GROUPS[groupBy]
    if (!key) throw badRequest(`groupBy must be one of ${Object.keys(SPEND_GROUPS).join(', ')} or property:<name>`)
    if (groupBy === 'user') this.requireUsers(principal)
    return this.grouped(principal, input, key, 'cost')
  }

  providers = (principal: Principal, input: GroupedInput) => this.grouped(principal, input, (t) => sql`${t.provider}`, 'requests')

  sessions = (principal: Principal, input: GroupedInput) =>
    this.grouped(
      principal,
      input,
      (t) => sql`${t.sessionId}`,
      'lastAt',
      (t) => isNotNull(t.sessionId),
    )

  users(principal: Principal, input: GroupedInput) {
    this.requireUsers(principal)
    return this.grouped(
      principal,
      input,
      (t) => sql`${t.userId}`,
      'cost',
      (t) => isNotNull(t.userId),
    )
  }

  /** The Users feature's overview: how many users, and what a user costs and sends on average. */
  async usersOverview(principal: Principal, input: GroupedInput) {
    this.requireUsers(principal)
    const users = await this.rows(
      principal,
      input,
      (t) => sql`${t.userId}`,
      (t) => isNotNull(t.userId),
    )
    const n = users.length
    return {
      users: n,
      requestsPerUser: n === 0 ? null : users.reduce((s, u) => s + u.requests, 0) / n,
      costPerUser: n === 0 ? null : users.reduce((s, u) => s + u.cost, 0) / n,
    }
  }

  /** The keys of the properties seen in the window, without the hidden ones. */
  async propertyKeys(principal: Principal, input: GroupedInput) {
    const [counts, hidden] = await Promise.all([
      this.store.requests.propertyKeyCounts(this.where(principal, input)),
      this.hiddenKeys(principal),
    ])
    return counts
      .map((c) => c.key)
      .filter((k) => !hidden.has(k))
      .sort()
  }

  /** Per time bucket, how many requests carried each property key (hidden keys left out); every bucket present. */
  async propertyKeysOverTime(principal: Principal, input: WindowInput) {
    const window = parseWindow(input, this.now())
    const [counts, hidden] = await Promise.all([
      this.store.requests.propertyKeyCounts(this.where(principal, input), bucketSql(this.store.schema, window)),
      this.hiddenKeys(principal),
    ])
    const shown = counts.filter((c) => !hidden.has(c.key))
    const keys = [...new Set(shown.map((c) => c.key))].sort()
    const found = new Map(shown.map((c) => [`${c.bucket}|${c.key}`, c.requests]))
    return bucketsOf(window).map((bucket) => ({
      time: bucketName(bucket),
      values: Object.fromEntries(keys.map((k) => [k, found.get(`${bucket}|${k}`) ?? 0])),
    }))
  }

  /** One property's values: searched, or ranked by cost or by requests. A hidden property is not found. */
  async byProperty(principal: Principal, name: string, input: GroupedInput, order: 'cost' | 'requests') {
    if (!PROPERTY_NAME.test(name)) throw badRequest('a property name is letters, digits, - and _')
    const key = name.toLowerCase()
    if ((await this.hiddenKeys(principal)).has(key)) throw notFound(`property ${name}`)
    // The key is written into the statement (it passed PROPERTY_NAME above): the expression must be
    // the same in SELECT and GROUP BY, and Postgres tells bound copies apart.
    const value = (t: Requests) =>
      this.store.dialect === 'postgres'
        ? sql`(${t.properties} ->> ${sql.raw(`'${key}'`)})`
        : sql`json_extract(${t.properties}, ${sql.raw(`'$."${key}"'`)})`
    const search = input.search
    return this.grouped(principal, input, value, order, (t) =>
      search === undefined
        ? sql`${value(t)} is not null`
        : this.store.dialect === 'postgres'
          ? sql`strpos(${value(t)}, ${search}) > 0`
          : sql`instr(${value(t)}, ${search}) > 0`,
    )
  }

  private requireUsers(principal: Principal): void {
    if (!this.usersFeature) throw forbidden('the Users feature is switched off in this deployment (GW_USERS_FEATURE)')
    requireTier(principal.tier, 'growth', 'The Users feature')
  }

  private async hiddenKeys(principal: Principal): Promise<Set<string>> {
    return new Set((await this.store.org(principal.orgId).savedViews.hiddenProperties()).map((p) => p.key))
  }

  private where(principal: Principal, input: WindowInput, extra?: (t: Requests) => SQL | undefined): SQL {
    const scope = windowScope(this.store.schema, principal.orgId, input.filter, parseWindow(input, this.now()))
    const more = extra?.(this.store.schema.tables.requests)
    return more ? (and(scope, more) as SQL) : scope
  }

  private async grouped(
    principal: Principal,
    input: GroupedInput,
    key: (t: Requests) => SQL,
    order: 'cost' | 'requests' | 'lastAt',
    extra?: (t: Requests) => SQL | undefined,
  ) {
    const limit = input.limit ?? GROUP_PAGE.defaultLimit
    const offset = input.offset ?? 0
    const shaped = await this.rows(principal, input, key, extra)
    shaped.sort(
      (a, b) =>
        (order === 'lastAt' ? b.lastAt.localeCompare(a.lastAt) : b[order] - a[order]) ||
        String(a.key).localeCompare(String(b.key)),
    )
    return shaped.slice(offset, offset + limit)
  }

  private async rows(
    principal: Principal,
    input: GroupedInput,
    key: (t: Requests) => SQL,
    extra?: (t: Requests) => SQL | undefined,
  ) {
    const { requests } = this.store.schema.tables
    const rows = await this.store.requests.aggregate(
      this.where(principal, input, extra),
      { key: key(requests) },
      MEASURES(requests),
    )
    // SQLite answers times as ms numbers, Postgres as timestamps.
    const time = (v: unknown) => new Date(typeof v === 'number' || /^\d+$/.test(String(v)) ? Number(v) : String(v)).toISOString()
    return rows.map((r) => ({
      key: r.key === null ? null : String(r.key),
      requests: Number(r.requests),
      cost: Number(r.cost) * NANO,
      tokens: Number(r.tokens),
      errors: Number(r.errors),
      averageLatencyMs: r.averageLatencyMs === null ? null : Number(r.averageLatencyMs),
      firstAt: time(r.firstAt),
      lastAt: time(r.lastAt),
    }))
  }
}
