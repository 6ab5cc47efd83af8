/**
 * Start-up of gw builds or settings side by side: from spawning `gw serve` to its first healthy
 * /healthcheck on a data directory a previous start left behind, and its resident memory once idle.
 * The variants take turns, run after run, so the machine's drift falls on all of them alike.
 *
 *   bun bench/startup-ab.ts old=/tmp/gw-old new=/tmp/gw-new traced=/tmp/gw-new,OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:14318
 *
 * Knobs: STARTUP_RUNS (default 15), STARTUP_IDLE_MS (default 2000: how long a started gw sits idle
 * before its memory is read). Prints a Markdown table; writes nothing under bench/results.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { startFake } from './overhead/arms'
import { gwEnv } from './overhead/gw'
import { rssMiB } from './overhead/memory'
import { freePort, start, stop } from './overhead/processes'
import { summarize } from './overhead/stats'

interface Variant {
  label: string
  binary: string
  env: Record<string, string>
}

function parseVariant(spec: string): Variant {
  const [head = '', ...settings] = spec.split(',')
  const split = head.indexOf('=')
  if (split <= 0) throw new Error(`a variant is label=binary[,NAME=value...], got "${spec}"`)
  const env: Record<string, string> = {}
  for (const setting of settings) {
    const at = setting.indexOf('=')
    if (at <= 0) throw new Error(`"${setting}" in "${spec}" is not NAME=value`)
    env[setting.slice(0, at)] = setting.slice(at + 1)
  }
  return { label: head.slice(0, split), binary: resolve(head.slice(split + 1)), env }
}

async function healthy(url: string): Promise<boolean> {
  try {
    const response = await fetch(url)
    return response.status === 200 && ((await response.json()) as { status?: string }).status === 'ok'
  } catch {
    return false
  }
}

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

const variants = process.argv.slice(2).map(parseVariant)
if (variants.length === 0) throw new Error('name at least one variant: label=binary[,NAME=value...]')
const runs = Number(process.env.STARTUP_RUNS ?? 15)
const idleMs = Number(process.env.STARTUP_IDLE_MS ?? 2_000)
const root = mkdtempSync(join(tmpdir(), 'gw-startup-'))
const fake = await startFake({ workDir: root, fakeLatencyMs: 0 })
try {
  const dirs = new Map(variants.map((variant) => [variant.label, join(root, variant.label)]))
  const times = new Map<string, number[]>(variants.map((variant) => [variant.label, []]))
  const memory = new Map<string, number[]>(variants.map((variant) => [variant.label, []]))
  // A first start per variant makes its data directory (secret, migrations): not counted.
  for (const variant of variants) await startOnce(variant, dirs.get(variant.label) as string, fake.port, 0)
  for (let run = 0; run < runs; run++)
    for (const variant of variants) {
      const { ms, rss } = await startOnce(variant, dirs.get(variant.label) as string, fake.port, idleMs)
      times.get(variant.label)?.push(ms)
      memory.get(variant.label)?.push(rss)
    }
  console.log(`${runs} starts each, in turn; idle memory read ${idleMs} ms after healthy\n`)
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
