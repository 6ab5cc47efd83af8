import { afterAll, beforeAll, describe, expect, spyOn, test } from 'bun:test'
import type { App } from '../src/app'
import { createLogger } from '../src/log'
import { serve } from '../src/serve'
import { type FakeProvider, providersAt, startFakeProvider } from './support/fake-provider'
import { createHarness, type Harness, type Org } from './support/harness'
import { serveHarness } from './support/serve'

/**
 * `gw serve` routes the dispatch paths from Bun's router straight to the gateway's handler, and the
 * app routes them through Elysia: both must answer alike, refusals included.
 */
let fake: FakeProvider
let h: Harness
const logged: string[] = []
let org: Org
let served: { url: string; stop(): Promise<void> }
let gatewayOnly: string
let readOnly: string

beforeAll(async () => {
  fake = await startFakeProvider()
  h = await createHarness({ providers: providersAt(fake), log: createLogger('info', (line) => logged.push(line)) })
  org = await h.org('growth')
  await h.services.organizations.addCredits(org.orgId, 10)
  served = serveHarness(h)
  const key = async (scopes: string[]) => {
    const response = await h.request('POST', '/v1/api-keys', { token: org.ownerSession, body: { name: scopes[0], scopes } })
    return ((await response.json()) as { data: { key: string } }).data.key
  }
  gatewayOnly = await key(['gateway'])
  readOnly = await key(['traffic.read'])
})
afterAll(async () => {
  await served.stop()
  await h.close()
  await fake.close()
})

const chat = JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] })
const messages = JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] })

const ways = [
  ['served (Bun router)', (path: string, init: RequestInit) => fetch(`${served.url}${path}`, { method: 'POST', ...init })],
  [
    'in-process (Elysia)',
    (path: string, init: RequestInit) => h.app.handle(new Request(`http://localhost${path}`, { method: 'POST', ...init })),
  ],
] as const

for (const [way, send] of ways) {
  describe(`dispatch paths, ${way}`, () => {
    const call = (path: string, body: string, token?: string) =>
      send(path, {
        body,
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      })

    test('a call is dispatched and answered with the Gw-* headers', async () => {
      const response = await call('/v1/chat/completions', chat, gatewayOnly)
      expect(response.status).toBe(200)
      expect(response.headers.get('gw-provider')).toBe('openai')
      expect(response.headers.get('gw-id')).toMatch(/^[0-9a-f-]{36}$/)
    })

    test("no credential: 401 in the path's SDK format", async () => {
      const openai = await call('/v1/chat/completions', chat)
      expect(openai.status).toBe(401)
      expect(((await openai.json()) as { error: { type: string } }).error.type).toBe('authentication_error')
      const anthropic = await call('/v1/messages', messages)
      expect(anthropic.status).toBe(401)
      expect(await anthropic.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } })
    })

    test('a key without the gateway scope: 403', async () => {
      const response = await call('/v1/chat/completions', chat, readOnly)
      expect(response.status).toBe(403)
      expect(((await response.json()) as { error: { message: string } }).error.message).toContain('"gateway"')
    })

    test('a malformed body: 400, with the Gw-* headers', async () => {
      const response = await call('/v1/chat/completions', '{not json', org.apiKey)
      expect(response.status).toBe(400)
      expect(response.headers.get('gw-status')).toBe('error')
    })
  })
}

/** What a store's driver may say when it fails: it must reach the server log, never the caller. */
const DRIVER_ERROR = 'connect ECONNREFUSED 10.1.2.3:5432'

describe('our own faults', () => {
  for (const [way, send] of ways) {
    test(`${way}: a failure while authenticating is a 500 in the SDK format, logged, its message not shown`, async () => {
      logged.length = 0
      // The gateway's calls ask `principalOf` (`authenticate` is its promise-only form).
      const failing = spyOn(h.services.authenticator, 'principalOf').mockImplementationOnce(() =>
        Promise.reject(new Error(DRIVER_ERROR)),
      )
      try {
        const response = await send('/v1/messages', {
          body: messages,
          headers: { 'content-type': 'application/json', authorization: `Bearer ${gatewayOnly}`, accept: 'text/html' },
        })
        expect(response.status).toBe(500)
        const text = await response.text()
        expect(JSON.parse(text)).toMatchObject({ type: 'error', error: { type: 'api_error' } })
        expect(text).not.toContain('10.1.2.3')
        expect(logged.some((line) => line.includes(DRIVER_ERROR))).toBe(true)
      } finally {
        failing.mockRestore()
      }
    })
  }

  test('an error no handler answers gets a JSON 500 from the server, not a page showing it', async () => {
    logged.length = 0
    const broken = {
      fetch: () => {
        throw new Error(DRIVER_ERROR)
      },
    } as unknown as App // only `fetch` is reached: the server's net under the app is what is tested
    const server = serve(broken, h.services, { hostname: '127.0.0.1', port: 0, log: h.deps.log })
    try {
      const response = await fetch(`http://127.0.0.1:${server.port}/v1/organization`, { headers: { accept: 'text/html' } })
      expect(response.status).toBe(500)
      expect(response.headers.get('content-type')).toContain('application/json')
      const text = await response.text()
      expect(JSON.parse(text)).toMatchObject({ data: null, error: { code: 'internal_error' } })
      expect(text).not.toContain('10.1.2.3')
      expect(logged.some((line) => line.includes(DRIVER_ERROR))).toBe(true)
    } finally {
      await server.stop(true)
    }
  })
})

describe('the management app built on first use, as `gw serve` builds it', () => {
  /** A builder that hands the harness's app once it is told to, counting how often it was asked. */
  const builder = (app: App | Error) => {
    let release: () => void = () => undefined
    const released = new Promise<void>((resolve) => {
      release = resolve
    })
    const calls = { count: 0 }
    const build = async (): Promise<App> => {
      calls.count++
      await released
      if (app instanceof Error) throw app
      return app
    }
    return { build, release, calls }
  }

  test('the health check and gateway calls are answered before it is built; it is built once, for every request waiting on it', async () => {
    const { build, release, calls } = builder(h.app)
    const server = serve(build, h.services, { hostname: '127.0.0.1', port: 0, log: h.deps.log })
    const base = `http://127.0.0.1:${server.port}`
    try {
      const health = await fetch(`${base}/healthcheck`)
      expect(health.status).toBe(200)
      expect(((await health.json()) as { status: string }).status).toBe('ok')
      const call = await fetch(`${base}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/json' },
        body: chat,
      })
      expect(call.status).toBe(200)
      expect(calls.count).toBe(0)

      const waiting = [1, 2, 3].map(() =>
        fetch(`${base}/v1/governance/access-rules`, { headers: { authorization: `Bearer ${org.ownerSession}` } }),
      )
      await Bun.sleep(20)
      expect(calls.count).toBe(1)
      release()
      const answers = await Promise.all(waiting)
      expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200])
      const after = await fetch(`${base}/v1/governance/access-rules`, {
        headers: { authorization: `Bearer ${org.ownerSession}` },
      })
      expect(after.status).toBe(200)
      expect(calls.count).toBe(1)
    } finally {
      await server.stop(true)
    }
  })

  test('a build that fails answers a JSON 500, is logged, and is tried again by the next request', async () => {
    logged.length = 0
    const { build, release, calls } = builder(new Error('the route catalogue disagrees'))
    release()
    const server = serve(build, h.services, { hostname: '127.0.0.1', port: 0, log: h.deps.log })
    try {
      for (const _ of [1, 2]) {
        const response = await fetch(`http://127.0.0.1:${server.port}/v1/governance/access-rules`)
        expect(response.status).toBe(500)
        expect(await response.json()).toMatchObject({ data: null, error: { code: 'internal_error' } })
      }
      expect(calls.count).toBe(2)
      expect(logged.some((line) => line.includes('the management API could not be built'))).toBe(true)
    } finally {
      await server.stop(true)
    }
  })
})
