import { oneOf, t } from '../util/typebox'
import { INCREMENTS } from './time'

/**
 * The body every traffic view takes: a request filter (spec 2.5), a time window, the
 * caller's time zone as minutes to add to UTC, and the size of a series' buckets.
 */
const TIME_FIELDS = {
  timeFilter: t.Optional(
    t.Object(
      {
        start: t.Optional(t.String({ description: 'ISO 8601; default: 24 hours before end' })),
        end: t.Optional(t.String({ description: 'ISO 8601; default: now' })),
      },
      { additionalProperties: false },
    ),
  ),
  timeZoneDifference: t.Optional(t.Integer({ minimum: -840, maximum: 840, description: 'minutes to add to UTC for local time' })),
  dbIncrement: t.Optional(oneOf(INCREMENTS, { description: 'the size of a series bucket; hour by default' })),
}

const WINDOW_FIELDS = {
  filter: t.Optional(t.Unknown({ description: 'a request filter (spec 2.5), or "all"' })),
  ...TIME_FIELDS,
}

export const WindowBody = t.Object(WINDOW_FIELDS, { additionalProperties: false })

/** A window body with more fields of a route's own. */
export const windowBodyWith = <P extends Parameters<typeof t.Object>[0]>(fields: P) =>
  t.Object({ ...WINDOW_FIELDS, ...fields }, { additionalProperties: false })

/** The time fields alone, with more of a route's own: for logs other than the request log, which the filter does not reach. */
export const timeBodyWith = <P extends Parameters<typeof t.Object>[0]>(fields: P) =>
  t.Object({ ...TIME_FIELDS, ...fields }, { additionalProperties: false })

/** What a window body holds once validated; routes with more fields pass theirs on as a wider type. */
export type WindowInput = typeof WindowBody.static

/** A value, or null where there is none (an average over nothing, a field never set). */
export const Maybe = <S extends Parameters<typeof t.Union>[0][number]>(schema: S) => t.Union([schema, t.Null()])

/** A series point: a bucket named by its local start time, and the bucket's values. */
export const SeriesPoint = <S extends Parameters<typeof t.Object>[0]>(values: S) =>
  t.Object({ time: t.String({ description: 'local start of the bucket, ISO 8601 without a zone' }), ...values })
