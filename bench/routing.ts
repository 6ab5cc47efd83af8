/**
 * What routing costs a call, one request at a time, every arm in the same run and in turns of blocks
 * (bench/overhead/sequential.ts's method), against the overhead suite's fake provider (0 ms latency
 * unless FAKE_LATENCY_MS says):
 *
 * - direct: the fake provider itself, no gw;
 * - plain: gw serving gpt-4o, no chain, no cache;
 * - cache hit: gw answering the same call from its response cache (Gw-Cache-Enabled);
 * - failing: gw calling a model the fake answers 500 for, alone (the failed attempt's own time);
 * - fallback: gw serving a chain whose first step is that failing model and whose second is gpt-4o.
 *
 * What a fallback adds beyond the failed attempt is fallback - plain - (the failed attempt's latency
 * as the fallback call's own metadata reports it), taken at the median.
 *
 *   bun run build && bun bench/routing.ts
 */
import { join } from 'node:path'
import { gwBinary, gwEnv, gwHeaders, prepareOrg, startGw } from './overhead/gw'
import { freePort, runInScratch, start, waitForHttp } from './overhead/processes'
import { quantile } from './overhead/stats'

const REQUESTS = Number(process.env.ROUTING_REQUESTS ?? 2_000)
const BLOCK = 100
const WARMUP = 200
const repoRoot = join(import.meta.dir, '..')

interface Arm {
  name: string
  url: string
  headers: Record<string, string>
  body: string
  /** The status every call of the arm must get: a timing of a wrong answer is no timing. */
  status: number
}

async function timeOnce(arm: Arm): Promise<{ ms: number; id: string | null }> {
  const started = performance.now()
  const response = await fetch(arm.url, { method: 'POST', headers: arm.headers, body: arm.body })
  await response.arrayBuffer()
  const ms = performance.now() - started
  if (response.status !== arm.status) throw new Error(`${arm.name} answered ${response.status}, not ${arm.status}`)
  return { ms, id: response.headers.get('gw-id') }
}

const median = (values: number[]) =>
  quantile(
    [...values].sort((a, b) => a - b),
    0.5,
  )
const p90 = (values: number[]) =>
  quantile(
    [...values].sort((a, b) => a - b),
    0.9,
  )
const fixed = (n: number) => n.toFixed(3)

await runInScratch('routing', async (workDir) => {
  const fakePort = freePort()
  const latency = process.env.FAKE_LATENCY_MS ?? '0'
  const fakeLog = join(workDir, 'fake.log')
  start(['bun', join(repoRoot, 'bench/overhead/fake-provider.ts')], {
    env: { ...process.env, FAKE_PORT: String(fakePort), FAKE_LATENCY_MS: latency },
    logPath: fakeLog,
  })
  await waitForHttp(`http://127.0.0.1:${fakePort}/stats`, (r) => r.status === 200, 10_000, fakeLog)
  const port = freePort()
  const env = gwEnv(join(workDir, 'data'), port, fakePort)
  const binary = gwBinary(repoRoot)
  const org = await prepareOrg(binary, env)
  await startGw(binary, env, join(workDir, 'gw.log'))
  const gw = `http://127.0.0.1:${port}`
  const created = await fetch(`${gw}/v1/gateway/fallback-chains`, {
    method: 'POST',
    headers: { authorization: `Bearer ${org.sessionToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      name: 'bench',
      match: { model: 'bench-chain' },
      steps: [{ model: 'failing-model', provider: 'openai' }, { model: 'gpt-4o' }],
    }),
  })
  if (created.status !== 201) throw new Error(`the chain was not created: ${created.status} ${await created.text()}`)

  const chat = (model: string) => JSON.stringify({ model, messages: [{ role: 'user', content: 'Say hello.' }], max_tokens: 20 })
  const headers = gwHeaders(org.apiKey)
  const arms: Arm[] = [
    {
      name: 'direct',
      url: `http://127.0.0.1:${fakePort}/v1/chat/completions`,
      headers: { 'content-type': 'application/json' },
      body: chat('gpt-4o'),
      status: 200,
    },
    { name: 'plain', url: `${gw}/v1/chat/completions`, headers, body: chat('gpt-4o'), status: 200 },
    {
      name: 'cache hit',
      url: `${gw}/v1/chat/completions`,
      headers: { ...headers, 'gw-cache-enabled': 'true' },
      body: chat('gpt-4o'),
      status: 200,
    },
    { name: 'failing', url: `${gw}/v1/chat/completions`, headers, body: chat('openai/failing-model'), status: 500 },
    { name: 'fallback', url: `${gw}/v1/chat/completions`, headers, body: chat('bench-chain'), status: 200 },
  ]
  const times = new Map<string, number[]>(arms.map((arm) => [arm.name, []]))
  const fallbackIds: string[] = []
  for (const arm of arms) for (let i = 0; i < WARMUP; i++) await timeOnce(arm)
  for (let done = 0; done < REQUESTS; done += BLOCK) {
    for (const arm of arms) {
      for (let i = 0; i < BLOCK; i++) {
        const { ms, id } = await timeOnce(arm)
        times.get(arm.name)?.push(ms)
        if (arm.name === 'fallback' && id && i % 10 === 0) fallbackIds.push(id)
      }
    }
  }
  // The failed attempt's own time, as each sampled fallback call's metadata reports it.
  const failedAttempt: number[] = []
  for (const id of fallbackIds) {
    const meta = (await (await fetch(`${gw}/gateway/v1/meta/${id}`, { headers })).json()) as {
      attempts?: Array<{ latencyMs: number; httpStatus?: number }>
    }
    const first = meta.attempts?.[0]
    if (meta.attempts?.length !== 2 || first?.httpStatus !== 500) throw new Error(`call ${id} did not fall back once`)
    failedAttempt.push(first.latencyMs)
  }

  const m = (name: string) => median(times.get(name) ?? [])
  const lines = [
    `fake provider latency: ${latency} ms; ${REQUESTS} calls per arm after ${WARMUP} warm-up calls, in blocks of ${BLOCK}`,
    '',
    '| arm | median ms | p90 ms |',
    '| --- | ---: | ---: |',
    ...arms.map((arm) => `| ${arm.name} | ${fixed(m(arm.name))} | ${fixed(p90(times.get(arm.name) ?? []))} |`),
    '',
    `cache hit / direct (median): ${(m('cache hit') / m('direct')).toFixed(3)}`,
    `cache hit / plain gw call (median): ${(m('cache hit') / m('plain')).toFixed(3)}`,
    `failed attempt's own latency (metadata, ${failedAttempt.length} calls; whole ms): median ${fixed(median(failedAttempt))}`,
    `fallback - plain (median): ${fixed(m('fallback') - m('plain'))} ms`,
    `fallback - plain - failed attempt (median): ${fixed(m('fallback') - m('plain') - median(failedAttempt))} ms`,
    `fallback - plain - failing gw call (median): ${fixed(m('fallback') - m('plain') - m('failing'))} ms`,
  ]
  console.log(lines.join('\n'))
})
