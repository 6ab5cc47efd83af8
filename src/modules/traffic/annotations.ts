import type { Principal } from '../../auth/principal'
import { notFound } from '../../errors'
import type { Store } from '../../store/store'

/** Ratings are true/false (stored 1/0) or a number from -1 to 1, as for `POST /v1/feedback`. */
const ratingValue = (rating: boolean | number): number => (typeof rating === 'boolean' ? (rating ? 1 : 0) : rating)

/** Annotations (spec 4.6 `traffic.annotate`): on requests of the request log and sessions of it. */
export class AnnotationsService {
  constructor(
    private readonly store: Store,
    private readonly now: () => number = Date.now,
  ) {}

  async requestFeedback(principal: Principal, requestId: string, rating: boolean | number) {
    const id = await this.ownRequest(principal, requestId)
    const value = ratingValue(rating)
    await this.store.org(principal.orgId).feedback.upsert({
      requestId: id,
      rating: value,
      actorId: principal.actorId,
      createdAt: new Date(this.now()),
    })
    return { requestId: id, rating: value }
  }

  async score(principal: Principal, requestId: string, name: string, value: number) {
    const id = await this.ownRequest(principal, requestId)
    await this.store.org(principal.orgId).annotations.score({
      requestId: id,
      name,
      value,
      actorId: principal.actorId,
      createdAt: new Date(this.now()),
    })
    return { requestId: id, scores: await this.store.org(principal.orgId).annotations.scoresOf(id) }
  }

  async setProperty(principal: Principal, requestId: string, key: string, value: string) {
    const id = requestId.toLowerCase()
    const properties = await this.store.transaction((tx) =>
      tx.org(principal.orgId).annotations.setProperty(id, key.toLowerCase(), value),
    )
    if (!properties) throw notFound('request')
    return { requestId: id, properties }
  }

  async sessionFeedback(principal: Principal, sessionId: string, rating: boolean | number) {
    await this.ownSession(principal, sessionId)
    const value = ratingValue(rating)
    await this.store.org(principal.orgId).annotations.sessionFeedback({
      sessionId,
      rating: value,
      actorId: principal.actorId,
      createdAt: new Date(this.now()),
    })
    return { sessionId, rating: value }
  }

  async tagSession(principal: Principal, sessionId: string, tag: string) {
    await this.ownSession(principal, sessionId)
    await this.store.org(principal.orgId).annotations.tagSession(sessionId, tag)
    return { sessionId, tags: await this.store.org(principal.orgId).annotations.sessionTagsOf(sessionId) }
  }

  /** What was said of a session: its rating (null when none) and its tags. */
  async sessionAnnotations(principal: Principal, sessionId: string) {
    await this.ownSession(principal, sessionId)
    const org = this.store.org(principal.orgId).annotations
    const [rating, tags] = await Promise.all([org.sessionRating(sessionId), org.sessionTagsOf(sessionId)])
    return { sessionId, rating, tags }
  }

  /** A request of another organisation, or one not (yet) in the log, is not found. */
  private async ownRequest(principal: Principal, requestId: string): Promise<string> {
    const id = requestId.toLowerCase()
    if (!(await this.store.requests.get(principal.orgId, id))) throw notFound('request')
    return id
  }

  private async ownSession(principal: Principal, sessionId: string): Promise<void> {
    if (!(await this.store.org(principal.orgId).annotations.sessionExists(sessionId))) throw notFound('session')
  }
}
