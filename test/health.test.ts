import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../src/config'
import { RequestLog } from '../src/gateway/request-log/request-log'
import { silentLogger } from '../src/log'
import { HealthService } from '../src/modules/health/service'
import { openRuntime } from '../src/runtime'
import { createHarness, type Harness } from './support/harness'
import { requestRecord } from './support/records'
import { serviceUrl } from './support/services'

const harnesses: Harness[] = []
afterAll(async () => {
  for (const h of harnesses) await h.close()
})

async function health(h: Harness) {
  const response = await h.request('GET', '/healthcheck')
  return {
    status: response.status,
    body: (await response.json()) as { status: string; version: string; components: Record<string, string> },
  }
}

describe('GET /healthcheck', () => {
  test('answers without credentials: status, version and component states', async () => {
    const h = await createHarness({ probes: [{ name: 'database', required: true, check: async () => 'ok' }] })
    harnesses.push(h)
    const { status, body } = await health(h)
    expect(status).toBe(200)
    expect(body).toMatchObject({ status: 'ok', components: { database: 'ok' } })
    expect(body.version).toMatch(/^\d+\.\d+\.\d+/)
  })

  test('a required component down: 503 down; an optional one down: 200 degraded', async () => {
    const down = await createHarness({ probes: [{ name: 'database', required: true, check: async () => 'down' }] })
    const degraded = await createHarness({
      probes: [
        { name: 'database', required: true, check: async () => 'ok' },
        { name: 'redis', required: false, check: async () => Promise.reject(new Error('refused')) },
      ],
    })
    harnesses.push(down, degraded)
    expect(await health(down)).toMatchObject({ status: 503, body: { status: 'down' } })
    expect(await health(degraded)).toMatchObject({ status: 200, body: { status: 'degraded', components: { redis: 'down' } } })
  })
})

describe('the request log in the health check', () => {
  test('ok while records are written; degraded with the oldest wait once a record has waited over 5 s', async () => {
    let clock = 1_000_000
    let databaseUp = false
    const log = new RequestLog(
      async () => {
        if (!databaseUp) throw new Error('database away')
        return undefined
      },
      silentLogger,
      { now: () => clock, flushIntervalMs: 1_000_000 },
    )
    const health = new HealthService([], log, () => clock)
    expect(await health.report()).toMatchObject({ status: 'ok', components: { request_log: 'ok' }, requestLog: { queued: 0 } })
    log.record({ record: requestRecord({ id: 'r1', orgId: 'o' }) })
    await log.flush()
    clock += 4_000
    expect((await health.report()).components.request_log).toBe('ok')
    clock += 2_000
    expect(await health.report()).toMatchObject({
      status: 'degraded',
      components: { request_log: 'degraded' },
      requestLog: { queued: 1, oldestQueuedSeconds: 6, failedWrites: 1, setAside: 0, dropped: 0 },
    })
    databaseUp = true
    await log.drain()
    expect(await health.report()).toMatchObject({ status: 'ok', requestLog: { queued: 0, oldestQueuedSeconds: 0 } })
  })
})

describe('the runtime wires the real probes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-health-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  const check = async (env: Record<string, string>) => {
    const runtime = await openRuntime(loadConfig({ GW_DATA_DIR: dir, GW_LOG_LEVEL: 'error', ...env }), { migrate: true })
    try {
      return Object.fromEntries(
        await Promise.all(runtime.deps.probes.map(async (p) => [p.name, await p.check().catch(() => 'down')])),
      )
    } finally {
      await runtime.close()
    }
  }

  test('SQLite database probe', async () => {
    expect(await check({})).toEqual({ database: 'ok', egress: 'ok' })
  })

  test('outgoing calls switched off (GW_EGRESS=off) are reported as off, and gw stays ok', async () => {
    expect(await check({ GW_EGRESS: 'off' })).toEqual({ database: 'ok', egress: 'off' })
  })

  const redisUrl = serviceUrl('GW_TEST_REDIS_URL')
  test.skipIf(!redisUrl)('Redis probe: ok when reachable (CI requires it)', async () => {
    expect(await check({ GW_REDIS_URL: redisUrl as string })).toEqual({
      database: 'ok',
      egress: 'ok',
      redis: 'ok',
      rate_limiter: 'ok',
      budgets: 'ok',
      metadata: 'ok',
    })
  })

  test('Redis probe: down when nothing listens, and what falls back on it degraded', async () => {
    expect(await check({ GW_REDIS_URL: 'redis://127.0.0.1:1' })).toEqual({
      database: 'ok',
      egress: 'ok',
      redis: 'down',
      rate_limiter: 'degraded',
      budgets: 'degraded',
      metadata: 'degraded',
    })
  })
})
