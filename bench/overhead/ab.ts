/**
 * Compares builds or settings of gw with the suite's own clients, for tuning: each variant is a gw
 * binary with extra environment, started as the suite starts its gw arm (its own SQLite data
 * directory, an organisation made with the CLI, every call with an API key and a layer-2 policy), and
 * measured in the same run as the direct call and the bare Bun proxy: (a) one request at a time and
 * (c) the fixed rate in interleaved rounds, with each server's event-loop CPU per request, and with
 * AB_SATURATION=1 (b) saturation under wrk, each target in turn, in the order given, AB_SATURATION_ROUNDS
 * times (default 1; the median round is shown).
 *
 *   bun bench/overhead/ab.ts main=/tmp/gw-main candidate=dist/gw
 *   bun bench/overhead/ab.ts shipped=dist/gw smol=dist/gw,BUN_OPTIONS=--smol
 *
 * A variant's `AB_LIMITS=<n>` (up to 5) gives its organisation that many budget limits, each applying to
 * every call (`gw.ts`), for what reserving and settling costs:
 *
 *   AB_SATURATION=1 bun bench/overhead/ab.ts plain=dist/gw limits=dist/gw,AB_LIMITS=5
 *
 * It prints a Markdown table and writes nothing under bench/results. Knobs: the suite's SEQ_*, RATE_*
 * and SAT_* (README.md), AB_SATURATION, and AB_WARMUP_SECONDS (default 8): load before anything is timed, so every
 * server's JIT has settled and the variants are compared in their steady state.
 */
import { join } from 'node:path'
import { PATH as CHAT_PATH, directArm, startBunProxy, startFake, type Target } from './arms'
import { timePlain } from './calls'
import { integer, loadSettings } from './config'
import type { CpuUse } from './cpu'
import { runFixedRate } from './fixed-rate'
import { addBudgetLimits, gwEnv, gwHeaders, prepareOrg, startGw } from './gw'
import { freePort, runInScratch } from './processes'
import { table } from './report'
import { runSaturation, type SaturationResult } from './saturation'
import { runSequential } from './sequential'
import { summarize } from './stats'
import { parseVariant, type Variant } from './variants'

const RESERVED = new Set(['direct', 'bun-proxy'])

async function startVariant(variant: Variant, workDir: string, fakePort: number): Promise<Target> {
  // AB_LIMITS is the suite's, not gw's: that many budget limits on every call of the variant.
  const { AB_LIMITS: limits = '0', ...own } = variant.env
  const port = freePort()
  const env = { ...gwEnv(join(workDir, variant.label), port, fakePort), ...own }
  const org = await prepareOrg(variant.binary, env)
  const child = await startGw(variant.binary, env, join(workDir, `${variant.label}.log`))
  if (Number(limits) > 0) await addBudgetLimits(port, org.sessionToken, Number(limits))
  return {
    name: variant.label,
    url: `http://127.0.0.1:${env.GW_PORT}${CHAT_PATH}`,
    headers: gwHeaders(org.apiKey),
    pid: child.pid,
  }
}

/** Four callers back to back for a while: enough for the JIT to compile what the timed part runs. */
async function warm(target: Target, seconds: number): Promise<void> {
  const until = performance.now() + seconds * 1000
  const caller = async () => {
    while (performance.now() < until) await timePlain(target)
  }
  await Promise.all([caller(), caller(), caller(), caller()])
}

/** The server's busiest thread is its event loop (gw's is named after the binary, the bare proxy's `bun`). */
function loopPerRequest(cpu: CpuUse, requests: number): { cpuUs: number; waitUs: number } {
  const loop = cpu.threads.filter((t) => t.role === 'server').sort((a, b) => b.cpuMs - a.cpuMs)[0]
  return loop ? { cpuUs: (loop.cpuMs * 1000) / requests, waitUs: (loop.waitMs * 1000) / requests } : { cpuUs: 0, waitUs: 0 }
}

await runInScratch('ab', async (workDir) => {
  const variants = process.argv.slice(2).map((spec) => parseVariant(spec, RESERVED))
  if (variants.length === 0)
    throw new Error('name at least one variant: bun bench/overhead/ab.ts label=path/to/gw[,NAME=value...]')
  if (new Set(variants.map((v) => v.label)).size !== variants.length) throw new Error('variant labels must differ')
  process.env.BENCH_WORK_DIR = workDir
  const settings = loadSettings(join(import.meta.dir, '..', '..'))
  const warmupSeconds = integer('AB_WARMUP_SECONDS', 8, 0)
  const withSaturation = integer('AB_SATURATION', 0, 0) === 1
  const saturationRounds = integer('AB_SATURATION_ROUNDS', 1, 1)
  const fake = await startFake(settings)
  const targets: Target[] = [directArm(fake.port, fake.pid), await startBunProxy(settings, fake.port)]
  for (const variant of variants) targets.push(await startVariant(variant, workDir, fake.port))
  for (const target of targets) await warm(target, warmupSeconds)

  const sequential = await runSequential(targets, settings.sequential)
  const fixedRate = await runFixedRate(targets, settings.fixedRate, {
    watch: (t) => (t.pid === fake.pid ? { server: t.pid } : { server: t.pid, provider: fake.pid }),
  })

  // Each round runs every target in turn, so a machine that slows over the run slows them all alike;
  // each target's figure is its median round.
  const rounds = new Map<string, SaturationResult[]>()
  if (withSaturation)
    for (let round = 0; round < saturationRounds; round++)
      for (const target of targets)
        rounds.set(target.name, [...(rounds.get(target.name) ?? []), await runSaturation(target, settings.saturation)])
  const saturation = new Map(
    [...rounds].map(([name, results]) => [
      name,
      [...results].sort((a, b) => a.rps - b.rps)[Math.floor(results.length / 2)] as SaturationResult,
    ]),
  )

  const plain = new Map([...sequential].map(([name, timings]) => [name, summarize(timings.plain)]))
  const base = { a: plain.get('direct'), c: fixedRate.get('direct')?.latency }
  const ms = (n: number) => n.toFixed(3)
  const added = (n: number, of: number | undefined) => (of === undefined ? '' : `${n >= of ? '+' : ''}${ms(n - of)}`)
  console.log(
    `\n${settings.sequential.requests} requests one at a time; ${settings.fixedRate.rps} req/s in ${settings.fixedRate.rounds} rounds of ${settings.fixedRate.seconds} s; ms unless marked\n`,
  )
  const rows = targets.flatMap((target) => {
    const a = plain.get(target.name)
    const c = fixedRate.get(target.name)
    if (!a || !c) return []
    const loop = loopPerRequest(c.cpu, c.latency.count)
    const b = saturation.get(target.name)
    return [
      [
        target.name,
        ms(a.p50),
        ms(a.p99),
        `${added(a.p50, base.a?.p50)} / ${added(a.p99, base.a?.p99)}`,
        ms(c.latency.p50),
        ms(c.latency.p99),
        `${added(c.latency.p50, base.c?.p50)} / ${added(c.latency.p99, base.c?.p99)}`,
        loop.cpuUs.toFixed(0),
        loop.waitUs.toFixed(0),
        ...(withSaturation ? [b ? b.rps.toFixed(0) : '', b ? ms(b.p99Ms) : '', b ? String(b.non2xx + b.socketErrors) : ''] : []),
      ],
    ]
  })
  console.log(
    table(
      [
        'target',
        '(a) p50',
        '(a) p99',
        '(a) added p50 / p99',
        '(c) p50',
        '(c) p99',
        '(c) added p50 / p99',
        'loop CPU µs/req',
        'loop waited µs/req',
        ...(withSaturation ? ['(b) req/s', '(b) p99', '(b) errors'] : []),
      ],
      rows,
    ),
  )
  for (const [name, c] of fixedRate)
    if (c.errors > 0) console.log(`\n[ab] ${name} failed ${c.errors} calls at the fixed rate; its figures leave them out`)
})
