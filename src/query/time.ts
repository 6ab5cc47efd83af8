import { type AnyColumn, type SQL, sql } from 'drizzle-orm'
import { badRequest } from '../errors'
import type { Database } from '../store/database'

/**
 * Time buckets for series. A bucket is named by the local start time of its interval (the caller's
 * time zone, given as minutes to add to UTC), so a day starts at local midnight and a month on the
 * local first. Every bucket between start and end is present; an empty one counts zero.
 */
export const INCREMENTS = ['min', 'hour', 'day', 'week', 'month'] as const
export type Increment = (typeof INCREMENTS)[number]

const FIXED_MS: Record<Exclude<Increment, 'month'>, number> = {
  min: 60_000,
  hour: 3_600_000,
  day: 86_400_000,
  week: 7 * 86_400_000,
}
/** 1970-01-01 was a Thursday; the first Monday came four days later, and weeks start on Monday. */
const WEEK_SHIFT_MS = -4 * 86_400_000
export const MAX_BUCKETS = 2_000

export interface TimeWindow {
  start: Date
  end: Date
  /** Minutes to add to UTC to get the caller's local time (e.g. 120 for UTC+2). */
  offsetMinutes: number
  increment: Increment
}

/** The bucket key of an instant: a local start-of-interval in ms since the epoch (months: the local first, 00:00). */
export function bucketOf(at: number, window: TimeWindow): number {
  const local = at + window.offsetMinutes * 60_000
  if (window.increment === 'month') {
    const d = new Date(local)
    return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)
  }
  const size = FIXED_MS[window.increment]
  const shift = window.increment === 'week' ? WEEK_SHIFT_MS : 0
  return Math.floor((local + shift) / size) * size - shift
}

/** A bucket is named by its local start time, without a zone (it is the caller's local time). */
export const bucketName = (bucket: number): string => new Date(bucket).toISOString().replace('Z', '')

/** Every bucket from the one holding `start` to the one holding `end`, in order. */
export function bucketsOf(window: TimeWindow): number[] {
  const out: number[] = []
  let bucket = bucketOf(window.start.getTime(), window)
  const last = bucketOf(window.end.getTime(), window)
  while (bucket <= last) {
    out.push(bucket)
    if (out.length > MAX_BUCKETS)
      throw badRequest(
        `the time range holds more than ${MAX_BUCKETS} buckets of a ${window.increment}; choose a larger dbIncrement`,
      )
    if (window.increment === 'month') {
      const d = new Date(bucket)
      bucket = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)
    } else {
      bucket += FIXED_MS[window.increment]
    }
  }
  return out
}

/** The same bucket key computed in SQL, per dialect, from a time column (the request log's `created_at` unless named). */
export function bucketSql(
  db: Pick<Database, 'dialect' | 'tables'>,
  window: TimeWindow,
  column: AnyColumn = db.tables.requests.createdAt,
): SQL {
  // Written into the statement, not bound: the same expression must appear in SELECT and GROUP BY,
  // and Postgres tells bound copies apart. They are integers computed here from checked input.
  const int = (n: number): SQL => {
    if (!Number.isSafeInteger(n)) throw new Error(`not an integer: ${n}`)
    return sql.raw(String(n))
  }
  const offset = int(window.offsetMinutes * 60_000)
  const epochMs = db.dialect === 'postgres' ? sql`(floor(extract(epoch from ${column}) * 1000)::bigint)` : sql`${column}`
  if (window.increment === 'month') {
    // The local first of the month, as ms since the epoch at UTC midnight.
    return db.dialect === 'postgres'
      ? sql`(extract(epoch from date_trunc('month', to_timestamp((${epochMs} + ${offset}) / 1000.0) at time zone 'UTC')) * 1000)::bigint`
      : sql`(cast(strftime('%s', date((${epochMs} + ${offset}) / 1000, 'unixepoch', 'start of month')) as integer) * 1000)`
  }
  const size = int(FIXED_MS[window.increment])
  const rawShift = window.increment === 'week' ? WEEK_SHIFT_MS : 0
  const shifted = int(window.offsetMinutes * 60_000 + rawShift)
  const shift = int(rawShift)
  // Integer floor division that is right for instants before 1970 too.
  return db.dialect === 'postgres'
    ? sql`(floor((${epochMs} + ${shifted})::numeric / ${size}) * ${size} - ${shift})::bigint`
    : sql`((${epochMs} + ${shifted}) - (((${epochMs} + ${shifted}) % ${size}) + ${size}) % ${size} - ${shift})`
}

export function parseWindow(
  input: { timeFilter?: { start?: string; end?: string }; timeZoneDifference?: number; dbIncrement?: string },
  now: number,
): TimeWindow {
  const end = input.timeFilter?.end ? new Date(input.timeFilter.end) : new Date(now)
  const start = input.timeFilter?.start ? new Date(input.timeFilter.start) : new Date(end.getTime() - 86_400_000)
  if (Number.isNaN(start.getTime()) || Number.isNaN(end.getTime()))
    throw badRequest('timeFilter.start and timeFilter.end must be ISO 8601 date-times')
  if (start.getTime() > end.getTime()) throw badRequest('timeFilter.start must not be after timeFilter.end')
  const offsetMinutes = input.timeZoneDifference ?? 0
  if (!Number.isInteger(offsetMinutes) || Math.abs(offsetMinutes) > 14 * 60)
    throw badRequest('timeZoneDifference must be whole minutes from -840 to 840')
  const increment = (input.dbIncrement ?? 'hour') as Increment
  if (!INCREMENTS.includes(increment)) throw badRequest(`dbIncrement must be one of ${INCREMENTS.join(', ')}`)
  return { start, end, offsetMinutes, increment }
}
