import { type PageSize, Paging } from '../../http/schema'
import { Maybe, SeriesPoint, windowBodyWith } from '../../query/model'
import { t } from '../../util/typebox'

export const RECENT_PAGE: PageSize = { maxLimit: 500, defaultLimit: 50 }

export const RecentBody = windowBodyWith({ limit: Paging(RECENT_PAGE).limit })
export type RecentInput = typeof RecentBody.static

const Counts = t.Record(t.String(), t.Number())

export const Summary = t.Object({
  flaggedRequests: t.Number({ description: 'requests with at least one finding' }),
  requests: t.Record(t.String(), t.Number(), { description: 'per category: the requests with a finding of it' }),
  occurrences: t.Record(t.String(), t.Number(), { description: 'per category: how often it was found' }),
})

export const OverTime = t.Array(SeriesPoint({ flaggedRequests: t.Number(), values: Counts }))

export const Recent = t.Array(
  t.Object({
    requestId: t.String(),
    createdAt: t.String({ format: 'date-time' }),
    model: t.String(),
    userId: Maybe(t.String()),
    findings: t.Record(t.String(), t.Number(), { description: 'per category: how often it was found; never the text' }),
  }),
)
