import type { ComponentChildren } from 'preact'

/** The windows a traffic view looks back over, each with the series bucket that reads best for it. */
export const WINDOWS = [
  { id: '1h', label: 'Last hour', hours: 1, bucket: 'min' },
  { id: '24h', label: 'Last 24 hours', hours: 24, bucket: 'hour' },
  { id: '7d', label: 'Last 7 days', hours: 24 * 7, bucket: 'day' },
  { id: '30d', label: 'Last 30 days', hours: 24 * 30, bucket: 'day' },
  { id: '90d', label: 'Last 90 days', hours: 24 * 90, bucket: 'week' },
] as const
export type WindowId = (typeof WINDOWS)[number]['id']

export const windowOf = (id: WindowId) => WINDOWS.find((w) => w.id === id) ?? WINDOWS[1]

/** The window up to now as the traffic routes take it, in the reader's own time zone. */
export function timeWindow(id: WindowId) {
  const end = new Date()
  return {
    timeFilter: { start: new Date(end.getTime() - windowOf(id).hours * 3_600_000).toISOString(), end: end.toISOString() },
    timeZoneDifference: -end.getTimezoneOffset(),
  }
}

/** The toolbar of a traffic view: the window it looks back over, the view's own controls, and the time zone it speaks. */
export function WindowBar({
  value,
  onChange,
  children,
}: {
  value: WindowId
  onChange(id: WindowId): void
  children?: ComponentChildren
}) {
  return (
    <div class="toolbar">
      <label>
        Window
        <select value={value} onChange={(event) => onChange((event.currentTarget as HTMLSelectElement).value as WindowId)}>
          {WINDOWS.map((w) => (
            <option key={w.id} value={w.id}>
              {w.label}
            </option>
          ))}
        </select>
      </label>
      {children}
      <span class="muted">Times in {Intl.DateTimeFormat().resolvedOptions().timeZone}</span>
    </div>
  )
}
