import { and, eq, type SQL, sql } from 'drizzle-orm'
import type { Database } from '../database'

/** What people add to traffic after the fact: scores, a request's properties, session feedback and tags. */
export const annotationsRepository = ({ orm, tables: { requestScores, sessionFeedback, sessionTags, requests } }: Database) => ({
  async score(score: {
    requestId: string
    orgId: string
    name: string
    value: number
    actorId: string | null
    createdAt: Date
  }): Promise<void> {
    await orm
      .insert(requestScores)
      .values(score)
      .onConflictDoUpdate({
        target: [requestScores.requestId, requestScores.name],
        set: { value: score.value, actorId: score.actorId, createdAt: score.createdAt },
      })
  },
  /**
   * Per score name over the requests a condition selects: how many, their average, lowest and highest,
   * and how many reach `threshold` (the verdicts).
   */
  async scoreStats(where: SQL, threshold: number) {
    const rows = await orm
      .select({
        name: requestScores.name,
        count: sql<number>`count(*)`,
        average: sql<number>`avg(${requestScores.value})`,
        min: sql<number>`min(${requestScores.value})`,
        max: sql<number>`max(${requestScores.value})`,
        passed: sql<number>`sum(case when ${requestScores.value} >= ${threshold} then 1 else 0 end)`,
      })
      .from(requestScores)
      .innerJoin(requests, and(eq(requests.id, requestScores.requestId), eq(requests.orgId, requestScores.orgId)))
      .where(where)
      .groupBy(requestScores.name)
    return rows.map((r) => ({
      name: r.name,
      count: Number(r.count),
      average: Number(r.average),
      min: Number(r.min),
      max: Number(r.max),
      passed: Number(r.passed),
    }))
  },
  async scoresOf(orgId: string, requestId: string) {
    return orm
      .select({ name: requestScores.name, value: requestScores.value })
      .from(requestScores)
      .where(and(eq(requestScores.orgId, orgId), eq(requestScores.requestId, requestId)))
  },
  /** Sets one property of a request (read, change, write, in the caller's transaction). */
  async setProperty(orgId: string, requestId: string, key: string, value: string): Promise<Record<string, string> | undefined> {
    const [row] = await orm
      .select({ properties: requests.properties })
      .from(requests)
      .where(and(eq(requests.orgId, orgId), eq(requests.id, requestId)))
      .limit(1)
    if (!row) return undefined
    const properties = { ...(row.properties ?? {}), [key]: value }
    await orm
      .update(requests)
      .set({ properties })
      .where(and(eq(requests.orgId, orgId), eq(requests.id, requestId)))
    return properties
  },
  async sessionExists(orgId: string, sessionId: string): Promise<boolean> {
    const [row] = await orm
      .select({ id: requests.id })
      .from(requests)
      .where(and(eq(requests.orgId, orgId), eq(requests.sessionId, sessionId)))
      .limit(1)
    return row !== undefined
  },
  async sessionFeedback(feedback: {
    orgId: string
    sessionId: string
    rating: number
    actorId: string | null
    createdAt: Date
  }): Promise<void> {
    await orm
      .insert(sessionFeedback)
      .values(feedback)
      .onConflictDoUpdate({
        target: [sessionFeedback.orgId, sessionFeedback.sessionId],
        set: { rating: feedback.rating, actorId: feedback.actorId, createdAt: feedback.createdAt },
      })
  },
  async tagSession(orgId: string, sessionId: string, tag: string): Promise<void> {
    await orm.insert(sessionTags).values({ orgId, sessionId, tag, createdAt: new Date() }).onConflictDoNothing()
  },
  async sessionTagsOf(orgId: string, sessionId: string): Promise<string[]> {
    const rows = await orm
      .select({ tag: sessionTags.tag })
      .from(sessionTags)
      .where(and(eq(sessionTags.orgId, orgId), eq(sessionTags.sessionId, sessionId)))
    return rows.map((r) => r.tag).sort()
  },
})
