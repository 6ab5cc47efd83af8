/**
 * gw's memory with many large bodies in flight: the compiled binary on a fresh data directory, the
 * bench's fake provider, and CONCURRENT calls of BODY_MB each sent at once, in ROUNDS rounds. It
 * samples gw's resident memory every 20 ms and prints, per round, the answers' statuses, the peak RSS
 * and what it was before; then one call over the body limit, to show its answer.
 *
 *   bun run build && bun bench/large-bodies.ts [path/to/gw]     (dist/gw by default)
 *
 * Knobs: CONCURRENT (12), BODY_MB (20), ROUNDS (3), and any GW_* variable (GW_MAX_BODY_BYTES, say),
 * passed on to gw.
 */
import { join, resolve } from 'node:path'
import { PATH as CHAT_PATH, startFake } from './overhead/arms'
import { integer } from './overhead/config'
import { gwEnv, gwHeaders, prepareOrg, startGw } from './overhead/gw'
import { RssPeak, rssMiB } from './overhead/memory'
import { freePort, runInScratch } from './overhead/processes'
import { table } from './overhead/report'

const chatBody = (megabytes: number) =>
  JSON.stringify({
    model: 'gpt-4o',
    messages: [{ role: 'user', content: 'lorem ipsum '.repeat(Math.ceil((megabytes * 1024 * 1024) / 12)) }],
  })

await runInScratch('large-bodies', async (workDir) => {
  const binary = resolve(process.argv[2] ?? 'dist/gw')
  const concurrent = integer('CONCURRENT', 12)
  const megabytes = integer('BODY_MB', 20)
  const rounds = integer('ROUNDS', 3)
  const fake = await startFake({ workDir, fakeLatencyMs: 0 })
  const port = freePort()
  const passed = Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith('GW_')))
  const env = { ...gwEnv(join(workDir, 'data'), port, fake.port), GW_LOG_LEVEL: 'error', ...passed }
  const org = await prepareOrg(binary, env)
  const gw = await startGw(binary, env, join(workDir, 'gw.log'))
  const url = `http://127.0.0.1:${port}${CHAT_PATH}`
  const headers = gwHeaders(org.apiKey)
  // A warm-up call, so the first round does not also pay for the JIT and the writer thread's start.
  await (await fetch(url, { method: 'POST', headers, body: chatBody(1) })).arrayBuffer()

  const body = chatBody(megabytes)
  const rows: string[][] = []
  for (let round = 1; round <= rounds; round++) {
    const before = rssMiB(gw.pid)
    const peak = new RssPeak(gw.pid, 20)
    const started = performance.now()
    const statuses = await Promise.all(
      Array.from({ length: concurrent }, async () => {
        const response = await fetch(url, { method: 'POST', headers, body })
        await response.arrayBuffer()
        return response.status
      }),
    )
    const seconds = (performance.now() - started) / 1000
    const counts = new Map<number, number>()
    for (const status of statuses) counts.set(status, (counts.get(status) ?? 0) + 1)
    rows.push([
      String(round),
      [...counts].map(([status, n]) => `${n} x ${status}`).join(', '),
      before.toFixed(0),
      peak.stop().toFixed(0),
      seconds.toFixed(2),
    ])
    await Bun.sleep(500)
  }
  console.log(`gw ${binary}: ${concurrent} concurrent calls of ${(body.length / 1024 / 1024).toFixed(1)} MiB each\n`)
  console.log(table(['round', 'answers', 'RSS before (MiB)', 'peak RSS (MiB)', 'seconds'], rows))

  const limit = Number(process.env.GW_MAX_BODY_BYTES ?? 32 * 1024 * 1024)
  const over = await fetch(url, { method: 'POST', headers, body: chatBody(Math.ceil(limit / 1024 / 1024) + 1) })
  console.log(`\nover the limit (${limit} bytes): ${over.status} ${await over.text()}`)
  console.log(`RSS after: ${rssMiB(gw.pid).toFixed(0)} MiB`)
})
