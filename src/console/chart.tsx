import 'uplot/dist/uPlot.min.css'
import { useEffect, useRef, useState } from 'preact/hooks'
import uPlot from 'uplot'

/** Axis steps for counts: 1, 2, 5, 10, 20, 50, ... */
const WHOLE_STEPS = [1, 2, 5]
  .flatMap((step) => [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000].map((scale) => step * scale))
  .sort((a, b) => a - b)

const bucketTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'short', timeStyle: 'short' })

/**
 * The value axis as wide as its longest label ($0.00006 is wider than 2), measured in uPlot's own axis
 * font: a fixed width cut the long ones off at the chart's edge.
 */
const AXIS_FONT_PX = 12
const TICK_AND_GAP_PX = 16
const valueAxisSize = (plot: uPlot, labels: string[] | null): number => {
  const ratio = devicePixelRatio || 1
  plot.ctx.font = `${Math.round(AXIS_FONT_PX * ratio)}px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif`
  const widest = Math.max(0, ...(labels ?? []).map((label) => plot.ctx.measureText(label).width / ratio))
  return Math.ceil(widest) + TICK_AND_GAP_PX
}

export interface SeriesPoint {
  /** Local start of the bucket, ISO 8601 without a zone. */
  time: string
  value: number | null
}

/**
 * One measure over time, as a line with its points marked: read by its title, axes and values, never
 * by colour alone. Under it, the value of the point the pointer is on (the latest one otherwise), in the
 * measure's own format. It takes the width of its container.
 */
export function Chart({
  title,
  points,
  format,
  axisFormat = format,
  whole = false,
}: {
  title: string
  points: SeriesPoint[]
  format(value: number): string
  /** The axis's labels, when its round steps need another format than the values (every digit of a price). */
  axisFormat?(value: number): string
  /** A count: its axis steps by whole numbers (no "0.5 requests"). */
  whole?: boolean
}) {
  const holder = useRef<HTMLDivElement>(null)
  const [pointed, setPointed] = useState<number | null>(null)
  const empty = points.every((point) => point.value === null)
  useEffect(() => {
    const element = holder.current
    setPointed(null)
    if (!element || empty) return
    const data: uPlot.AlignedData = [
      points.map((point) => new Date(point.time).getTime() / 1000),
      points.map((point) => point.value),
    ]
    const accent = getComputedStyle(document.documentElement).getPropertyValue('--accent').trim() || '#0969da'
    const muted = getComputedStyle(document.documentElement).getPropertyValue('--muted').trim() || '#59636e'
    const axis = { stroke: muted, grid: { stroke: 'rgba(128,128,128,0.15)' }, ticks: { stroke: 'rgba(128,128,128,0.3)' } }
    const plot = new uPlot(
      {
        width: Math.max(element.clientWidth, 240),
        height: 180,
        legend: { show: false },
        cursor: { show: true },
        // From zero, so a flat series reads as what it is; a series of zeros still gets an axis up to 1.
        scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
        axes: [
          axis,
          {
            ...axis,
            size: valueAxisSize,
            ...(whole ? { incrs: WHOLE_STEPS } : {}),
            values: (_u, ticks) => ticks.map((tick) => axisFormat(tick)),
          },
        ],
        series: [{}, { label: title, stroke: accent, width: 2, points: { show: true, size: 4 } }],
        hooks: { setCursor: [(u) => setPointed(u.cursor.idx ?? null)] },
      },
      data,
      element,
    )
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(element.clientWidth, 240), height: 180 }))
    resize.observe(element)
    return () => {
      resize.disconnect()
      plot.destroy()
    }
  }, [points])
  const latest = points.findLastIndex((point) => point.value !== null)
  const shown = points[pointed ?? latest]
  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      {empty ? (
        <p class="muted empty-chart">No values in this window.</p>
      ) : (
        <>
          <div ref={holder} role="img" aria-label={`${title} over time`} />
          {shown && (
            <p class="muted readout" data-readout>
              {pointed === null ? 'Latest, ' : ''}
              {bucketTime.format(new Date(shown.time))}: {shown.value === null ? '-' : format(shown.value)}
            </p>
          )}
        </>
      )}
    </figure>
  )
}
