/**
 * When a limit's window starts and ends. Calendar windows (day, week, month) follow the organisation's
 * time zone, first day of the week and first day of the month; a window of a number of seconds is one
 * of the consecutive windows of that length counted from the Unix epoch, the same on every instance.
 */

export interface WindowSettings {
  timezone: string
  /** ISO numbered: 1 is Monday, 7 is Sunday. */
  weekStart: number
  /** 1 to 28, so that every month has the day. */
  monthStartDay: number
}

export const DEFAULT_WINDOW_SETTINGS: WindowSettings = { timezone: 'UTC', weekStart: 1, monthStartDay: 1 }

/** The window settings as an organisation's settings row holds them. */
export const windowSettingsOf = (settings: {
  budgetTimezone: string
  budgetWeekStart: number
  budgetMonthStartDay: number
}): WindowSettings => ({
  timezone: settings.budgetTimezone,
  weekStart: settings.budgetWeekStart,
  monthStartDay: settings.budgetMonthStartDay,
})

export type Period = 'day' | 'week' | 'month' | 'seconds'

export interface Window {
  start: number
  end: number
}

/** Formatters are dear to make and the time zones few: one per zone, kept. */
const formatters = new Map<string, Intl.DateTimeFormat>()
function formatter(timezone: string): Intl.DateTimeFormat {
  let found = formatters.get(timezone)
  if (!found) {
    found = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    })
    formatters.set(timezone, found)
  }
  return found
}

/** Whether the runtime knows the zone: what the settings route checks before storing it. */
export function isTimezone(timezone: string): boolean {
  try {
    formatter(timezone)
    return true
  } catch {
    return false
  }
}

interface LocalDate {
  year: number
  /** 1 to 12 */
  month: number
  day: number
}

/** The wall-clock date and time at an instant in a zone, as if it were UTC (for arithmetic on it). */
function localParts(instant: number, timezone: string): { date: LocalDate; asUtc: number } {
  const parts: Record<string, number> = {}
  for (const part of formatter(timezone).formatToParts(instant))
    if (part.type !== 'literal') parts[part.type] = Number(part.value)
  const date = { year: parts.year as number, month: parts.month as number, day: parts.day as number }
  const asUtc = Date.UTC(date.year, date.month - 1, date.day, parts.hour, parts.minute, parts.second)
  return { date, asUtc }
}

/**
 * The instant a local midnight happens in a zone. The zone's offset is read at a first guess and read
 * again where that lands, which settles it across a daylight-saving change; a midnight a change skips
 * (a few zones move at 00:00) becomes the first instant of that day.
 */
function midnight(date: LocalDate, timezone: string): number {
  const wall = Date.UTC(date.year, date.month - 1, date.day)
  let guess = wall
  for (let i = 0; i < 2; i++) guess = wall - (localParts(guess, timezone).asUtc - guess)
  return guess
}

/** A date some days, or months, from another (Date.UTC normalises the overflow). */
function shifted(date: LocalDate, days: number, months = 0): LocalDate {
  const moved = new Date(Date.UTC(date.year, date.month - 1 + months, date.day + days))
  return { year: moved.getUTCFullYear(), month: moved.getUTCMonth() + 1, day: moved.getUTCDate() }
}

/**
 * Calendar windows last a day at least, and working out one takes a few time-zone conversions: each is
 * kept until it ends. Bounded: the entries are per period and organisation settings, and all go when
 * there are too many.
 */
const calendarWindows = new Map<string, Window>()
const CALENDAR_WINDOWS_MAX = 10_000

/** The calendar or fixed window around an instant. */
export function windowAt(period: Period, periodSeconds: number, now: number, settings: WindowSettings): Window {
  if (period === 'seconds') {
    const length = periodSeconds * 1000
    const start = Math.floor(now / length) * length
    return { start, end: start + length }
  }
  const key = `${period}|${settings.timezone}|${settings.weekStart}|${settings.monthStartDay}`
  const known = calendarWindows.get(key)
  if (known && known.start <= now && now < known.end) return known
  const window = calendarWindow(period, now, settings)
  if (calendarWindows.size >= CALENDAR_WINDOWS_MAX) calendarWindows.clear()
  calendarWindows.set(key, window)
  return window
}

function calendarWindow(period: Exclude<Period, 'seconds'>, now: number, settings: WindowSettings): Window {
  const { timezone } = settings
  const today = localParts(now, timezone).date
  let first: LocalDate
  let next: LocalDate
  if (period === 'day') {
    first = today
    next = shifted(today, 1)
  } else if (period === 'week') {
    const isoWeekday = ((new Date(Date.UTC(today.year, today.month - 1, today.day)).getUTCDay() + 6) % 7) + 1
    first = shifted(today, -((isoWeekday - settings.weekStart + 7) % 7))
    next = shifted(first, 7)
  } else {
    const day = settings.monthStartDay
    first = { ...(today.day >= day ? today : shifted(today, 0, -1)), day }
    next = shifted(first, 0, 1)
  }
  return { start: midnight(first, timezone), end: midnight(next, timezone) }
}
