/**
 * Scenario (e): from spawning `dist/gw serve` to its first healthy GET /healthcheck, on a fresh data
 * directory (secret generated, every migration applied) and on one a previous start left behind; and
 * the same for a bare `Bun.serve` executable (`bare-serve.ts`, compiled here as gw is), the floor.
 * Each gw start is followed by a bare one, so a noisy stretch of the machine falls on both.
 */
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { Settings } from './config'
import { type GwEnv, gwBinary, gwEnv } from './gw'
import { freePort, run, start, stop } from './processes'

export interface ColdStartResult {
  fresh: number[]
  existing: number[]
  /** The bare `Bun.serve` executable's starts, taken in turn with gw's. */
  bare: number[]
}

const POLL_TIMEOUT_MS = 15_000

export async function healthy(url: string): Promise<boolean> {
  try {
    const response = await fetch(url)
    const body = (await response.json()) as { status?: string }
    return response.status === 200 && body.status === 'ok'
  } catch {
    return false
  }
}

/** Milliseconds from spawn to healthy; polls every millisecond, so the figure is at most ~1 ms high. */
async function timeStart(command: string[], dataDir: string, fakePort: number, logPath: string): Promise<number> {
  // At the default level, as an operator starts it: gw logs before its first answer.
  const env: GwEnv = { ...gwEnv(dataDir, freePort(), fakePort), GW_LOG_LEVEL: 'info' }
  const url = `http://127.0.0.1:${env.GW_PORT}/healthcheck`
  const started = performance.now()
  const child = start(command, { env, logPath })
  try {
    while (!(await healthy(url))) {
      if (performance.now() - started > POLL_TIMEOUT_MS) throw new Error(`${command[0]} did not become healthy; see ${logPath}`)
      await Bun.sleep(1)
    }
    return performance.now() - started
  } finally {
    await stop(child)
  }
}

export async function runColdStarts(settings: Settings, fakePort: number): Promise<ColdStartResult> {
  const gw = [gwBinary(settings.repoRoot), 'serve']
  const root = join(settings.workDir, 'cold-start')
  const logPath = join(root, 'gw.log')
  mkdirSync(root, { recursive: true })
  const bareBinary = join(root, 'bare-serve')
  await run(
    [process.execPath, 'build', '--compile', join(import.meta.dir, 'bare-serve.ts'), '--outfile', bareBinary],
    process.env,
  )
  const bareStart = () => timeStart([bareBinary], join(root, 'bare'), fakePort, join(root, 'bare.log'))
  const fresh: number[] = []
  const bare: number[] = []
  for (let i = 0; i < settings.coldStart.runs; i++) {
    fresh.push(await timeStart(gw, join(root, `fresh-${i}`), fakePort, logPath))
    bare.push(await bareStart())
  }
  // The first fresh run's directory now holds a secret and a migrated database: a restart's case.
  const existing: number[] = []
  for (let i = 0; i < settings.coldStart.runs; i++) {
    existing.push(await timeStart(gw, join(root, 'fresh-0'), fakePort, logPath))
    bare.push(await bareStart())
  }
  return { fresh, existing, bare }
}
