import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../src/config'
import { openRuntime } from '../src/runtime'
import { createHarness, type Harness } from './support/harness'
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
    expect(await check({})).toEqual({ database: 'ok' })
  })

  const redisUrl = serviceUrl('GW_TEST_REDIS_URL')
  test.skipIf(!redisUrl)('Redis probe: ok when reachable (CI requires it)', async () => {
    expect(await check({ GW_REDIS_URL: redisUrl as string })).toEqual({ database: 'ok', redis: 'ok', rate_limiter: 'ok' })
  })

  test('Redis probe: down when nothing listens', async () => {
    expect(await check({ GW_REDIS_URL: 'redis://127.0.0.1:1' })).toEqual({ database: 'ok', redis: 'down', rate_limiter: 'ok' })
  })
})
