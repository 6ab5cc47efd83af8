import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { GatewayMetrics } from '../src/observability/metrics'
import type { HealthProbe } from '../src/util/health-probe'
import { type FakeProvider, providersAt, startFakeProvider } from './support/fake-provider'
import { createHarness, type Harness } from './support/harness'

const docs = join(import.meta.dir, '..', 'docs')
const TOKEN = 'grafana-token-0123456789'
// biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's variable syntax, not a template literal
const DATASOURCE = '${datasource}'

interface Target {
  expr?: string
  refId?: string
  datasource?: { type?: string; uid?: string }
}
interface Panel {
  id?: number
  type?: string
  title?: string
  description?: string
  datasource?: { type?: string; uid?: string }
  gridPos?: { h: number; w: number; x: number; y: number }
  targets?: Target[]
  panels?: Panel[]
}
interface Dashboard {
  uid: string
  schemaVersion: number
  refresh: string
  time: { from: string; to: string }
  panels: Panel[]
  templating: { list: Array<{ name: string; type: string; query: unknown; definition?: string }> }
}
interface Rule {
  alert?: string
  record?: string
  expr: string
}

const dashboard = JSON.parse(readFileSync(join(docs, 'grafana', 'gw-dashboard.json'), 'utf8')) as Dashboard
const alerts = Bun.YAML.parse(readFileSync(join(docs, 'grafana', 'alerts.yml'), 'utf8')) as {
  groups: Array<{ name: string; rules: Rule[] }>
}
const rules = alerts.groups.flatMap((group) => group.rules)

/** Every panel, those inside collapsed rows included. */
const allPanels = (panels: Panel[]): Panel[] => panels.flatMap((panel) => [panel, ...allPanels(panel.panels ?? [])])
const panels = allPanels(dashboard.panels)
const targets = panels.flatMap((panel) => (panel.targets ?? []).map((target) => ({ panel, target })))

/** The gw_* series an expression reads, a histogram's _bucket, _sum and _count read as the histogram. */
const metricNames = (expr: string): string[] =>
  [...expr.matchAll(/\bgw_[a-z0-9_]+/g)].map(([name]) => name.replace(/_(bucket|sum|count)$/, ''))

/** The metric families a scrape declares (a labelled counter nobody has counted yet is declared too). */
const declared = (text: string): Set<string> =>
  new Set([...text.matchAll(/^# TYPE (\S+) \S+$/gm)].map(([, name]) => name as string))

const normalise = (expr: string) => expr.replace(/\s+/g, ' ').trim()

describe('the Grafana dashboard is well formed', () => {
  test('uid, schema, refresh, time range and the datasource, job and instance variables', () => {
    expect(dashboard.uid).toBe('gw-overview')
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(36)
    expect(dashboard.refresh).toBe('30s')
    expect(dashboard.time).toEqual({ from: 'now-6h', to: 'now' })
    const variables = new Map(dashboard.templating.list.map((v) => [v.name, v]))
    expect(variables.get('datasource')).toMatchObject({ type: 'datasource', query: 'prometheus' })
    for (const name of ['job', 'instance']) {
      const variable = variables.get(name)
      expect(variable?.type).toBe('query')
      expect(JSON.stringify(variable?.query)).toContain(`label_values(gw_`)
      expect(JSON.stringify(variable?.query)).toContain(`, ${name})`)
    }
  })

  test('panel ids are unique; every panel has a gridPos inside 24 columns, and none overlap', () => {
    const ids = panels.map((panel) => panel.id)
    expect(ids.every((id) => typeof id === 'number')).toBe(true)
    expect(new Set(ids).size).toBe(ids.length)
    const cells = new Map<string, string | undefined>()
    for (const panel of panels) {
      const pos = panel.gridPos
      expect(pos, `${panel.title} has a gridPos`).toBeDefined()
      if (!pos) continue
      for (const key of ['h', 'w', 'x', 'y'] as const) expect(Number.isInteger(pos[key])).toBe(true)
      expect(pos.w).toBeGreaterThan(0)
      expect(pos.h).toBeGreaterThan(0)
      expect(pos.x + pos.w).toBeLessThanOrEqual(24)
      for (let x = pos.x; x < pos.x + pos.w; x++)
        for (let y = pos.y; y < pos.y + pos.h; y++) {
          expect(cells.get(`${x},${y}`), `${panel.title} overlaps another panel at ${x},${y}`).toBeUndefined()
          cells.set(`${x},${y}`, panel.title)
        }
    }
  })

  test('every panel and every query use the datasource variable', () => {
    for (const panel of panels) expect(panel.datasource, `${panel.title}`).toEqual({ type: 'prometheus', uid: DATASOURCE })
    for (const { panel, target } of targets) expect(target.datasource?.uid, `${panel.title}`).toBe(DATASOURCE)
  })

  test('every graph has queries, none empty, each with its own refId; every gw series is filtered by $job and $instance', () => {
    for (const panel of panels.filter((p) => p.type !== 'row')) {
      expect(panel.targets?.length ?? 0, `${panel.title} has queries`).toBeGreaterThan(0)
      expect(panel.description?.length ?? 0, `${panel.title} says what it shows`).toBeGreaterThan(0)
      const refIds = (panel.targets ?? []).map((t) => t.refId)
      expect(new Set(refIds).size).toBe(refIds.length)
    }
    for (const { panel, target } of targets) {
      expect(target.expr?.trim().length ?? 0, `${panel.title} ${target.refId}`).toBeGreaterThan(0)
      const expr = target.expr ?? ''
      expect(metricNames(expr).length, `${panel.title} reads a gw metric`).toBeGreaterThan(0)
      for (const [, selector] of expr.matchAll(/\bgw_[a-z0-9_]+(\{[^}]*\})?/g)) {
        expect(selector, `${panel.title}: ${expr}`).toContain('job=~"$job"')
        expect(selector, `${panel.title}: ${expr}`).toContain('instance=~"$instance"')
      }
    }
  })

  test('counters are read through rate() or increase(), never raw', () => {
    for (const { panel, target } of targets) {
      const expr = target.expr ?? ''
      for (const [, name] of expr.matchAll(/\b(gw_[a-z0-9_]+_(?:total|bucket))\b/g))
        expect(expr, `${panel.title}: ${name}`).toMatch(new RegExp(`\\b(rate|increase)\\(${name}\\b`))
    }
  })
})

describe('the alerting rules are well formed and agree with docs/operations.md', () => {
  test('every rule is an alert with an expression and a summary', () => {
    expect(rules.length).toBeGreaterThan(0)
    for (const rule of rules) {
      expect(rule.alert).toMatch(/^Gw[A-Za-z]+$/)
      expect(rule.expr.trim().length).toBeGreaterThan(0)
      expect((rule as { annotations?: { summary?: string } }).annotations?.summary?.length ?? 0).toBeGreaterThan(0)
    }
    const names = rules.map((rule) => rule.alert)
    expect(new Set(names).size).toBe(names.length)
  })

  test("the rules file and the operations guide's suggestions are the same alerts with the same expressions", () => {
    const guide = readFileSync(join(docs, 'operations.md'), 'utf8')
    const section = guide.slice(guide.indexOf('## Alerting suggestions'))
    const block = section.match(/```yaml\n([\s\S]*?)```/)?.[1]
    expect(block).toBeDefined()
    const suggested = (Bun.YAML.parse(block ?? '') as typeof alerts).groups.flatMap((group) => group.rules)
    const byName = (list: Rule[]) => Object.fromEntries(list.map((rule) => [rule.alert, normalise(rule.expr)]))
    expect(byName(rules)).toEqual(byName(suggested))
  })
})

describe('every metric the dashboard and the alerts read is one gw exports', () => {
  let fake: FakeProvider
  let h: Harness
  let scrape = ''
  const probes: HealthProbe[] = [
    { name: 'database', required: true, check: async () => 'ok' },
    { name: 'redis', required: false, check: async () => 'ok' },
  ]

  beforeAll(async () => {
    fake = await startFakeProvider()
    h = await createHarness({
      providers: providersAt(fake),
      probes,
      metricsToken: TOKEN,
      metrics: (sources) => new GatewayMetrics(sources),
    })
    const org = await h.org('growth')
    await h.services.organizations.addCredits(org.orgId, 1_000)
    const response = await h.request('POST', '/v1/chat/completions', {
      token: org.apiKey,
      body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'hello' }] },
    })
    expect(response.status).toBe(200)
    await response.text()
    await h.requestLog.flush()
    const metrics = await h.request('GET', '/metrics', { token: TOKEN })
    expect(metrics.status).toBe(200)
    scrape = await metrics.text()
  })
  afterAll(async () => {
    await h?.close()
    fake?.close()
  })

  test('the dashboard reads the metrics it means to', () => {
    const read = new Set(targets.flatMap(({ target }) => metricNames(target.expr ?? '')))
    // The brief's list: a panel for each, so a metric dropped from the dashboard by mistake is noticed.
    for (const name of [
      'gw_requests_total',
      'gw_request_duration_seconds',
      'gw_time_to_first_token_seconds',
      'gw_overhead_seconds',
      'gw_provider_duration_seconds',
      'gw_cost_usd_total',
      'gw_tokens_total',
      'gw_cache_hits_total',
      'gw_cache_savings_usd_total',
      'gw_refusals_total',
      'gw_extra_attempts_total',
      'gw_request_log_queued',
      'gw_request_log_oldest_queued_seconds',
      'gw_request_log_dropped',
      'gw_request_log_set_aside',
      'gw_request_log_failed_flushes',
      'gw_request_log_write_seconds',
      'gw_webhook_deliveries_total',
      'gw_webhook_outbox_pending',
      'gw_database_up',
      'gw_redis_up',
      'gw_process_resident_memory_bytes',
      'gw_nodejs_heap_size_used_bytes',
      'gw_nodejs_eventloop_lag_seconds',
    ])
      expect(read.has(name), name).toBe(true)
  })

  test('each gw_* metric in a panel query, a variable query or an alert is declared by a real scrape', () => {
    const exported = declared(scrape)
    expect(exported.has('gw_requests_total')).toBe(true)
    const referenced = new Map<string, string>()
    for (const { panel, target } of targets)
      for (const name of metricNames(target.expr ?? '')) referenced.set(name, `panel "${panel.title}"`)
    for (const variable of dashboard.templating.list)
      for (const name of metricNames(JSON.stringify(variable.query ?? ''))) referenced.set(name, `variable ${variable.name}`)
    for (const rule of rules) for (const name of metricNames(rule.expr)) referenced.set(name, `alert ${rule.alert}`)
    const missing = [...referenced].filter(([name]) => !exported.has(name)).map(([name, where]) => `${name} (${where})`)
    expect(missing).toEqual([])
  })
})
