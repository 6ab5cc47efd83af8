/**
 * Scenario (c): requests leave on a fixed schedule whether or not earlier ones have answered (open
 * loop), and each latency counts from its scheduled time, so a stalled server shows up in the figures
 * instead of silently slowing the client down (coordinated omission). wrk2 is not packaged by Debian,
 * hence this client.
 */
import type { Arm } from './arms'
import { PLAIN_BODY } from './calls'
import type { Settings } from './config'
import { type CpuUse, CpuWatch, type Watched } from './cpu'
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
  lastDone: number
}

async function fire(arm: Arm, scheduled: number, into: Samples): Promise<void> {
  const sent = performance.now()
  try {
    const response = await fetch(arm.url, { method: 'POST', headers: arm.headers, body: PLAIN_BODY })
    await response.arrayBuffer()
    const done = performance.now()
    into.lastDone = Math.max(into.lastDone, done)
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

async function openLoop(arm: Arm, rps: number, seconds: number): Promise<Omit<FixedRateResult, 'cpu'>> {
  const total = rps * seconds
  const interval = 1000 / rps
  const samples: Samples = { latency: [], service: [], lateness: [], errors: 0, lastDone: 0 }
  const inFlight: Promise<void>[] = []
  const start = performance.now()
  let next = 0
  while (next < total) {
    const now = performance.now()
    for (; next < total && start + next * interval <= now; next++) inFlight.push(fire(arm, start + next * interval, samples))
    // Bun's timers have millisecond granularity and may wake a little early; rounding up keeps the
    // slack to about half a millisecond at a few percent of one core, where spinning would eat a core.
    if (next < total) await Bun.sleep(Math.max(1, Math.ceil(start + next * interval - performance.now())))
  }
  await Promise.all(inFlight)
  return {
    latency: summarize(samples.latency),
    service: summarize(samples.service),
    lateness: summarize(samples.lateness),
    achievedRps: (samples.latency.length * 1000) / (samples.lastDone - start),
    errors: samples.errors,
  }
}

/** `watch` names the processes whose threads' CPU is taken over the measured part, besides this client. */
export async function runFixedRate(arm: Arm, settings: Settings['fixedRate'], watch: Watched): Promise<FixedRateResult> {
  if (settings.warmupSeconds > 0) await openLoop(arm, settings.rps, settings.warmupSeconds)
  const cpu = new CpuWatch(watch)
  const result = await openLoop(arm, settings.rps, settings.seconds)
  return { ...result, cpu: cpu.stop() }
}
