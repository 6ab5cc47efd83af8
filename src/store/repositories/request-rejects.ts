import type { Database } from '../database'

/** A request record the database refused, as set aside for the operator. */
export interface RequestReject {
  requestId: string
  orgId: string
  error: string
  /** The record as JSON text. */
  record: string
  createdAt: Date
}

export const requestRejectsRepository = ({ orm, tables: { requestLogRejects } }: Database) => ({
  /** Keeps the first refusal of a request id: setting one aside again (a retried batch) changes nothing. */
  async add(reject: RequestReject): Promise<void> {
    await orm.insert(requestLogRejects).values(reject).onConflictDoNothing()
  },
  async list(limit = 100): Promise<RequestReject[]> {
    return orm.select().from(requestLogRejects).limit(limit)
  },
})
