import type { Database } from '../database'
import { orgRows } from '../scope'

export interface RequestFeedback {
  requestId: string
  orgId: string
  /** -1 to 1; true and false are stored as 1 and 0. */
  rating: number
  actorId: string | null
  createdAt: Date
}

/** One organisation's ratings of its requests. */
export const feedbackRepository = ({ orm, tables: { requestFeedback } }: Database, orgId: string) => {
  const rating = orgRows(requestFeedback, orgId)
  return {
    /** The latest rating of a request replaces an earlier one. */
    async upsert(fields: Omit<RequestFeedback, 'orgId'>): Promise<void> {
      await orm
        .insert(requestFeedback)
        .values(rating.row(fields))
        .onConflictDoUpdate({
          target: requestFeedback.requestId,
          set: { rating: fields.rating, actorId: fields.actorId, createdAt: fields.createdAt },
          // A request id is another organisation's when its rating is: never overwrite that one.
          setWhere: rating.where(),
        })
    },
  }
}
