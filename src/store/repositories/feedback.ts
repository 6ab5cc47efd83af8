import type { Database } from '../database'

export interface RequestFeedback {
  requestId: string
  orgId: string
  /** -1 to 1; true and false are stored as 1 and 0. */
  rating: number
  actorId: string | null
  createdAt: Date
}

export const feedbackRepository = ({ orm, tables: { requestFeedback } }: Database) => ({
  /** The latest rating of a request replaces an earlier one. */
  async upsert(feedback: RequestFeedback): Promise<void> {
    await orm
      .insert(requestFeedback)
      .values(feedback)
      .onConflictDoUpdate({
        target: requestFeedback.requestId,
        set: { rating: feedback.rating, actorId: feedback.actorId, createdAt: feedback.createdAt },
      })
  },
})
