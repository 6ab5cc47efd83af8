/**
 * What a gateway call leaves for the collector, variant against variant: each gw binary serves the
 * passthrough call from four closed-loop callers with JavaScriptCore's log of every collection on
 * (`BUN_JSC_logGC`), and the heap's growth between collections, summed over the measured calls, is
 * what they allocated. Per-call garbage is what the collector's threads (JSCWarmUp, HeapHelper) and
 * its pauses cost; on two cores that is CPU the event loop needs (bench/results/2026-11-27-garbage.md).
 *
 *   bun bench/overhead/garbage.ts main=/tmp/gw-main branch=dist/gw
 *
 * GARBAGE_CALLS (20,000) measured after as many to warm up; GARBAGE_ROUNDS (2) rounds, the variants
 * taking turns in each. A figure moves by about 10 % between rounds: compare medians of one run.
 */
import { mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { startFake } from './arms'
import { integer } from './config'
import { gwEnv, gwHeaders, prepareOrg, startGw } from './gw'
import { freePort, runInScratch, stop } from './processes'
import { parseVariant, type Variant } from './variants'

interface Heap {
  collections: number
  allocatedKb: number
  pausesMs: number[]
}

/** Every heap in a stretch of the log, by address: the event loop's and the request-log writer's each have one. */
export function heapsIn(log: string): Heap[] {
  const heaps = new Map<string, Heap & { lastEndKb?: number }>()
  let current: (Heap & { lastEndKb?: number }) | undefined
  for (const match of log.matchAll(/\[GC<(0x[0-9a-f]+)>: START M? ?(\d+)kb|=> (\d+)kb, p=([\d.]+)ms/g)) {
    const [, address, startKb, endKb, pauseMs] = match
    if (address !== undefined) {
      current = heaps.get(address) ?? { collections: 0, allocatedKb: 0, pausesMs: [] }
      heaps.set(address, current)
      if (current.lastEndKb !== undefined) current.allocatedKb += Number(startKb) - current.lastEndKb
      current.collections += 1
    } else if (current) {
      current.lastEndKb = Number(endKb)
      current.pausesMs.push(Number(pauseMs))
    }
  }
  return [...heaps.values()]
}

const median = (values: readonly number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0

async function measure(variant: Variant, fakePort: number, dir: string, calls: number): Promise<Heap> {
  mkdirSync(dir, { recursive: true })
  const port = freePort()
  const env = { ...gwEnv(dir, port, fakePort), ...variant.env }
  const org = await prepareOrg(variant.binary, env)
  const logPath = join(dir, 'gw.log')
  const gw = await startGw(variant.binary, { ...env, BUN_JSC_logGC: 'true' }, logPath)
  const url = `http://127.0.0.1:${port}/v1/chat/completions`
  const init = {
    method: 'POST',
    headers: gwHeaders(org.apiKey),
    body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
  }
  const callers = async (count: number) =>
    Promise.all(
      Array.from({ length: 4 }, async () => {
        for (let i = 0; i < count / 4; i++) {
          const response = await fetch(url, init)
          await response.arrayBuffer()
          if (response.status !== 200) throw new Error(`${variant.label} answered ${response.status}; see ${logPath}`)
        }
      }),
    )
  await callers(calls)
  const from = readFileSync(logPath, 'utf8').length
  await callers(calls)
  await Bun.sleep(200)
  const heaps = heapsIn(readFileSync(logPath, 'utf8').slice(from))
  await stop(gw)
  // The event loop's heap collects the most.
  const loop = heaps.sort((a, b) => b.collections - a.collections)[0]
  if (!loop) throw new Error(`${variant.label}: no collection in ${calls} calls; see ${logPath}`)
  return loop
}

if (import.meta.main) {
  await runInScratch('garbage', async (workDir) => {
    const variants = process.argv.slice(2).map((spec) => parseVariant(spec))
    if (variants.length === 0) throw new Error('name at least one variant: label=binary[,NAME=value...]')
    const calls = integer('GARBAGE_CALLS', 20_000, 400)
    const rounds = integer('GARBAGE_ROUNDS', 2, 1)
    const fake = await startFake({ workDir, fakeLatencyMs: 0 })
    const results = new Map<string, Heap[]>()
    for (let round = 0; round < rounds; round++) {
      for (const variant of round % 2 === 0 ? variants : [...variants].reverse()) {
        console.log(`[garbage] round ${round + 1} of ${rounds}: ${variant.label}`)
        const heap = await measure(variant, fake.port, join(workDir, `${variant.label}-${round}`), calls)
        results.set(variant.label, [...(results.get(variant.label) ?? []), heap])
      }
    }
    console.log(`\n${calls} calls measured after ${calls} to warm up, four callers; the event loop's heap\n`)
    console.log(
      '| variant | KB a call (median; rounds) | collections per 1,000 calls | pause median ms | paused ms per 1,000 calls |',
    )
    console.log('| --- | --- | --- | --- | --- |')
    for (const [label, heaps] of results) {
      const kb = heaps.map((heap) => heap.allocatedKb / calls)
      const perThousand = (value: number) => ((value * 1000) / calls).toFixed(2)
      console.log(
        `| ${label} | ${median(kb).toFixed(1)}; ${kb.map((value) => value.toFixed(1)).join(' / ')} | ${perThousand(median(heaps.map((heap) => heap.collections)))} | ${median(heaps.flatMap((heap) => heap.pausesMs)).toFixed(2)} | ${perThousand(median(heaps.map((heap) => heap.pausesMs.reduce((a, b) => a + b, 0))))} |`,
      )
    }
  })
}
