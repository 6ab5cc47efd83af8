/**
 * Scenario (e): from spawning `dist/gw serve` to its first healthy GET /healthcheck, on a fresh data
 * directory (secret generated, every migration applied) and on one a previous start left behind.
 */
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { Settings } from './config'
import { gwBinary, gwEnv } from './gw'
import { freePort, start, stop } from './processes'

export interface ColdStartResult {
  fresh: number[]
  existing: number[]
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
async function timeStart(binary: string, dataDir: string, fakePort: number, logPath: string): Promise<number> {
  const env = gwEnv(dataDir, freePort(), fakePort)
  const url = `http://127.0.0.1:${env.GW_PORT}/healthcheck`
  const started = performance.now()
  const child = start([binary, 'serve'], { env, logPath })
  try {
    while (!(await healthy(url))) {
      if (performance.now() - started > POLL_TIMEOUT_MS) throw new Error(`gw did not become healthy; see ${logPath}`)
      await Bun.sleep(1)
    }
    return performance.now() - started
  } finally {
    await stop(child)
  }
}

export async function runColdStarts(settings: Settings, fakePort: number): Promise<ColdStartResult> {
  const binary = gwBinary(settings.repoRoot)
  const root = join(settings.workDir, 'cold-start')
  const logPath = join(root, 'gw.log')
  mkdirSync(root, { recursive: true })
  const fresh: number[] = []
  for (let i = 0; i < settings.coldStart.runs; i++)
    fresh.push(await timeStart(binary, join(root, `fresh-${i}`), fakePort, logPath))
  // The first fresh run's directory now holds a secret and a migrated database: a restart's case.
  const existing: number[] = []
  for (let i = 0; i < settings.coldStart.runs; i++)
    existing.push(await timeStart(binary, join(root, 'fresh-0'), fakePort, logPath))
  return { fresh, existing }
}
