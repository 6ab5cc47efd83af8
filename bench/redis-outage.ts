/**
 * What a Redis outage costs gw's callers. One gw (GW_REDIS_URL set, SQLite, the fake provider) takes
 * chat calls with Redis up, then with its Redis SIGKILLed, then Redis comes back on the same port; the
 * same process throughout, no restart. Each state is measured twice: saturation (wrk, 64 connections:
 * throughput and latency) and a fixed rate below saturation (latency from the scheduled send, so a
 * stall is not hidden). The states take turns OUTAGE_ROUNDS times, so a noisy stretch of the shared
 * machine falls on both; after each outage, the time until /healthcheck answers `ok` again.
 *
 *   bun run build && bun bench/redis-outage.ts [label=path/to/gw ...]    (gw=dist/gw by default)
 *
 * Needs `redis-server` and `wrk` on PATH (Debian: apt-get install redis-server wrk). Several binaries
 * (e.g. before=/tmp/gw-before after=dist/gw) are measured one after the other against the same fake
 * provider, each with its own Redis and data directory.
 *
 * Knobs: OUTAGE_ROUNDS (3), OUTAGE_SECONDS (8, per wrk run, after 2 s of warm-up), OUTAGE_CONNECTIONS
 * (64), OUTAGE_RPS (300) and OUTAGE_RATE_SECONDS (5) for the fixed rate. Targets: with Redis down,
 * throughput at least half of Redis up, and p99 at the fixed rate at most 5 ms above. Appends a run
 * to bench/results/<date>-redis-outage.md and prints it.
 */
import { appendFileSync, existsSync, writeFileSync } from 'node:fs'
import { cpus } from 'node:os'
import { join, resolve } from 'node:path'
import type { Subprocess } from 'bun'
import { accepts } from '../test/support/redis-server'
import { PATH as CHAT_PATH, startFake, type Target } from './overhead/arms'
import { PLAIN_BODY } from './overhead/calls'
import { integer } from './overhead/config'
import { runFixedRate } from './overhead/fixed-rate'
import { type GwEnv, gwEnv, gwHeaders, prepareOrg, startGw } from './overhead/gw'
import { formatLoad } from './overhead/machine'
import { freePort, runInScratch, start, stop } from './overhead/processes'
import { table } from './overhead/report'
import { runSaturation, type SaturationResult } from './overhead/saturation'

const REPO = resolve(import.meta.dir, '..')
const settings = {
  rounds: integer('OUTAGE_ROUNDS', 3),
  saturation: {
    connections: integer('OUTAGE_CONNECTIONS', 64),
    threads: 2,
    seconds: integer('OUTAGE_SECONDS', 8),
    warmupSeconds: 2,
  },
  fixedRate: { rps: integer('OUTAGE_RPS', 300), seconds: integer('OUTAGE_RATE_SECONDS', 5), rounds: 1, warmupSeconds: 1 },
}

type RedisState = 'up' | 'down'

interface Measured {
  saturation: SaturationResult
  fixedP50Ms: number
  fixedP99Ms: number
  fixedErrors: number
}

interface Round {
  up: Measured
  down: Measured
  /** From Redis listening again to the first /healthcheck that answers `ok`. */
  recoveryMs: number
}

/** A redis-server of the bench's own, nothing persisted: killing it loses everything, as a crash would. */
function redisServer(port: number, logPath: string): Subprocess {
  const command = ['redis-server', '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']
  return start(command, { env: process.env, logPath })
}

/**
 * Polls /healthcheck every 10 ms, with a chat call before each poll (light traffic, as a server in
 * service has), until its status is `wanted`; answers the milliseconds that took.
 */
async function healthBecomes(target: Target, base: string, wanted: string, timeoutMs = 15_000): Promise<number> {
  const started = performance.now()
  while (performance.now() - started < timeoutMs) {
    await (await fetch(target.url, { method: 'POST', headers: target.headers, body: PLAIN_BODY })).arrayBuffer()
    const body = (await (await fetch(`${base}/healthcheck`)).json()) as { status: string }
    if (body.status === wanted) return performance.now() - started
    await Bun.sleep(10)
  }
  throw new Error(`${target.name}: /healthcheck did not answer ${wanted} within ${timeoutMs} ms`)
}

async function measure(target: Target, fakePid: number): Promise<Measured> {
  const saturation = await runSaturation(target, settings.saturation)
  const fixed = (
    await runFixedRate([target], settings.fixedRate, { watch: () => ({ server: target.pid, provider: fakePid }) })
  ).get(target.name)
  if (!fixed) throw new Error('the fixed-rate run answered nothing')
  return { saturation, fixedP50Ms: fixed.latency.p50, fixedP99Ms: fixed.latency.p99, fixedErrors: fixed.errors }
}

async function runBinary(label: string, binary: string, workDir: string, fake: { port: number; pid: number }): Promise<Round[]> {
  const redisPort = freePort()
  const redisLog = join(workDir, `redis-${label}.log`)
  let redis = redisServer(redisPort, redisLog)
  while (!(await accepts(redisPort))) await Bun.sleep(10)
  const env: GwEnv = {
    ...gwEnv(join(workDir, `gw-${label}`), freePort(), fake.port),
    GW_REDIS_URL: `redis://127.0.0.1:${redisPort}`,
  }
  const org = await prepareOrg(binary, env)
  const gw = await startGw(binary, env, join(workDir, `gw-${label}.log`))
  const base = `http://127.0.0.1:${env.GW_PORT}`
  const target: Target = { name: label, url: `${base}${CHAT_PATH}`, headers: gwHeaders(org.apiKey), pid: gw.pid }
  const rounds: Round[] = []
  for (let round = 1; round <= settings.rounds; round++) {
    await healthBecomes(target, base, 'ok')
    const up = await measure(target, fake.pid)
    await stop(redis, 'SIGKILL')
    await healthBecomes(target, base, 'degraded')
    const down = await measure(target, fake.pid)
    redis = redisServer(redisPort, redisLog)
    while (!(await accepts(redisPort))) await Bun.sleep(10)
    const recoveryMs = await healthBecomes(target, base, 'ok')
    rounds.push({ up, down, recoveryMs })
    console.log(
      `[redis-outage] ${label} round ${round}: up ${up.saturation.rps.toFixed(0)} req/s, down ${down.saturation.rps.toFixed(0)} req/s, back in ${recoveryMs.toFixed(0)} ms`,
    )
  }
  await stop(gw)
  await stop(redis)
  return rounds
}

const ms = (n: number) => n.toFixed(2)
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor((sorted.length - 1) / 2)] as number
}
const spread = (values: number[], format: (n: number) => string) =>
  `${format(median(values))} (${format(Math.min(...values))}–${format(Math.max(...values))})`

function report(results: Array<{ label: string; rounds: Round[] }>): string {
  const perRound: string[][] = []
  const summary: string[][] = []
  for (const { label, rounds } of results) {
    rounds.forEach((round, i) => {
      for (const state of ['up', 'down'] as RedisState[]) {
        const m = round[state]
        perRound.push([
          label,
          String(i + 1),
          state,
          m.saturation.rps.toFixed(0),
          ms(m.saturation.p50Ms),
          ms(m.saturation.p99Ms),
          String(m.saturation.non2xx + m.saturation.socketErrors),
          ms(m.fixedP50Ms),
          ms(m.fixedP99Ms),
          String(m.fixedErrors),
        ])
      }
    })
    const ratios = rounds.map((r) => r.down.saturation.rps / r.up.saturation.rps)
    const added = rounds.map((r) => r.down.fixedP99Ms - r.up.fixedP99Ms)
    summary.push([
      label,
      spread(
        ratios.map((r) => r * 100),
        (n) => `${n.toFixed(0)} %`,
      ),
      median(ratios) >= 0.5 ? 'met' : '**NOT met**',
      spread(added, ms),
      median(added) <= 5 ? 'met' : '**NOT met**',
      spread(
        rounds.map((r) => r.recoveryMs),
        (n) => n.toFixed(0),
      ),
    ])
  }
  const s = settings
  return [
    `## Run at ${new Date().toISOString()}`,
    '',
    `${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, load before the run ${formatLoad()}; Bun ${Bun.version}; ` +
      `${Bun.spawnSync(['redis-server', '--version']).stdout.toString().trim().split(' ').slice(0, 3).join(' ')}; ` +
      `wrk ${s.saturation.connections} connections, ${s.saturation.threads} threads, ${s.saturation.seconds} s after ${s.saturation.warmupSeconds} s of warm-up; ` +
      `fixed rate ${s.fixedRate.rps} req/s for ${s.fixedRate.seconds} s after ${s.fixedRate.warmupSeconds} s; ${s.rounds} rounds of up, then down.`,
    '',
    'Median over the rounds (min–max). Throughput kept: saturation req/s down / up in the same round. p99 added: fixed-rate p99 down − up, same round. Back: ms from Redis listening again to /healthcheck `ok`.',
    '',
    table(['gw', 'throughput kept', '≥ 50 %', 'p99 added ms', '≤ 5 ms', 'back ms'], summary),
    '',
    table(
      ['gw', 'round', 'Redis', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'fixed p50 ms', 'fixed p99 ms', 'fixed errors'],
      perRound,
    ),
    '',
  ].join('\n')
}

await runInScratch('redis-outage', async (workDir) => {
  const named = (process.argv.length > 2 ? process.argv.slice(2) : ['gw=dist/gw']).map((arg) => {
    const [label, path] = arg.includes('=') ? (arg.split('=', 2) as [string, string]) : ['gw', arg]
    return { label, binary: resolve(path) }
  })
  for (const { binary } of named)
    if (!existsSync(binary)) throw new Error(`${binary} does not exist; build it with bun run build`)
  const fake = await startFake({ workDir, fakeLatencyMs: 0 })
  const results: Array<{ label: string; rounds: Round[] }> = []
  for (const { label, binary } of named) results.push({ label, rounds: await runBinary(label, binary, workDir, fake) })
  const text = report(results)
  const file = join(REPO, 'bench', 'results', `${new Date().toISOString().slice(0, 10)}-redis-outage.md`)
  if (!existsSync(file))
    writeFileSync(file, '# A Redis outage: what it costs gw\n\nWritten by `bun bench/redis-outage.ts`; each run is appended.\n')
  // One blank line before each run and none after the last, as the formatter keeps Markdown.
  appendFileSync(file, `\n${text.trimEnd()}\n`)
  console.log(text)
  console.log(`[redis-outage] appended to ${file}`)
})
