/**
 * Issue 8's overhead benchmark, end to end: start the fake provider and the three proxies, check each
 * really reaches the provider, run scenarios (a) to (f), stop everything and write
 * bench/results/<date>-overhead.md. Start it with bench/overhead/run.sh, which installs and builds first.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { type Arm, type ArmName, startArms } from './arms'
import { runBurst } from './burst'
import { verifyArm, warmUp } from './calls'
import { runColdStarts } from './cold-start'
import { loadSettings } from './config'
import { runFixedRate } from './fixed-rate'
import { formatLoad, machineFacts } from './machine'
import { RssPeak, rssMiB } from './memory'
import { stop, stopAll, trackChildren } from './processes'
import { type Condition, renderReport } from './report'
import { runSaturation, type SaturationResult } from './saturation'
import { runSequential } from './sequential'
import { summarize } from './stats'

const repoRoot = join(import.meta.dir, '..', '..')
const settings = loadSettings(repoRoot)
trackChildren(join(settings.workDir, 'pids'))
const began = performance.now()
const conditions: Condition[] = []

async function scenario<T>(name: string, work: () => Promise<T>): Promise<T> {
  console.log(`[bench] ${name}`)
  const loadBefore = formatLoad()
  const started = performance.now()
  const result = await work()
  conditions.push({ scenario: name, seconds: (performance.now() - started) / 1000, loadBefore, loadAfter: formatLoad() })
  return result
}

async function main(): Promise<void> {
  const facts = await machineFacts(repoRoot)
  const { arms, fakePort, fakePid, gw, gwLog, gwProduction, gwProductionLog } = await scenario('start the arms', () =>
    startArms(settings),
  )
  // Before any traffic: what gw holds once started and idle.
  await Bun.sleep(1_000)
  const idle = rssMiB(gw.pid)
  for (const arm of arms) await verifyArm(arm, fakePort)
  await scenario('warm-up', async () => {
    for (const arm of arms) await warmUp(arm, settings.warmupSeconds)
  })

  const sequential = await scenario('(a) sequential', async () => {
    const timings = await runSequential(arms, settings.sequential)
    return new Map([...timings].map(([arm, t]) => [arm, { plain: summarize(t.plain), firstByte: summarize(t.firstByte) }]))
  })

  /** gw's resident-memory peak over the stretches when gw's own load runs (each round of (c); (b)). */
  const gwMemoryPeak = () => {
    let peak = 0
    return {
      during(arm: Arm): () => void {
        if (arm.name !== 'gw') return () => undefined
        const sampler = new RssPeak(gw.pid)
        return () => {
          peak = Math.max(peak, sampler.stop())
        }
      },
      peak: () => peak,
    }
  }

  // (c) before (b): gw's memory under the fixed rate must not include saturation's high-water mark.
  const fixedRateMemory = gwMemoryPeak()
  const fixedRate = await scenario('(c) fixed rate, (d) memory', () =>
    runFixedRate(arms, settings.fixedRate, {
      // The direct arm's server is the provider itself.
      watch: (arm) => (arm.pid === fakePid ? { server: arm.pid } : { server: arm.pid, provider: fakePid }),
      round: fixedRateMemory.during,
    }),
  )
  const saturationMemory = gwMemoryPeak()
  const saturation = await scenario('(b) saturation', async () => {
    const results = new Map<ArmName, SaturationResult>()
    for (const arm of arms) {
      const done = saturationMemory.during(arm)
      results.set(arm.name, await runSaturation(arm, settings.saturation))
      done()
    }
    return results
  })
  const afterRun = rssMiB(gw.pid)

  const coldStart = await scenario('(e) cold start', async () => {
    const { fresh, existing, bare } = await runColdStarts(settings, fakePort)
    return { fresh: summarize(fresh), existing: summarize(existing), bare: summarize(bare) }
  })
  const burst = await scenario('(f) burst', () => runBurst(settings, fakePort))

  await stop(gw)
  await stop(gwProduction)
  const gwLines = [gwLog, gwProductionLog, join(settings.workDir, 'gw-burst.log'), join(settings.workDir, 'cold-start', 'gw.log')]
    .flatMap((path) => readFileSync(path, 'utf8').split('\n'))
    .filter((line) => line.trim() !== '')

  const today = new Date()
  const pad = (n: number) => String(n).padStart(2, '0')
  const date = `${today.getFullYear()}-${pad(today.getMonth() + 1)}-${pad(today.getDate())}`
  const resultsPath = join(repoRoot, 'bench', 'results', `${date}-overhead.md`)
  const report = renderReport({
    date,
    command: 'bash bench/overhead/run.sh',
    facts,
    settings,
    sequential,
    saturation,
    fixedRate,
    memory: { idle, peakFixedRate: fixedRateMemory.peak(), peakSaturation: saturationMemory.peak(), afterRun },
    coldStart,
    burst,
    conditions,
    gwLog: gwLines,
    minutes: (performance.now() - began) / 60_000,
  })
  writeFileSync(resultsPath, report)
  console.log(`[bench] wrote ${resultsPath}`)
}

// Whatever happens, the servers are stopped and reaped before the suite exits.
try {
  await main()
} catch (error) {
  console.error('[bench] failed:', error)
  process.exitCode = 1
} finally {
  await stopAll()
}
process.exit()
