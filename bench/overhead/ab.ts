/**
 * Compares builds or settings of gw with the suite's own clients, for tuning: each variant is a gw
 * binary with extra environment, started as the suite starts its gw arm (its own SQLite data
 * directory, an organisation made with the CLI, every call with an API key and a layer-2 policy), and
 * measured in the same run as the direct call and the bare Bun proxy: (a) one request at a time, plain
 * and streamed, and (c) the fixed rate in interleaved rounds, with each server's event-loop CPU per
 * request, and with AB_SATURATION=1 (b) saturation under wrk, each target in turn, the order turned by
 * one each round, AB_SATURATION_ROUNDS times (default 1; the median round is shown).
 *
 *   bun bench/overhead/ab.ts main=/tmp/gw-main candidate=dist/gw
 *   bun bench/overhead/ab.ts shipped=dist/gw smol=dist/gw,BUN_OPTIONS=--smol
 *
 * A variant's `AB_LIMITS=<n>` (up to 5) gives its organisation that many budget limits, each applying to
 * every call (`gw.ts`), for what reserving and settling costs:
 *
 *   AB_SATURATION=1 bun bench/overhead/ab.ts plain=dist/gw limits=dist/gw,AB_LIMITS=5
 *
 * A variant's `AB_KEYS=<n>` spreads its calls in (a) and (c) over that many API keys of its organisation,
 * each in turn, as a team's services each have their own ((b)'s wrk keeps to the first); what the
 * authenticator's reads of keys cost when many are in use:
 *
 *   bun bench/overhead/ab.ts one=dist/gw many=dist/gw,AB_KEYS=500
 *
 * `AB_ORGS=<n>` does the same over n organisations, each with its own key (made with `gw bootstrap`):
 * what the cached reads of each organisation in use cost (its chains, prices, limits, rules, settings).
 *
 * `AB_PRODUCTION=1` switches on what a production organisation uses, beside the plain arm: budget limits
 * (two, or AB_LIMITS), a fallback chain on the arm's model, an access rule on models, and metrics:
 *
 *   AB_SATURATION=1 bun bench/overhead/ab.ts plain=dist/gw production=dist/gw,AB_PRODUCTION=1
 *
 * AB_ARMS names the ways through each variant (`arms.ts`' GW_ARMS: a caller's format and the provider
 * it reaches, `openai-openai` by default): every other provider is then configured too, pointing at
 * the fake provider, and called directly beside the rest (`direct-<provider>`), so an arm's added
 * latency is over the provider it reaches. With `openai-anthropic` among them, each arm's added
 * latency and loop CPU are also given as ratios to it, the same variant's, round by round:
 *
 *   AB_ARMS=openai-anthropic,openai-gemini,openai-bedrock bun bench/overhead/ab.ts current=dist/gw
 *
 * AB_ROUNDS (default 1) repeats (a) and (c) that many times, the targets' order turned by one each
 * round: the tables give each figure's median round, and a further table the spread (lowest to
 * highest). AB_RATE_STREAM=1 runs (c) with streamed calls too (each timed to its last byte), for the
 * loop CPU of a stream. AB_JSON=<file> writes every round's figures there.
 *
 * It prints Markdown tables and writes nothing under bench/results. Knobs: the suite's SEQ_*, RATE_*
 * and SAT_* (README.md), AB_SATURATION, and AB_WARMUP_SECONDS (default 8): load before anything is
 * timed, so every server's JIT has settled and the variants are compared in their steady state.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import {
  directName,
  directTarget,
  type FakeRoute,
  GW_ARMS,
  type GwArmName,
  gwTarget,
  isGwArmName,
  startBunProxy,
  startFake,
  type Target,
} from './arms'
import { verifyArm, warmUp } from './calls'
import { integer, loadSettings } from './config'
import type { CpuUse } from './cpu'
import { type CallMode, type FixedRateResult, runFixedRate } from './fixed-rate'
import {
  addApiKeys,
  addBudgetLimits,
  addProductionSettings,
  BENCH_METRICS_TOKEN,
  gwEnv,
  prepareOrg,
  providersEnv,
  startGw,
} from './gw'
import { describeHost, hostFacts } from './machine'
import { freePort, runInScratch } from './processes'
import { table } from './report'
import { runSaturation, type SaturationResult } from './saturation'
import { runSequential } from './sequential'
import { type Summary, summarize } from './stats'
import { parseVariant, type Variant } from './variants'

const RESERVED = new Set(['direct', 'bun-proxy'])
const PASSTHROUGH: GwArmName = 'openai-openai'
/** The arm the others are given as ratios to: OpenAI's format translated to Anthropic's, gw's first translation. */
const BASELINE_ARM: GwArmName = 'openai-anthropic'

type ProviderRoute = Exclude<FakeRoute, 'token'>

/** A target of the run, with what it is compared with. */
interface Entry {
  target: Target
  /** The direct call its added latency is over: the provider it reaches. */
  direct: string
  /** The gw variant and arm it is; absent for the direct calls and the Bun proxy. */
  variant?: string
  arm?: GwArmName
}

function parseArms(raw: string | undefined): GwArmName[] {
  const names = (raw ?? PASSTHROUGH)
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '')
  for (const name of names)
    if (!isGwArmName(name)) throw new Error(`AB_ARMS: "${name}" is not one of ${Object.keys(GW_ARMS).join(', ')}`)
  if (names.length === 0 || new Set(names).size !== names.length) throw new Error('AB_ARMS must name arms, each once')
  return names as GwArmName[]
}

async function startVariant(variant: Variant, workDir: string, fakePort: number, arms: GwArmName[]): Promise<Entry[]> {
  // AB_LIMITS, AB_KEYS and AB_PRODUCTION are the suite's, not gw's: what the variant's organisation has.
  const {
    AB_LIMITS: limits = '0',
    AB_KEYS: keyCount = '1',
    AB_ORGS: orgCount = '1',
    AB_PRODUCTION: production,
    ...own
  } = variant.env
  const asProduction = production === '1'
  const port = freePort()
  // A production organisation's chain falls back to Anthropic: configured, at the fake provider.
  const others = asProduction || arms.some((arm) => arm !== PASSTHROUGH) ? providersEnv(workDir, fakePort) : {}
  const metrics = asProduction ? { GW_METRICS_TOKEN: BENCH_METRICS_TOKEN } : {}
  const env = { ...gwEnv(join(workDir, variant.label), port, fakePort), ...others, ...metrics, ...own }
  const org = await prepareOrg(variant.binary, env)
  const otherOrgs: string[] = []
  for (let i = 1; i < Number(orgCount); i++) otherOrgs.push((await prepareOrg(variant.binary, env)).apiKey)
  const child = await startGw(variant.binary, env, join(workDir, `${variant.label}.log`))
  const budgetLimits = asProduction ? Math.max(Number(limits), 2) : Number(limits)
  if (budgetLimits > 0) await addBudgetLimits(port, org.sessionToken, budgetLimits)
  if (asProduction)
    for (const model of new Set(arms.map((arm) => GW_ARMS[arm].model))) await addProductionSettings(port, org.sessionToken, model)
  const apiKeys = [org.apiKey, ...(await addApiKeys(port, org.sessionToken, Number(keyCount) - 1)), ...otherOrgs]
  return arms.map((arm) => ({
    target: gwTarget(arm === PASSTHROUGH ? variant.label : `${variant.label}:${arm}`, arm, port, apiKeys, child.pid),
    direct: directName(GW_ARMS[arm].reaches),
    variant: variant.label,
    arm,
  }))
}

interface Loop {
  cpuUs: number
  waitUs: number
}

/** The server's busiest thread is its event loop (gw's is named after the binary, the bare proxy's `bun`). */
function loopPerRequest(cpu: CpuUse, requests: number): Loop {
  const loop = cpu.threads.filter((t) => t.role === 'server').sort((a, b) => b.cpuMs - a.cpuMs)[0]
  return loop ? { cpuUs: (loop.cpuMs * 1000) / requests, waitUs: (loop.waitMs * 1000) / requests } : { cpuUs: 0, waitUs: 0 }
}

/** One target's figures in one round; ms unless named otherwise. */
interface Figures {
  plain: Summary
  firstByte: Summary
  rate: { latency: Summary; loop: Loop; errors: number }
  streamRate?: { latency: Summary; loop: Loop; errors: number }
}

const rateFigures = (c: FixedRateResult) => ({
  latency: c.latency,
  loop: loopPerRequest(c.cpu, c.latency.count),
  errors: c.errors,
})

/** Each round starts one target later than the one before, so none is always first after a quiet spell. */
const turned = <T>(items: T[], by: number): T[] => items.map((_, i) => items[(i + by) % items.length] as T)

/**
 * The targets in another order for each block of (a): whichever target follows gw's turn is measured
 * faster (about 30 µs on the 2-core VM: gw's trailing work keeps the cores from idling), so no target
 * may always be the one. Seeded, so a run can be repeated.
 */
function shuffled<T>(items: T[], seed: number): T[] {
  const out = [...items]
  let state = (seed * 2_654_435_761 + 1) >>> 0
  for (let i = out.length - 1; i > 0; i--) {
    state = (Math.imul(state ^ (state >>> 15), 2_246_822_519) + 0x9e3779b9) >>> 0
    const j = state % (i + 1)
    ;[out[i], out[j]] = [out[j] as T, out[i] as T]
  }
  return out
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2
}
const spread = (values: number[], digits: number): string =>
  `${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)}`

await runInScratch('ab', async (workDir) => {
  const variants = process.argv.slice(2).map((spec) => parseVariant(spec, RESERVED))
  if (variants.length === 0)
    throw new Error('name at least one variant: bun bench/overhead/ab.ts label=path/to/gw[,NAME=value...]')
  if (new Set(variants.map((v) => v.label)).size !== variants.length) throw new Error('variant labels must differ')
  process.env.BENCH_WORK_DIR = workDir
  const settings = loadSettings(join(import.meta.dir, '..', '..'))
  const warmupSeconds = integer('AB_WARMUP_SECONDS', 8, 0)
  const withSaturation = integer('AB_SATURATION', 0, 0) === 1
  const saturationRounds = integer('AB_SATURATION_ROUNDS', 1, 1)
  const rounds = integer('AB_ROUNDS', 1, 1)
  const rateStream = integer('AB_RATE_STREAM', 0, 0) === 1
  const arms = parseArms(process.env.AB_ARMS)
  console.log(`[ab] ${describeHost(await hostFacts())}`)

  const fake = await startFake(settings)
  // The OpenAI call first, as the suite has it, then each other provider an arm reaches.
  const routes = [...new Set<ProviderRoute>(['openai', ...arms.map((arm) => GW_ARMS[arm].reaches)])]
  const entries: Entry[] = routes.map((route) => {
    const target = directTarget(route, fake.port, fake.pid)
    return { target, direct: target.name }
  })
  entries.push({ target: await startBunProxy(settings, fake.port), direct: 'direct' })
  for (const variant of variants) entries.push(...(await startVariant(variant, workDir, fake.port, arms)))
  const targets = entries.map((entry) => entry.target)
  for (const target of targets) await verifyArm(target, fake.port)
  for (const target of targets) await warmUp(target, warmupSeconds)

  const watch = (t: Target) => (t.pid === fake.pid ? { server: t.pid } : { server: t.pid, provider: fake.pid })
  const byRound: Array<Map<string, Figures>> = []
  for (let round = 0; round < rounds; round++) {
    const order = turned(targets, round)
    if (rounds > 1) console.log(`[ab] round ${round + 1} of ${rounds}, ${order[0]?.name} first`)
    const sequential = await runSequential(order, settings.sequential, (block) => shuffled(order, round * 1_000 + block))
    const rate = (mode: CallMode) => runFixedRate(order, settings.fixedRate, { watch }, mode)
    const plainRate = await rate('plain')
    const streamRate = rateStream ? await rate('stream') : undefined
    const figures = new Map<string, Figures>()
    for (const target of targets) {
      const a = sequential.get(target.name)
      const c = plainRate.get(target.name)
      const s = streamRate?.get(target.name)
      if (!a || !c) continue
      figures.set(target.name, {
        plain: summarize(a.plain),
        firstByte: summarize(a.firstByte),
        rate: rateFigures(c),
        ...(s ? { streamRate: rateFigures(s) } : {}),
      })
    }
    byRound.push(figures)
  }

  // Each round runs every target in turn, so a machine that slows over the run slows them all alike,
  // and the order turns each round, as (a)'s and (c)'s do: the target that went first did less in
  // runs where it always went first. Each target's figure is its median round.
  const saturationRuns = new Map<string, SaturationResult[]>()
  if (withSaturation)
    for (let round = 0; round < saturationRounds; round++)
      for (const target of turned(targets, round))
        saturationRuns.set(target.name, [
          ...(saturationRuns.get(target.name) ?? []),
          await runSaturation(target, settings.saturation, target.body),
        ])
  const saturation = new Map(
    [...saturationRuns].map(([name, results]) => [
      name,
      [...results].sort((a, b) => a.rps - b.rps)[Math.floor(results.length / 2)] as SaturationResult,
    ]),
  )

  /** A figure of a target in every round, and its median; `of` picks it from one round's figures. */
  const each = (name: string, of: (f: Figures) => number | undefined): number[] =>
    byRound.flatMap((round) => {
      const f = round.get(name)
      const value = f === undefined ? undefined : of(f)
      return value === undefined ? [] : [value]
    })
  const med = (name: string, of: (f: Figures) => number | undefined): number | undefined => {
    const values = each(name, of)
    return values.length === 0 ? undefined : median(values)
  }
  /** A figure minus the same figure of the entry's direct call, round by round. */
  const addedEach = (entry: Entry, of: (f: Figures) => number | undefined): number[] =>
    byRound.flatMap((round) => {
      const own = round.get(entry.target.name)
      const base = round.get(entry.direct)
      const a = own && of(own)
      const b = base && of(base)
      return a === undefined || b === undefined ? [] : [a - b]
    })
  const addedMed = (entry: Entry, of: (f: Figures) => number | undefined): number | undefined => {
    const values = addedEach(entry, of)
    return values.length === 0 ? undefined : median(values)
  }
  const ms = (n: number | undefined) => (n === undefined ? '' : n.toFixed(3))
  const signed = (n: number | undefined) => (n === undefined ? '' : `${n >= 0 ? '+' : ''}${n.toFixed(3)}`)
  const us = (n: number | undefined) => (n === undefined ? '' : n.toFixed(0))
  const pair = (a: number | undefined, b: number | undefined) => `${signed(a)} / ${signed(b)}`
  const reachOf = (entry: Entry) => entry.target.reaches ?? 'openai'

  const runs = rounds > 1 ? `, the median of ${rounds} rounds` : ''
  console.log(
    `\n${settings.sequential.requests} requests one at a time; ${settings.fixedRate.rps} req/s in ${settings.fixedRate.rounds} rounds of ${settings.fixedRate.seconds} s${runs}; ms unless marked; added: over the direct call to the provider reached\n`,
  )
  console.log(
    table(
      [
        'target',
        'reaches',
        '(a) p50',
        '(a) p99',
        '(a) added p50 / p99',
        '(c) p50',
        '(c) p99',
        '(c) added p50 / p99',
        'loop CPU µs/req',
        'loop waited µs/req',
        ...(withSaturation ? ['(b) req/s', '(b) p50', '(b) p99', '(b) errors'] : []),
      ],
      entries.map((entry) => {
        const name = entry.target.name
        const b = saturation.get(name)
        return [
          name,
          reachOf(entry),
          ms(med(name, (f) => f.plain.p50)),
          ms(med(name, (f) => f.plain.p99)),
          pair(
            addedMed(entry, (f) => f.plain.p50),
            addedMed(entry, (f) => f.plain.p99),
          ),
          ms(med(name, (f) => f.rate.latency.p50)),
          ms(med(name, (f) => f.rate.latency.p99)),
          pair(
            addedMed(entry, (f) => f.rate.latency.p50),
            addedMed(entry, (f) => f.rate.latency.p99),
          ),
          us(med(name, (f) => f.rate.loop.cpuUs)),
          us(med(name, (f) => f.rate.loop.waitUs)),
          ...(withSaturation
            ? [b ? b.rps.toFixed(0) : '', b ? ms(b.p50Ms) : '', b ? ms(b.p99Ms) : '', b ? String(b.non2xx + b.socketErrors) : '']
            : []),
        ]
      }),
    ),
  )

  console.log('\nStreamed: (a) to the first body byte; (c) to the last byte\n')
  console.log(
    table(
      [
        'target',
        '(a) first byte p50',
        '(a) p99',
        '(a) added p50 / p99',
        ...(rateStream ? ['(c) p50', '(c) p99', '(c) added p50 / p99', 'loop CPU µs/req', 'loop waited µs/req'] : []),
      ],
      entries.map((entry) => {
        const name = entry.target.name
        return [
          name,
          ms(med(name, (f) => f.firstByte.p50)),
          ms(med(name, (f) => f.firstByte.p99)),
          pair(
            addedMed(entry, (f) => f.firstByte.p50),
            addedMed(entry, (f) => f.firstByte.p99),
          ),
          ...(rateStream
            ? [
                ms(med(name, (f) => f.streamRate?.latency.p50)),
                ms(med(name, (f) => f.streamRate?.latency.p99)),
                pair(
                  addedMed(entry, (f) => f.streamRate?.latency.p50),
                  addedMed(entry, (f) => f.streamRate?.latency.p99),
                ),
                us(med(name, (f) => f.streamRate?.loop.cpuUs)),
                us(med(name, (f) => f.streamRate?.loop.waitUs)),
              ]
            : []),
        ]
      }),
    ),
  )

  if (rounds > 1) {
    console.log('\nSpread over the rounds, lowest–highest\n')
    console.log(
      table(
        ['target', '(a) added p50', '(a) stream added p50', 'loop CPU µs/req', ...(rateStream ? ['stream loop CPU µs/req'] : [])],
        entries.map((entry) => {
          const name = entry.target.name
          const cpuStream = each(name, (f) => f.streamRate?.loop.cpuUs)
          return [
            name,
            spread(
              addedEach(entry, (f) => f.plain.p50),
              3,
            ),
            spread(
              addedEach(entry, (f) => f.firstByte.p50),
              3,
            ),
            spread(
              each(name, (f) => f.rate.loop.cpuUs),
              0,
            ),
            ...(rateStream ? [cpuStream.length > 0 ? spread(cpuStream, 0) : ''] : []),
          ]
        }),
      ),
    )
  }

  // Ratios within a round, of a variant's arm to the same variant's OpenAI-to-Anthropic arm: the noise
  // that moves a whole round moves both, and the ratio's median and spread over the rounds are given.
  const baselines = new Map(entries.filter((e) => e.arm === BASELINE_ARM).map((e) => [e.variant, e]))
  if (baselines.size > 0 && arms.length > 1) {
    const ratioEach = (entry: Entry, base: Entry, of: (f: Figures) => number | undefined, added: boolean): number[] => {
      const own = added ? addedEach(entry, of) : each(entry.target.name, of)
      const theirs = added ? addedEach(base, of) : each(base.target.name, of)
      return own.flatMap((value, i) => (theirs[i] === undefined ? [] : [value / (theirs[i] as number)]))
    }
    const ratio = (values: number[]) =>
      values.length === 0 ? '' : `${median(values).toFixed(2)}${values.length > 1 ? ` (${spread(values, 2)})` : ''}`
    console.log(`\nAgainst ${BASELINE_ARM} (the same variant's, round by round): median (lowest–highest)\n`)
    console.log(
      table(
        [
          'target',
          '(a) added p50',
          '(a) stream added p50',
          '(c) added p50',
          'loop CPU',
          ...(rateStream ? ['stream (c) added p50', 'stream loop CPU'] : []),
        ],
        entries.flatMap((entry) => {
          const base = baselines.get(entry.variant)
          if (!base || entry === base) return []
          return [
            [
              entry.target.name,
              ratio(ratioEach(entry, base, (f) => f.plain.p50, true)),
              ratio(ratioEach(entry, base, (f) => f.firstByte.p50, true)),
              ratio(ratioEach(entry, base, (f) => f.rate.latency.p50, true)),
              ratio(ratioEach(entry, base, (f) => f.rate.loop.cpuUs, false)),
              ...(rateStream
                ? [
                    ratio(ratioEach(entry, base, (f) => f.streamRate?.latency.p50, true)),
                    ratio(ratioEach(entry, base, (f) => f.streamRate?.loop.cpuUs, false)),
                  ]
                : []),
            ],
          ]
        }),
      ),
    )
  }

  for (const [i, round] of byRound.entries())
    for (const [name, f] of round) {
      const errors = f.rate.errors + (f.streamRate?.errors ?? 0)
      if (errors > 0)
        console.log(`\n[ab] ${name} failed ${errors} calls at the fixed rate in round ${i + 1}; its figures leave them out`)
    }
  const jsonPath = process.env.AB_JSON
  if (jsonPath)
    writeFileSync(
      jsonPath,
      JSON.stringify(
        {
          settings: { ...settings, workDir: undefined, rounds, rateStream, arms },
          targets: entries.map((e) => ({ name: e.target.name, direct: e.direct, variant: e.variant, arm: e.arm })),
          rounds: byRound.map((round) => Object.fromEntries(round)),
          saturation: Object.fromEntries(saturationRuns),
        },
        null,
        1,
      ),
    )
})
