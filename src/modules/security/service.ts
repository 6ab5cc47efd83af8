import type { Principal } from '../../auth/principal'
import { windowScope } from '../../query/filter'
import type { WindowInput } from '../../query/model'
import { bucketName, bucketSql, bucketsOf, parseWindow } from '../../query/time'
import { INJECTION_RULES } from '../../security/injection'
import { PII_KINDS } from '../../security/pii'
import type { RequestFlag } from '../../store/repositories/request-flags'
import type { Store } from '../../store/store'
import { RECENT_PAGE, type RecentInput } from './model'

type Kind = RequestFlag['kind']
/** Every category of a kind is reported, found or not, so a dashboard never has to guess a missing one. */
const CATEGORIES: Record<Kind, readonly string[]> = {
  pii: PII_KINDS,
  injection: INJECTION_RULES.map((r) => r.id),
}

const zeros = (kind: Kind): Record<string, number> => Object.fromEntries(CATEGORIES[kind].map((c) => [c, 0]))

/**
 * The security views over the flags the request log's scan left (src/security/scan.ts): personal data
 * by kind, prompt-injection attempts ("threats") by rule. The request filter and the time window of the
 * metrics apply; only counts are ever shown, never the text that matched.
 */
export class SecurityViews {
  constructor(
    private readonly store: Store,
    private readonly now: () => number = Date.now,
  ) {}

  /** Requests flagged, and per category the requests and the occurrences. */
  async summary(principal: Principal, input: WindowInput, kind: Kind) {
    const where = this.where(principal, input)
    const [[flagged], counts] = await Promise.all([
      this.store.requestFlags.flaggedRequests(where, kind),
      this.store.requestFlags.counts(where, kind),
    ])
    const requests = zeros(kind)
    const occurrences = zeros(kind)
    for (const c of counts) {
      requests[c.category] = c.requests
      occurrences[c.category] = c.occurrences
    }
    return { flaggedRequests: flagged?.requests ?? 0, requests, occurrences }
  }

  /** Per time bucket, the requests flagged, in all and in each category; every bucket and every category present. */
  async overTime(principal: Principal, input: WindowInput, kind: Kind) {
    const window = parseWindow(input, this.now())
    const where = this.where(principal, input)
    const bucket = bucketSql(this.store.schema, window)
    const [flagged, counts] = await Promise.all([
      this.store.requestFlags.flaggedRequests(where, kind, bucket),
      this.store.requestFlags.counts(where, kind, bucket),
    ])
    const totals = new Map(flagged.map((f) => [f.bucket, f.requests]))
    const found = new Map(counts.map((c) => [`${c.bucket}|${c.category}`, c.requests]))
    return bucketsOf(window).map((b) => {
      const values = zeros(kind)
      for (const category of Object.keys(values)) values[category] = found.get(`${b}|${category}`) ?? 0
      return { time: bucketName(b), flaggedRequests: totals.get(b) ?? 0, values }
    })
  }

  /** The latest flagged requests, newest first, with what was found in each (counts). */
  async recent(principal: Principal, input: RecentInput, kind: Kind) {
    const rows = await this.store.requestFlags.recent(this.where(principal, input), kind, input.limit ?? RECENT_PAGE.defaultLimit)
    return rows.map((r) => ({ ...r, createdAt: r.createdAt.toISOString() }))
  }

  private where(principal: Principal, input: WindowInput) {
    return windowScope(this.store.schema, principal.orgId, input.filter, parseWindow(input, this.now()))
  }
}
