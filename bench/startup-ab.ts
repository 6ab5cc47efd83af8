/**
 * Start-up of gw builds or settings side by side: from spawning `gw serve` to its first healthy
 * /healthcheck on a data directory a previous start left behind, and its resident memory once idle.
 * The variants take turns, run after run, so the machine's drift falls on all of them alike.
 *
 *   bun bench/startup-ab.ts old=/tmp/gw-old new=/tmp/gw-new traced=/tmp/gw-new,OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:14318
 *
 * Knobs: STARTUP_RUNS (default 15), STARTUP_IDLE_MS (default 2000: how long a started gw sits idle
 * before its memory is read), STARTUP_FRESH=1 (every start on a new data directory: a first start's
 * secret and migrations included). Prints a Markdown table; writes nothing under bench/results.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startFake } from './overhead/arms'
import { healthy } from './overhead/cold-start'
import { gwEnv } from './overhead/gw'
import { rssMiB } from './overhead/memory'
import { freePort, start, stop } from './overhead/processes'
import { summarize } from './overhead/stats'
import { parseVariant, type Variant } from './overhead/variants'

/** Milliseconds from spawn to healthy, and the resident memory after sitting idle. */
async function startOnce(variant: Variant, dataDir: string, fakePort: number, idleMs: number) {
  mkdirSync(dataDir, { recursive: true })
  const env = { ...gwEnv(dataDir, freePort(), fakePort), ...variant.env }
  const url = `http://127.0.0.1:${env.GW_PORT}/healthcheck`
  const started = performance.now()
  const child = start([variant.binary, 'serve'], { env, logPath: join(dataDir, 'gw.log') })
  try {
    while (!(await healthy(url))) {
      if (performance.now() - started > 15_000) throw new Error(`${variant.label} did not become healthy`)
      await Bun.sleep(1)
    }
    const ms = performance.now() - started
    await Bun.sleep(idleMs)
    return { ms, rss: rssMiB(child.pid) }
  } finally {
    await stop(child)
  }
}

const variants = process.argv.slice(2).map((spec) => parseVariant(spec))
if (variants.length === 0) throw new Error('name at least one variant: label=binary[,NAME=value...]')
const runs = Number(process.env.STARTUP_RUNS ?? 15)
const idleMs = Number(process.env.STARTUP_IDLE_MS ?? 2_000)
const fresh = process.env.STARTUP_FRESH === '1'
const root = mkdtempSync(join(tmpdir(), 'gw-startup-'))
const fake = await startFake({ workDir: root, fakeLatencyMs: 0 })
try {
  const dirs = new Map(variants.map((variant) => [variant.label, join(root, variant.label)]))
  const times = new Map<string, number[]>(variants.map((variant) => [variant.label, []]))
  const memory = new Map<string, number[]>(variants.map((variant) => [variant.label, []]))
  // A first start per variant makes its data directory (secret, migrations): not counted.
  if (!fresh) for (const variant of variants) await startOnce(variant, dirs.get(variant.label) as string, fake.port, 0)
  for (let run = 0; run < runs; run++)
    for (const variant of variants) {
      const dir = join(dirs.get(variant.label) as string, fresh ? String(run) : '')
      const { ms, rss } = await startOnce(variant, dir, fake.port, idleMs)
      times.get(variant.label)?.push(ms)
      memory.get(variant.label)?.push(rss)
    }
  const on = fresh ? 'each on a new data directory' : 'on a data directory a first start made'
  console.log(`${runs} starts each, in turn, ${on}; idle memory read ${idleMs} ms after healthy\n`)
  console.log('| variant | start p50 ms | start max ms | idle RSS p50 MiB |')
  console.log('| ------- | ------------ | ------------ | ---------------- |')
  for (const variant of variants) {
    const start = summarize(times.get(variant.label) as number[])
    const rss = summarize(memory.get(variant.label) as number[])
    console.log(`| ${variant.label} | ${start.p50.toFixed(1)} | ${start.max.toFixed(1)} | ${rss.p50.toFixed(1)} |`)
  }
} finally {
  process.kill(fake.pid, 'SIGTERM')
  rmSync(root, { recursive: true, force: true })
}
