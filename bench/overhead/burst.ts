/**
 * Scenario (f): a gw of its own on a new data directory takes a burst of requests, is stopped with
 * SIGTERM the moment the last answer arrives, and then its SQLite request log must hold one row per
 * 2xx answer: none lost between the queue and the disk.
 */

import { Database } from 'bun:sqlite'
import { join } from 'node:path'
import { PLAIN_BODY } from './calls'
import type { Settings } from './config'
import { gwBinary, gwEnv, gwHeaders, prepareOrg, startGw } from './gw'
import { freePort, stop } from './processes'

export interface BurstResult {
  sent: number
  ok: number
  failed: number
  rows: number
  /** Rows with a cost: the pricing step ran for them. */
  pricedRows: number
  lost: number
  exitCode: number | null
  /** SIGTERM to exit: the drain of requests in flight and of the log queue. */
  stopMs: number
}

export async function runBurst(settings: Settings, fakePort: number): Promise<BurstResult> {
  const binary = gwBinary(settings.repoRoot)
  const dataDir = join(settings.workDir, 'burst-data')
  const env = gwEnv(dataDir, freePort(), fakePort)
  const org = await prepareOrg(binary, env)
  const child = await startGw(binary, env, join(settings.workDir, 'gw-burst.log'))
  const url = `http://127.0.0.1:${env.GW_PORT}/v1/chat/completions`
  const headers = gwHeaders(org.apiKey)
  const { requests, concurrency } = settings.burst
  let sent = 0
  let ok = 0
  let failed = 0
  const worker = async () => {
    while (sent < requests) {
      sent += 1
      try {
        const response = await fetch(url, { method: 'POST', headers, body: PLAIN_BODY })
        await response.arrayBuffer()
        if (response.status >= 200 && response.status < 300) ok += 1
        else failed += 1
      } catch {
        failed += 1
      }
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  const stopping = performance.now()
  const exitCode = await stop(child)
  const stopMs = performance.now() - stopping
  const db = new Database(join(dataDir, 'gw.db'), { readonly: true })
  const count = (sql: string) => (db.query(sql).get() as { n: number }).n
  const rows = count('SELECT count(*) AS n FROM requests')
  const pricedRows = count('SELECT count(*) AS n FROM requests WHERE cost_nano > 0')
  db.close()
  return { sent, ok, failed, rows, pricedRows, lost: ok - rows, exitCode, stopMs }
}
