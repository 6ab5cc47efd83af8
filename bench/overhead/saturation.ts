/**
 * Scenario (b): wrk keeps `connections` requests in flight for a fixed time; the arm's requests per
 * second is its throughput when the machine, not the client, is the limit.
 */
import { join } from 'node:path'
import type { Target } from './arms'
import { PLAIN_BODY } from './calls'
import type { Settings } from './config'
import { run } from './processes'

export interface SaturationResult {
  rps: number
  p50Ms: number
  p99Ms: number
  requests: number
  /** Answers other than 2xx/3xx, and wrk's socket errors (connect, read, write, timeout). */
  non2xx: number
  socketErrors: number
}

const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000 }

function duration(output: string, label: string): number {
  const match = new RegExp(`^\\s*${label}\\s+([\\d.]+)(us|ms|s)\\s*$`, 'm').exec(output)
  if (!match) throw new Error(`wrk printed no ${label} line:\n${output}`)
  return Number(match[1]) * (UNIT_MS[match[2] as string] as number)
}

export function parseWrk(output: string): SaturationResult {
  const rps = /^Requests\/sec:\s+([\d.]+)/m.exec(output)
  const requests = /^\s*(\d+) requests in /m.exec(output)
  if (!rps || !requests) throw new Error(`wrk printed no totals:\n${output}`)
  const sockets = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output)
  return {
    rps: Number(rps[1]),
    p50Ms: duration(output, '50%'),
    p99Ms: duration(output, '99%'),
    requests: Number(requests[1]),
    non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(output)?.[1] ?? 0),
    socketErrors: sockets ? sockets.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0,
  }
}

function wrk(arm: Target, settings: Settings['saturation'], seconds: number, body: string): Promise<string> {
  const headers = Object.entries(arm.headers)
    .map(([name, value]) => `${name}: ${value}`)
    .join('\n')
  const command = ['wrk', '--latency', '--timeout', '10s', `-t${settings.threads}`, `-c${settings.connections}`, `-d${seconds}s`]
  return run([...command, '-s', join(import.meta.dir, 'post.lua'), arm.url], {
    ...process.env,
    BENCH_BODY: body,
    BENCH_HEADERS: headers,
  })
}

/** `body` is the chat completion each request sends: the suite's two-word prompt unless given. */
export async function runSaturation(
  arm: Target,
  settings: Settings['saturation'],
  body: string = PLAIN_BODY,
): Promise<SaturationResult> {
  if (settings.warmupSeconds > 0) await wrk(arm, settings, settings.warmupSeconds, body)
  return parseWrk(await wrk(arm, settings, settings.seconds, body))
}
