/**
 * Scenario (c): requests leave on a fixed schedule whether or not earlier ones have answered (open
 * loop), and each latency counts from its scheduled time, so a stalled server shows up in the figures
 * instead of silently slowing the client down (coordinated omission). wrk2 is not packaged by Debian,
 * hence this client.
 */
import type { Target } from './arms'
import { headersOf, PLAIN_BODY, STREAM_BODY } from './calls'
import type { Settings } from './config'
import { addUse, type CpuUse, CpuWatch, type Watched } from './cpu'
import { type Summary, summarize } from './stats'

export interface FixedRateResult {
  /** Scheduled send to last byte: what a caller at this rate waits. */
  latency: Summary
  /** Actual send to last byte. */
  service: Summary
  /** Actual send minus scheduled send: the client's own timer slack, the same for every arm. */
  lateness: Summary
  achievedRps: number
  errors: number
  /** What the watched processes' threads ran and waited for a core during the measured part. */
  cpu: CpuUse
}

interface Samples {
  latency: number[]
  service: number[]
  lateness: number[]
  errors: number
  /** Time from each measured round's first send to its last answer, summed. */
  measuredMs: number
  cpu?: CpuUse
}

/** Plain calls time the whole answer; streamed ones the whole stream, to its last byte. */
export type CallMode = 'plain' | 'stream'

interface Call {
  url: string
  headers: () => Record<string, string>
  body: string
}

const callOf = (arm: Target, mode: CallMode): Call =>
  mode === 'stream'
    ? { url: arm.stream?.url ?? arm.url, headers: () => headersOf(arm), body: arm.stream?.body ?? STREAM_BODY }
    : { url: arm.url, headers: () => headersOf(arm), body: arm.body ?? PLAIN_BODY }

async function fire(call: Call, scheduled: number, into: Samples): Promise<void> {
  const sent = performance.now()
  try {
    const response = await fetch(call.url, { method: 'POST', headers: call.headers(), body: call.body })
    await response.arrayBuffer()
    const done = performance.now()
    if (response.status !== 200) {
      into.errors += 1
      return
    }
    into.latency.push(done - scheduled)
    into.service.push(done - sent)
    into.lateness.push(sent - scheduled)
  } catch {
    into.errors += 1
  }
}

async function openLoop(call: Call, rps: number, seconds: number, into: Samples): Promise<void> {
  const total = rps * seconds
  const interval = 1000 / rps
  const inFlight: Promise<void>[] = []
  const start = performance.now()
  let next = 0
  while (next < total) {
    const now = performance.now()
    for (; next < total && start + next * interval <= now; next++) inFlight.push(fire(call, start + next * interval, into))
    // Bun's timers have millisecond granularity and may wake a little early; rounding up keeps the
    // slack to about half a millisecond at a few percent of one core, where spinning would eat a core.
    if (next < total) await Bun.sleep(Math.max(1, Math.ceil(start + next * interval - performance.now())))
  }
  await Promise.all(inFlight)
  into.measuredMs += performance.now() - start
}

const noSamples = (): Samples => ({ latency: [], service: [], lateness: [], errors: 0, measuredMs: 0 })

export interface FixedRateHooks<T extends Target> {
  /** The processes whose threads' CPU is taken over an arm's measured parts, besides this client. */
  watch(arm: T): Watched
  /** Called as an arm's round begins (its warm-up included); the function it answers, as the round ends. */
  round?(arm: T): () => void
}

/**
 * The arms take turns at the fixed rate, `rounds` times, each round after its own warm-up; an arm's
 * figures pool its rounds. A noisy stretch of the shared machine's time then falls on every arm alike,
 * and the added latency (gw minus direct) compares like with like.
 */
export async function runFixedRate<T extends Target>(
  arms: T[],
  settings: Settings['fixedRate'],
  hooks: FixedRateHooks<T>,
  mode: CallMode = 'plain',
): Promise<Map<T['name'], FixedRateResult>> {
  const samples = new Map<T['name'], Samples>(arms.map((arm) => [arm.name, noSamples()]))
  for (let round = 0; round < settings.rounds; round++) {
    for (const arm of arms) {
      const into = samples.get(arm.name) as Samples
      const call = callOf(arm, mode)
      const roundEnds = hooks.round?.(arm)
      if (settings.warmupSeconds > 0) await openLoop(call, settings.rps, settings.warmupSeconds, noSamples())
      const cpu = new CpuWatch(hooks.watch(arm))
      await openLoop(call, settings.rps, settings.seconds, into)
      into.cpu = addUse(into.cpu, cpu.stop())
      roundEnds?.()
    }
  }
  return new Map(
    [...samples].map(([name, s]) => [
      name,
      {
        latency: summarize(s.latency),
        service: summarize(s.service),
        lateness: summarize(s.lateness),
        achievedRps: (s.latency.length * 1000) / s.measuredMs,
        errors: s.errors,
        cpu: s.cpu ?? { seconds: 0, threads: [] },
      },
    ]),
  )
}
