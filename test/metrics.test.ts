import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import parsePrometheus, { type MetricFamily, type Sample } from 'parse-prometheus-text-format'
import { loadConfig } from '../src/config'
import { EgressPolicy, parseAllowList } from '../src/egress/policy'
import { GatewayMetrics } from '../src/observability/metrics'
import { serveMetrics } from '../src/observability/observer'
import { pathFamily } from '../src/observability/path-family'
import { openRuntime } from '../src/runtime'
import type { HealthProbe } from '../src/util/health-probe'
import { type FakeProvider, providersAt, startFakeProvider } from './support/fake-provider'
import { createHarness, DIALECTS, type Harness, type Org } from './support/harness'

const TOKEN = 'metrics-token-0123456789'
/** A Redis that never answers: the scrape must still come back, saying Redis is down. */
const probes: HealthProbe[] = [
  { name: 'database', required: true, check: async () => 'ok' },
  { name: 'redis', required: false, check: () => new Promise(() => undefined) },
]

let fake: FakeProvider
let h: Harness
let org: Org
let observed = 0
const ids: string[] = []

const chat = (content: string, extra: Record<string, unknown> = {}) => ({
  model: 'gpt-4o',
  messages: [{ role: 'user', content }],
  ...extra,
})

async function scrapeText(token = TOKEN): Promise<string> {
  const response = await h.request('GET', '/metrics', { token })
  expect(response.status).toBe(200)
  expect(response.headers.get('content-type')).toContain('text/plain')
  return response.text()
}

const familyOf = (families: MetricFamily[], name: string): MetricFamily => {
  const family = families.find((f) => f.name === name)
  if (!family) throw new Error(`no ${name} in the scrape`)
  return family
}
const matching = (family: MetricFamily, labels: Record<string, string>): Sample[] =>
  family.metrics.filter((sample) => Object.entries(labels).every(([key, value]) => sample.labels?.[key] === value))
const total = (family: MetricFamily, labels: Record<string, string> = {}): number =>
  matching(family, labels).reduce((sum, sample) => sum + Number(sample.value), 0)

/**
 * The parser folds a histogram's label sets into one (it reads only unlabelled histograms, as
 * prom2json's oldest output did), so each label set is handed to it alone, its labels but `le` removed.
 */
function histogramSeries(text: string, name: string): Array<{ labels: string; parsed: Sample }> {
  const bySeries = new Map<string, string[]>()
  for (const line of text.split('\n')) {
    const match = line.match(new RegExp(`^${name}_(bucket|sum|count)\\{(.*)\\} (\\S+)$`))
    if (!match) continue
    const [, suffix, labelText, value] = match as unknown as [string, string, string, string]
    const rest = labelText
      .split(',')
      .filter((pair) => !pair.startsWith('le='))
      .join(',')
    const le = labelText.split(',').find((pair) => pair.startsWith('le='))
    const lines = bySeries.get(rest) ?? []
    lines.push(`${name}_${suffix}${le ? `{${le}}` : ''} ${value}`)
    bySeries.set(rest, lines)
  }
  return [...bySeries].map(([labels, lines]) => {
    const [family] = parsePrometheus(`# TYPE ${name} histogram\n${lines.join('\n')}\n\n`)
    if (!family?.metrics[0]) throw new Error(`${name}{${labels}} did not parse`)
    return { labels, parsed: family.metrics[0] }
  })
}

function expectConsistent(text: string, name: string, count: number): void {
  const series = histogramSeries(text, name)
  let observations = 0
  for (const { parsed } of series) {
    const buckets = Object.entries(parsed.buckets ?? {})
      .map(([le, value]) => [le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le), Number(value)] as const)
      .sort((a, b) => a[0] - b[0])
    for (let i = 1; i < buckets.length; i++) expect(buckets[i]?.[1]).toBeGreaterThanOrEqual(buckets[i - 1]?.[1] ?? 0)
    expect(buckets.at(-1)?.[0]).toBe(Number.POSITIVE_INFINITY)
    expect(buckets.at(-1)?.[1]).toBe(Number(parsed.count))
    expect(Number(parsed.sum)).toBeGreaterThanOrEqual(0)
    observations += Number(parsed.count)
  }
  expect(observations).toBe(count)
}

beforeAll(async () => {
  fake = await startFakeProvider()
  h = await createHarness({
    providers: providersAt(fake),
    probes,
    metricsToken: TOKEN,
    // Five calls an organisation a minute: the sixth is refused by the limiter.
    globalRateLimit: { requests: 5, windowSeconds: 60 },
    metrics: (sources) => {
      const metrics = new GatewayMetrics(sources)
      const settled = metrics.settled.bind(metrics)
      metrics.settled = (...args) => {
        observed += 1
        settled(...args)
      }
      return metrics
    },
  })
  org = await h.org('growth')
  await h.services.organizations.addCredits(org.orgId, 1_000)
  const call = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
    const response = await h.request('POST', path, { token: org.apiKey, body, headers })
    await response.text()
    ids.push(response.headers.get('gw-id') as string)
    return response
  }
  const cached = { 'Gw-Cache-Enabled': 'true' }
  // The known sequence: two chats, a streamed chat, a cache miss and its hit, an Anthropic message
  // past the limit, and a model nobody prices.
  expect((await call('/v1/chat/completions', chat('one'))).status).toBe(200)
  expect((await call('/v1/chat/completions', chat('two', { stream: true }))).status).toBe(200)
  expect((await call('/v1/chat/completions', chat('cache me', { temperature: 0 }), cached)).headers.get('gw-cache')).toBe('MISS')
  expect((await call('/v1/chat/completions', chat('cache me', { temperature: 0 }), cached)).headers.get('gw-cache')).toBe('HIT')
  expect(
    (
      await call('/v1/messages', {
        model: 'claude-3-5-haiku',
        max_tokens: 100,
        messages: [{ role: 'user', content: 'hello' }],
      })
    ).status,
  ).toBe(200)
  expect((await call('/v1/chat/completions', chat('six'))).status).toBe(429)
  expect((await call('/v1/chat/completions', { model: 'mystery-model', messages: [] })).status).toBe(400)
  await h.requestLog.flush()
})
afterAll(async () => {
  await h?.close()
  fake?.close()
})

describe('/metrics after a known sequence of calls', () => {
  test('requests are counted once each, by provider, priced model (else other), status, mode and path family', async () => {
    expect(observed).toBe(7)
    const families = parsePrometheus(await scrapeText())
    const requests = familyOf(families, 'gw_requests_total')
    expect(requests.type).toBe('COUNTER')
    expect(total(requests)).toBe(7)
    expect(total(requests, { provider: 'openai', model: 'gpt-4o', status: '200', path: 'chat', mode: 'passthrough' })).toBe(4)
    expect(total(requests, { provider: 'anthropic', model: 'claude-3-5-haiku', status: '200', path: 'messages' })).toBe(1)
    expect(total(requests, { status: '429', outcome: 'error' })).toBe(1)
    expect(total(requests, { model: 'other', status: '400', path: 'chat' })).toBe(1)
    // Nothing that names a caller is a label.
    for (const sample of requests.metrics)
      expect(Object.keys(sample.labels ?? {}).sort()).toEqual(['mode', 'model', 'outcome', 'path', 'provider', 'status'])
  })

  test("tokens and cost equal the request log's records, exactly", async () => {
    const families = parsePrometheus(await scrapeText())
    const records = await Promise.all(ids.map((id) => h.store.requests.get(org.orgId, id)))
    const sum = (pick: (r: NonNullable<(typeof records)[number]>) => number | null) =>
      records.reduce((acc, r) => acc + (r && !r.cached ? (pick(r) ?? 0) : 0), 0)
    const tokens = familyOf(families, 'gw_tokens_total')
    expect(total(tokens, { kind: 'prompt' })).toBe(sum((r) => r.promptTokens))
    expect(total(tokens, { kind: 'completion' })).toBe(sum((r) => r.completionTokens))
    expect(total(tokens, { kind: 'cache_read' })).toBe(sum((r) => r.cacheReadTokens))
    expect(total(tokens, { kind: 'cache_write' })).toBe(sum((r) => r.cacheWriteTokens))
    expect(total(tokens, { kind: 'prompt' })).toBeGreaterThan(0)
    const costNano = sum((r) => r.costNano)
    expect(costNano).toBeGreaterThan(0)
    expect(total(familyOf(families, 'gw_cost_usd_total'))).toBeCloseTo(costNano / 1e9, 12)
    const anthropicCost = records.find((r) => r?.provider === 'anthropic')?.costNano ?? 0
    expect(total(familyOf(families, 'gw_cost_usd_total'), { provider: 'anthropic', model: 'claude-3-5-haiku' })).toBeCloseTo(
      anthropicCost / 1e9,
      12,
    )
  })

  test('the refusal is counted by its layer, the hit and what it saved by the cache', async () => {
    const families = parsePrometheus(await scrapeText())
    const refusals = familyOf(families, 'gw_refusals_total')
    expect(refusals.metrics).toEqual([{ value: '1', labels: { layer: 'rate_limited' } }])
    expect(total(familyOf(families, 'gw_cache_hits_total'), { path: 'chat' })).toBe(1)
    const hit = (await Promise.all(ids.map((id) => h.store.requests.get(org.orgId, id)))).find((r) => r?.cached)
    expect(hit?.cacheSavedNano).toBeGreaterThan(0)
    expect(total(familyOf(families, 'gw_cache_savings_usd_total'))).toBeCloseTo((hit?.cacheSavedNano ?? 0) / 1e9, 12)
  })

  test('histograms are consistent: buckets never decrease, +Inf is the count, one observation a call', async () => {
    const text = await scrapeText()
    expectConsistent(text, 'gw_request_duration_seconds', 7)
    // The stream, the non-streamed answers that report a first byte, and the cached stream: at least the stream.
    const firstTokens = histogramSeries(text, 'gw_time_to_first_token_seconds')
    expect(firstTokens.length).toBeGreaterThan(0)
    expectConsistent(
      text,
      'gw_time_to_first_token_seconds',
      firstTokens.reduce((n, s) => n + Number(s.parsed.count), 0),
    )
    const families = parsePrometheus(text)
    expect(familyOf(families, 'gw_request_duration_seconds').type).toBe('HISTOGRAM')
  })

  test("gw's own part of every call, and the provider's part of each dispatched one, in consistent histograms", async () => {
    const text = await scrapeText()
    // Every call has an overhead; the provider's part is timed for the four dispatched (both chats, the
    // cache miss, the message), not for the hit, the refusal or the model nobody prices.
    expectConsistent(text, 'gw_overhead_seconds', 7)
    expectConsistent(text, 'gw_provider_duration_seconds', 4)
    const providers = histogramSeries(text, 'gw_provider_duration_seconds')
    const countOf = (labels: string) => Number(providers.find((s) => s.labels === labels)?.parsed.count)
    expect(countOf('provider="openai",path="chat"')).toBe(3)
    expect(countOf('provider="anthropic",path="messages"')).toBe(1)
    const overhead = histogramSeries(text, 'gw_overhead_seconds')
    expect(overhead.map((s) => s.labels).sort()).toEqual(['path="chat"', 'path="messages"'])
    // Sub-millisecond work is told apart: the lowest bucket is a tenth of a millisecond.
    expect(text).toContain('gw_overhead_seconds_bucket{le="0.0001",path="chat"}')
    const sumOf = (name: string) => histogramSeries(text, name).reduce((n, s) => n + Number(s.parsed.sum), 0)
    expect(sumOf('gw_overhead_seconds')).toBeGreaterThan(0)
    // Both parts are of calls the whole-call histogram also timed (to its whole milliseconds).
    expect(sumOf('gw_overhead_seconds') + sumOf('gw_provider_duration_seconds')).toBeLessThanOrEqual(
      sumOf('gw_request_duration_seconds') + 7 * 0.001,
    )
  })

  test('each request-log batch write is timed', async () => {
    const text = await scrapeText()
    const lines = text.split('\n').filter((line) => line.startsWith('gw_request_log_write_seconds'))
    const [family] = parsePrometheus(`# TYPE gw_request_log_write_seconds histogram\n${lines.join('\n')}\n\n`)
    const writes = Number(family?.metrics[0]?.count)
    expect(writes).toBeGreaterThanOrEqual(1)
    // Never more batches than records written.
    expect(writes).toBeLessThanOrEqual(h.requestLog.snapshot().written)
    const buckets = Object.entries(family?.metrics[0]?.buckets ?? {}).map(([le, value]) => [Number(le), Number(value)])
    buckets.sort((a, b) => (a[0] ?? 0) - (b[0] ?? 0))
    for (let i = 1; i < buckets.length; i++) expect(buckets[i]?.[1]).toBeGreaterThanOrEqual(buckets[i - 1]?.[1] ?? 0)
    expect(Number(family?.metrics[0]?.buckets?.['+Inf'])).toBe(writes)
  })

  test('request-log, database, Redis and process gauges are read at scrape time; a hung Redis is down, not a hung scrape', async () => {
    const started = performance.now()
    const families = parsePrometheus(await scrapeText())
    expect(performance.now() - started).toBeLessThan(2_000)
    const snapshot = h.requestLog.snapshot()
    expect(total(familyOf(families, 'gw_request_log_queued'))).toBe(snapshot.queued)
    expect(total(familyOf(families, 'gw_request_log_written'))).toBe(snapshot.written)
    expect(total(familyOf(families, 'gw_request_log_dropped'))).toBe(0)
    expect(total(familyOf(families, 'gw_request_log_set_aside'))).toBe(0)
    expect(total(familyOf(families, 'gw_database_up'))).toBe(1)
    expect(total(familyOf(families, 'gw_redis_up'))).toBe(0)
    expect(total(familyOf(families, 'gw_process_resident_memory_bytes'))).toBeGreaterThan(0)
    expect(total(familyOf(families, 'gw_nodejs_heap_size_used_bytes'))).toBeGreaterThan(0)
    expect(total(familyOf(families, 'gw_process_cpu_seconds_total'))).toBeGreaterThan(0)
    expect(familyOf(families, 'gw_process_cpu_seconds_total').type).toBe('COUNTER')
    expect(familyOf(families, 'gw_nodejs_eventloop_lag_seconds').type).toBe('GAUGE')
    expect(total(familyOf(families, 'gw_nodejs_eventloop_lag_seconds'))).toBeGreaterThanOrEqual(0)
    expect(total(familyOf(families, 'gw_webhook_outbox_pending'))).toBe(0)
  })

  test('a database that does not answer leaves the outbox size out of the scrape, and the scrape answers', async () => {
    const hung = new GatewayMetrics({
      requestLog: h.requestLog,
      probes: [],
      outbox: { pendingCount: () => new Promise<number>(() => undefined) },
    })
    const started = performance.now()
    const families = parsePrometheus(await hung.render())
    expect(performance.now() - started).toBeLessThan(2_000)
    expect(families.find((f) => f.name === 'gw_webhook_outbox_pending')?.metrics ?? []).toEqual([])
    expect(total(familyOf(families, 'gw_requests_total'))).toBe(0)
  })
})

describe('exposure', () => {
  test('the main port answers 401 without the token or with a wrong one', async () => {
    expect((await h.request('GET', '/metrics')).status).toBe(401)
    expect((await h.request('GET', '/metrics', { token: 'wrong-token-0123456789' })).status).toBe(401)
    expect((await h.request('GET', '/metrics', { token: `${TOKEN}x` })).status).toBe(401)
  })

  test('without GW_METRICS_TOKEN, /metrics on the main port is not there, even with metrics on', async () => {
    const other = await createHarness({ metrics: (sources) => new GatewayMetrics(sources) })
    try {
      expect((await other.request('GET', '/metrics')).status).toBe(404)
      expect((await other.request('GET', '/metrics', { token: TOKEN })).status).toBe(404)
    } finally {
      await other.close()
    }
  })

  test('the separate listener answers GET /metrics and nothing else', async () => {
    const metrics = h.deps.metrics
    if (!metrics) throw new Error('the harness has metrics')
    const server = serveMetrics(metrics, '127.0.0.1', 0)
    try {
      const base = `http://127.0.0.1:${server.port}`
      const answer = await fetch(`${base}/metrics`)
      expect(answer.status).toBe(200)
      expect(total(familyOf(parsePrometheus(await answer.text()), 'gw_requests_total'))).toBeGreaterThanOrEqual(7)
      expect((await fetch(`${base}/`)).status).toBe(404)
      expect((await fetch(`${base}/v1/chat/completions`, { method: 'POST' })).status).toBe(404)
      expect((await fetch(`${base}/metrics`, { method: 'POST' })).status).toBe(405)
    } finally {
      await server.stop(true)
    }
  })
})

describe('metrics off', () => {
  test('the runtime builds no metrics and no observer unless GW_METRICS_ADDR or GW_METRICS_TOKEN is set, and only to serve', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-metrics-'))
    try {
      const off = await openRuntime(loadConfig({ GW_DATA_DIR: dir, GW_LOG_LEVEL: 'warn' }), { migrate: true, serving: true })
      expect(off.config.metrics).toBeUndefined()
      expect(off.deps.metrics).toBeUndefined()
      await off.close()
      const env = { GW_DATA_DIR: dir, GW_LOG_LEVEL: 'warn', GW_METRICS_TOKEN: TOKEN }
      const oneShot = await openRuntime(loadConfig(env), { migrate: false })
      expect(oneShot.deps.metrics).toBeUndefined()
      await oneShot.close()
      const on = await openRuntime(loadConfig(env), { migrate: false, serving: true })
      expect(on.deps.metrics).toBeInstanceOf(GatewayMetrics)
      expect(on.deps.metricsToken).toBe(TOKEN)
      await on.close()
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('a harness without metrics has no observer, and its calls are served the same', async () => {
    const plain = await createHarness({ providers: providersAt(fake) })
    try {
      expect(plain.deps.metrics).toBeUndefined()
      const before = observed
      const other = await plain.org('growth')
      await plain.services.organizations.addCredits(other.orgId, 1_000)
      const response = await plain.request('POST', '/v1/chat/completions', { token: other.apiKey, body: chat('off') })
      expect(response.status).toBe(200)
      expect(observed).toBe(before)
      expect((await plain.request('GET', '/metrics', { token: TOKEN })).status).toBe(404)
    } finally {
      await plain.close()
    }
  })
})

describe('configuration', () => {
  test('GW_METRICS_ADDR is host:port; GW_METRICS_TOKEN at least 16 printable characters', () => {
    expect(loadConfig({ GW_METRICS_ADDR: '127.0.0.1:9464' }).metrics).toEqual({ listen: { hostname: '127.0.0.1', port: 9464 } })
    expect(loadConfig({ GW_METRICS_ADDR: '[::1]:9464' }).metrics?.listen).toEqual({ hostname: '::1', port: 9464 })
    expect(loadConfig({ GW_METRICS_TOKEN: TOKEN }).metrics).toEqual({ token: TOKEN })
    expect(() => loadConfig({ GW_METRICS_ADDR: '9464' })).toThrow('GW_METRICS_ADDR')
    expect(() => loadConfig({ GW_METRICS_ADDR: 'localhost:99999' })).toThrow('GW_METRICS_ADDR')
    expect(() => loadConfig({ GW_METRICS_TOKEN: 'short' })).toThrow('GW_METRICS_TOKEN')
    expect(() => loadConfig({ GW_METRICS_TOKEN: 'has a space in it, sixteen+' })).toThrow('GW_METRICS_TOKEN')
  })

  test('path families are bounded: ids never reach a label', () => {
    expect(pathFamily('/v1/files/file-123/content')).toBe('files')
    expect(pathFamily('/v1/messages/batches/msgbatch_1/results')).toBe('batches')
    expect(pathFamily('/v1/batches/batch_1/cancel')).toBe('batches')
    expect(pathFamily('/v1/audio/transcriptions')).toBe('audio')
    expect(pathFamily('/v1/messages/count_tokens')).toBe('messages')
    expect(pathFamily('/v1/responses')).toBe('responses')
  })
})

describe('fallback', () => {
  test("a chain's failed first step is one attempt beyond the first, counted on the provider that served", async () => {
    const earlier = parsePrometheus(await scrapeText()).find((f) => f.name === 'gw_extra_attempts_total')
    const before = earlier ? total(earlier) : 0
    const other = await h.org('growth')
    await h.services.organizations.addCredits(other.orgId, 1_000)
    const made = await h.request('POST', '/v1/gateway/fallback-chains', {
      token: other.ownerSession,
      body: { name: 'metrics chain', match: { model: 'metrics-alias' }, steps: [{ model: 'gpt-4o-mini' }, { model: 'gpt-4o' }] },
    })
    expect(made.status).toBeLessThan(300)
    fake.steer({ model: 'gpt-4o-mini', directives: 'fake:error:500' })
    try {
      const response = await h.request('POST', '/v1/chat/completions', {
        token: other.apiKey,
        body: chat('fall', { model: 'metrics-alias' }),
      })
      expect(response.status).toBe(200)
      expect(response.headers.get('gw-attempts')).toBe('2')
    } finally {
      fake.unsteer()
    }
    const extra = familyOf(parsePrometheus(await scrapeText()), 'gw_extra_attempts_total')
    expect(total(extra) - before).toBe(1)
    expect(total(extra, { provider: 'openai' })).toBeGreaterThanOrEqual(1)
  })
})

/** A webhook receiver on loopback that answers the statuses it is given, in turn (200 once they run out). */
function startReceiver(answers: number[]) {
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: async (request) => {
      await request.text()
      return new Response('', { status: answers.shift() ?? 200 })
    },
  })
  return { url: `http://127.0.0.1:${server.port}/hook`, stop: () => server.stop(true) }
}

describe('webhook deliveries and the outbox', () => {
  for (const dialect of DIALECTS)
    test(`attempts are counted by outcome, and the outbox gauge is its pending rows (${dialect})`, async () => {
      // A failure, then the last attempt failing too (dead), one delivered, and a 410 (gone).
      const receiver = startReceiver([500, 503, 200, 410])
      const hw = await createHarness({
        dialect,
        providers: providersAt(fake),
        egress: new EgressPolicy({ enabled: true, allow: parseAllowList('127.0.0.1') }),
        delivery: { schedule: [0.05], pollMs: 20, attemptTimeoutMs: 2_000 },
        metricsToken: TOKEN,
        metrics: (sources) => new GatewayMetrics(sources),
      })
      try {
        const owner = await hw.org('growth')
        await hw.services.organizations.addCredits(owner.orgId, 1_000)
        const made = await hw.request('POST', '/v1/webhooks', {
          token: owner.ownerSession,
          body: { destination: receiver.url, events: ['request.completed'] },
        })
        expect(made.status).toBe(201)
        const scrapeOf = async () => {
          const response = await hw.request('GET', '/metrics', { token: TOKEN })
          return parsePrometheus(await response.text())
        }
        const pendingRows = async () =>
          (await hw.store.org(owner.orgId).webhooks.deliveries(100)).filter((d) => d.status === 'pending').length
        const deliveries = async (outcome: string) =>
          total(familyOf(await scrapeOf(), 'gw_webhook_deliveries_total'), { outcome })
        const callAndDeliver = async (content: string) => {
          const response = await hw.request('POST', '/v1/chat/completions', { token: owner.apiKey, body: chat(content) })
          expect(response.status).toBe(200)
          await response.text()
          await hw.requestLog.flush()
          expect(await pendingRows()).toBe(1)
          expect(total(familyOf(await scrapeOf(), 'gw_webhook_outbox_pending'))).toBe(1)
          const until = Date.now() + 5_000
          while ((await pendingRows()) > 0) {
            if (Date.now() > until) throw new Error('the delivery never settled')
            await hw.services.deliverer.tick()
            await Bun.sleep(20)
          }
        }
        for (const outcome of ['delivered', 'failed', 'dead', 'gone']) expect(await deliveries(outcome)).toBe(0)
        await callAndDeliver('fails twice')
        expect(await deliveries('failed')).toBe(1)
        expect(await deliveries('dead')).toBe(1)
        await callAndDeliver('delivered')
        expect(await deliveries('delivered')).toBe(1)
        await callAndDeliver('gone')
        expect(await deliveries('gone')).toBe(1)
        const families = await scrapeOf()
        expect(total(familyOf(families, 'gw_webhook_deliveries_total'))).toBe(4)
        expect(total(familyOf(families, 'gw_webhook_outbox_pending'))).toBe(0)
        expect(await hw.store.deliveries.pendingCount()).toBe(0)
      } finally {
        await hw.services.deliverer.stop()
        await hw.close()
        receiver.stop()
      }
    })
})
