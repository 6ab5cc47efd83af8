/**
 * gw with prompts of real size, where the request log's writer (scan, redaction, bodies) is busy: wrk
 * keeps 16 calls in flight for 10 s, while a probe polls `GET /healthcheck` every 20 ms (how soon the
 * server's event loop answers anything) and posts `POST /v1/feedback` every 80 ms (a write on the
 * server's own SQLite connection, which waits for the writer's transaction). Every binary named takes
 * its turn at each prompt size, on a fresh data directory, against the same fake provider.
 *
 *   bun bench/overhead/large-prompts.ts [path/to/gw ...]    (dist/gw by default)
 *
 * Knobs: PROMPT_KB (default "8,64"), LARGE_SECONDS (10), LARGE_CONNECTIONS (16). Prints a Markdown
 * table; the suite's scenarios use a two-word prompt and do not show this.
 */
import { join, resolve } from 'node:path'
import { PATH as CHAT_PATH, startFake } from './arms'
import { integer } from './config'
import { gwEnv, gwHeaders, prepareOrg, startGw } from './gw'
import { freePort, runInScratch, stop } from './processes'
import { table } from './report'
import { runSaturation } from './saturation'
import { type Summary, summarize } from './stats'

const PROSE = 'The quarterly report covers 12 regions, 404 stores and the plans for next year; summarise it. '

const promptBody = (kb: number) =>
  JSON.stringify({
    model: 'gpt-4o',
    messages: [{ role: 'user', content: PROSE.repeat(Math.ceil((kb * 1024) / PROSE.length)).slice(0, kb * 1024) }],
  })

/** Calls `once` every `everyMs` until `until` resolves; answers the milliseconds each call took. */
async function probe(once: () => Promise<unknown>, everyMs: number, until: Promise<unknown>): Promise<Summary> {
  let running = true
  void until.finally(() => {
    running = false
  })
  const times: number[] = []
  while (running) {
    const started = performance.now()
    await once()
    times.push(performance.now() - started)
    await Bun.sleep(everyMs)
  }
  return summarize(times)
}

await runInScratch('large-prompts', async (workDir) => {
  const binaries = (process.argv.length > 2 ? process.argv.slice(2) : ['dist/gw']).map((path) => resolve(path))
  const sizes = (process.env.PROMPT_KB ?? '8,64').split(',').map(Number)
  if (sizes.some((kb) => !Number.isInteger(kb) || kb < 1)) throw new Error('PROMPT_KB is a list of whole kilobytes, e.g. 8,64')
  const load = {
    connections: integer('LARGE_CONNECTIONS', 16),
    threads: 2,
    seconds: integer('LARGE_SECONDS', 10),
    warmupSeconds: 2,
  }
  const rows: string[][] = []
  const fake = await startFake({ workDir, fakeLatencyMs: 0 })
  for (const kb of sizes) {
    const body = promptBody(kb)
    for (const [i, binary] of binaries.entries()) {
      const env = gwEnv(join(workDir, `gw-${kb}-${i}`), freePort(), fake.port)
      const org = await prepareOrg(binary, env)
      const gw = await startGw(binary, env, join(workDir, `gw-${kb}-${i}.log`))
      const base = `http://127.0.0.1:${env.GW_PORT}`
      const headers = gwHeaders(org.apiKey)
      const first = await fetch(`${base}${CHAT_PATH}`, { method: 'POST', headers, body })
      await first.text()
      const feedbackBody = JSON.stringify({ requestId: first.headers.get('gw-id'), rating: true })
      // Feedback needs the request's record: wait for the writer's first batch.
      await Bun.sleep(300)
      const sendFeedback = () => fetch(`${base}/v1/feedback`, { method: 'POST', headers, body: feedbackBody })
      const check = await sendFeedback()
      if (check.status !== 200) throw new Error(`feedback answered ${check.status}: ${await check.text()}`)
      const target = { name: 'gw', url: `${base}${CHAT_PATH}`, headers, pid: gw.pid }
      const wrk = runSaturation(target, load, body)
      // The probes start with the timed run, after wrk's warm-up.
      await Bun.sleep(load.warmupSeconds * 1000)
      const [result, health, feedback] = await Promise.all([
        wrk,
        probe(async () => (await fetch(`${base}/healthcheck`)).text(), 20, wrk),
        probe(async () => (await sendFeedback()).text(), 80, wrk),
      ])
      await stop(gw)
      const ms = (n: number) => n.toFixed(1)
      rows.push([
        `${kb} KB`,
        binary,
        String(Math.round(result.rps)),
        `${ms(result.p50Ms)} / ${ms(result.p99Ms)}`,
        `${ms(health.p50)} / ${ms(health.p99)} / ${ms(health.max)}`,
        `${ms(feedback.p50)} / ${ms(feedback.p99)} / ${ms(feedback.max)}`,
        String(result.non2xx + result.socketErrors),
      ])
    }
  }
  console.log(
    `\nwrk -c${load.connections} for ${load.seconds} s after ${load.warmupSeconds} s; probes during the timed part; ms\n`,
  )
  console.log(
    table(
      ['prompt', 'binary', 'req/s', 'calls p50 / p99', '/healthcheck p50 / p99 / max', 'feedback p50 / p99 / max', 'failed'],
      rows,
    ),
  )
})
