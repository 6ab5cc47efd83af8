import { and, eq, inArray, type SQL, sql } from 'drizzle-orm'
import type { Database } from '../database'
import { orgRows } from '../scope'
import type { Clock } from '../store'

/** What one organisation adds to its traffic after the fact: scores, a request's properties, session feedback and tags. */
export const annotationsRepository = (
  { orm, tables: { requestScores, requestFeedback, requestFlags, sessionFeedback, sessionTags, requests } }: Database,
  orgId: string,
  now: Clock,
) => {
  const scores = orgRows(requestScores, orgId)
  const request = orgRows(requests, orgId)
  const feedback = orgRows(sessionFeedback, orgId)
  const tags = orgRows(sessionTags, orgId)
  const ratings = orgRows(requestFeedback, orgId)
  const flags = orgRows(requestFlags, orgId)
  return {
    /** Everything said about some requests after they ran: the rating, the scores and the security flags. */
    async ofRequests(requestIds: readonly string[]) {
      const ids = [...requestIds]
      const [rated, scored, flagged] = await Promise.all([
        orm
          .select({ requestId: requestFeedback.requestId, rating: requestFeedback.rating })
          .from(requestFeedback)
          .where(ratings.where(inArray(requestFeedback.requestId, ids))),
        orm
          .select({ requestId: requestScores.requestId, name: requestScores.name, value: requestScores.value })
          .from(requestScores)
          .where(scores.where(inArray(requestScores.requestId, ids)))
          .orderBy(requestScores.name),
        orm
          .select({
            requestId: requestFlags.requestId,
            kind: requestFlags.kind,
            category: requestFlags.category,
            occurrences: requestFlags.occurrences,
          })
          .from(requestFlags)
          .where(flags.where(inArray(requestFlags.requestId, ids)))
          .orderBy(requestFlags.kind, requestFlags.category),
      ])
      type Flag = Omit<(typeof flagged)[number], 'requestId'>
      type Annotations = { rating: number | null; scores: Array<{ name: string; value: number }>; flags: Flag[] }
      const byRequest = new Map<string, Annotations>(ids.map((id) => [id, { rating: null, scores: [], flags: [] }]))
      for (const { requestId, rating } of rated) {
        const annotations = byRequest.get(requestId)
        if (annotations) annotations.rating = rating
      }
      for (const { requestId, ...score } of scored) byRequest.get(requestId)?.scores.push(score)
      for (const { requestId, ...flag } of flagged) byRequest.get(requestId)?.flags.push(flag)
      return byRequest
    },
    async score(fields: { requestId: string; name: string; value: number; actorId: string | null; createdAt: Date }) {
      await orm
        .insert(requestScores)
        .values(scores.row(fields))
        .onConflictDoUpdate({
          target: [requestScores.requestId, requestScores.name],
          set: { value: fields.value, actorId: fields.actorId, createdAt: fields.createdAt },
          // The key holds no organisation: another organisation's score of the same request id stays as it is.
          setWhere: scores.where(),
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
        .where(scores.where(where))
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
    async scoresOf(requestId: string) {
      return orm
        .select({ name: requestScores.name, value: requestScores.value })
        .from(requestScores)
        .where(scores.where(eq(requestScores.requestId, requestId)))
    },
    /** Sets one property of a request (read, change, write, in the caller's transaction). */
    async setProperty(requestId: string, key: string, value: string): Promise<Record<string, string> | undefined> {
      const [row] = await orm
        .select({ properties: requests.properties })
        .from(requests)
        .where(request.where(eq(requests.id, requestId)))
        .limit(1)
      if (!row) return undefined
      const properties = { ...(row.properties ?? {}), [key]: value }
      await orm
        .update(requests)
        .set({ properties })
        .where(request.where(eq(requests.id, requestId)))
      return properties
    },
    async sessionExists(sessionId: string): Promise<boolean> {
      const [row] = await orm
        .select({ id: requests.id })
        .from(requests)
        .where(request.where(eq(requests.sessionId, sessionId)))
        .limit(1)
      return row !== undefined
    },
    async sessionFeedback(fields: { sessionId: string; rating: number; actorId: string | null; createdAt: Date }) {
      await orm
        .insert(sessionFeedback)
        .values(feedback.row(fields))
        .onConflictDoUpdate({
          target: [sessionFeedback.orgId, sessionFeedback.sessionId],
          set: { rating: fields.rating, actorId: fields.actorId, createdAt: fields.createdAt },
        })
    },
    async sessionRating(sessionId: string): Promise<number | null> {
      const [row] = await orm
        .select({ rating: sessionFeedback.rating })
        .from(sessionFeedback)
        .where(feedback.where(eq(sessionFeedback.sessionId, sessionId)))
        .limit(1)
      return row?.rating ?? null
    },
    async tagSession(sessionId: string, tag: string): Promise<void> {
      await orm
        .insert(sessionTags)
        .values(tags.row({ sessionId, tag, createdAt: new Date(now()) }))
        .onConflictDoNothing()
    },
    async sessionTagsOf(sessionId: string): Promise<string[]> {
      const rows = await orm
        .select({ tag: sessionTags.tag })
        .from(sessionTags)
        .where(tags.where(eq(sessionTags.sessionId, sessionId)))
      return rows.map((r) => r.tag).sort()
    },
  }
}
