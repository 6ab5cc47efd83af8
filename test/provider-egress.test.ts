/**
 * An organisation's own provider base URL is an address a user configures, like a webhook's: held to
 * the egress policy when it is saved and again when a call connects, so that no tenant can point gw at
 * the operator's loopback, private networks or the cloud metadata address. The operator's own
 * provider addresses (OPENAI_BASE_URL, ...) stay trusted.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { TCPSocketListener } from 'bun'
import { EgressPolicy, parseAllowList } from '../src/egress/policy'
import { type FakeProvider, providersAt, startFakeProvider } from './support/fake-provider'
import { createHarness, DIALECTS, type Harness, type Org } from './support/harness'

/** A loopback port that counts the connections made to it and answers none. */
interface Listener {
  port: number
  connections: () => number
  stop: () => void
}

function countingListener(): Listener {
  let connections = 0
  const server: TCPSocketListener = Bun.listen({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      open(socket) {
        connections += 1
        socket.end()
      },
      data() {},
    },
  })
  return { port: server.port, connections: () => connections, stop: () => server.stop(true) }
}

/** Every way of writing an address inside: each must be refused when saved. */
const INSIDE = (port: number) => [
  `http://127.0.0.1:${port}/v1`,
  `https://127.0.0.1:${port}/v1`,
  `https://localhost:${port}/v1`,
  `https://localhost.:${port}/v1`,
  `https://api.localhost:${port}/v1`,
  `https://127.1:${port}/v1`,
  `https://2130706433:${port}/v1`,
  `https://0177.0.0.1:${port}/v1`,
  `https://0x7f.1:${port}/v1`,
  `https://[::1]:${port}/v1`,
  `https://[::ffff:127.0.0.1]:${port}/v1`,
  `https://[::127.0.0.1]:${port}/v1`,
  'https://169.254.169.254/latest/meta-data/',
  'https://10.1.2.3/v1',
  'https://192.168.0.10/v1',
  'https://[fd00::1]/v1',
  'https://[fe80::1]/v1',
]

const chat = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }
const message = { model: 'claude-sonnet-4-5', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }

let fake: FakeProvider
let listener: Listener
beforeAll(async () => {
  fake = await startFakeProvider()
  listener = countingListener()
})
afterAll(async () => {
  listener.stop()
  await fake.close()
})

for (const dialect of DIALECTS) {
  describe(`an organisation's provider base URL and the egress policy (${dialect})`, () => {
    let strict: Harness
    let org: Org
    /** `inside.test` resolves to loopback, `public.test` to a public address: a DNS name that leads inside. */
    const resolve = async (host: string) => (host === 'inside.test' ? ['127.0.0.1'] : ['93.184.215.14'])
    beforeAll(async () => {
      strict = await createHarness({
        dialect,
        providers: providersAt(fake),
        egress: new EgressPolicy({ enabled: true, resolve }),
      })
      org = await strict.org('growth')
    })
    afterAll(() => strict.close())

    const addKey = (h: Harness, token: string, body: Record<string, unknown>) =>
      h.request('POST', '/v1/api-keys/provider-key', {
        token,
        body: { provider: 'openai', name: 'own', secret: 'sk-own', ...body },
      })

    test('an address inside is refused when saved, in every form, with a 400 naming the rule; nothing is stored', async () => {
      const before = listener.connections()
      for (const baseUrl of INSIDE(listener.port)) {
        const created = await addKey(strict, org.ownerSession, { baseUrl })
        expect({ baseUrl, status: created.status }).toEqual({ baseUrl, status: 400 })
        const { error } = (await created.json()) as { error: { message: string } }
        expect(error.message).toMatch(/^baseUrl /)
        expect(error.message).toContain('GW_EGRESS_ALLOW_HOSTS')
      }
      const viaVault = await strict.request('POST', '/v1/vault/add', {
        token: org.ownerSession,
        body: { provider: 'anthropic', name: 'own', secret: 'sk-own', baseUrl: 'https://169.254.169.254' },
      })
      expect(viaVault.status).toBe(400)
      expect(await strict.store.org(org.orgId).providerKeys.list()).toEqual([])
      expect(listener.connections()).toBe(before)
    })

    test('re-pointing a key inside is refused too, and the key keeps its address', async () => {
      const created = await addKey(strict, org.ownerSession, { baseUrl: 'https://llm.example.test/v1' })
      expect(created.status).toBe(201)
      const { id } = ((await created.json()) as { data: { id: string } }).data
      for (const path of [`/v1/api-keys/provider-key/${id}`, `/v1/vault/update/${id}`]) {
        const moved = await strict.request('PATCH', path, {
          token: org.ownerSession,
          body: { baseUrl: 'https://[::ffff:169.254.169.254]/' },
        })
        expect(moved.status).toBe(400)
      }
      expect((await strict.store.org(org.orgId).providerKeys.get(id))?.baseUrl).toBe('https://llm.example.test/v1')
      await strict.request('DELETE', `/v1/api-keys/provider-key/${id}`, { token: org.ownerSession })
    })

    test('a name that resolves inside is refused when a call connects: 403 in the caller’s format, no connection made', async () => {
      const created = await addKey(strict, org.ownerSession, { baseUrl: `https://inside.test:${listener.port}/v1` })
      expect(created.status).toBe(201)
      const { id } = ((await created.json()) as { data: { id: string } }).data
      const claude = await strict.request('POST', '/v1/vault/add', {
        token: org.ownerSession,
        body: { provider: 'anthropic', name: 'own', secret: 'sk-own', baseUrl: `https://inside.test:${listener.port}` },
      })
      const before = listener.connections()

      const openai = await strict.request('POST', '/v1/chat/completions', { token: org.apiKey, body: chat })
      expect(openai.status).toBe(403)
      const openaiError = ((await openai.json()) as { error: { type: string; code: string; message: string } }).error
      expect(openaiError).toMatchObject({ type: 'permission_error', code: 'egress_refused' })
      expect(openaiError.message).toContain('inside.test resolves to 127.0.0.1')

      const streamed = await strict.request('POST', '/v1/chat/completions', {
        token: org.apiKey,
        body: { ...chat, stream: true },
      })
      expect(streamed.status).toBe(403)
      await streamed.text()

      const anthropic = await strict.request('POST', '/v1/messages', { token: org.apiKey, body: message })
      expect(anthropic.status).toBe(403)
      expect(await anthropic.json()).toMatchObject({ type: 'error', error: { type: 'permission_error' } })

      const files = await strict.request('GET', '/v1/files', { token: org.apiKey })
      expect(files.status).toBe(403)
      await files.text()

      expect(listener.connections()).toBe(before)
      const gwId = openai.headers.get('gw-id') as string
      await strict.requestLog.flush()
      expect((await strict.store.requests.get(org.orgId, gwId))?.error).toContain('egress_refused')

      await strict.request('DELETE', `/v1/api-keys/provider-key/${id}`, { token: org.ownerSession })
      const claudeId = ((await claude.json()) as { data: { id: string } }).data.id
      await strict.request('DELETE', `/v1/api-keys/provider-key/${claudeId}`, { token: org.ownerSession })
    })

    test('a key saved inside before the rule (or while the operator allowed it) is refused at call time', async () => {
      const lenient = await createHarness({
        database: strict,
        providers: providersAt(fake),
        egress: new EgressPolicy({ enabled: true, allow: parseAllowList('127.0.0.1') }),
      })
      const created = await addKey(lenient, org.ownerSession, { baseUrl: `http://127.0.0.1:${listener.port}/v1` })
      expect(created.status).toBe(201)
      const before = listener.connections()
      const refused = await strict.request('POST', '/v1/chat/completions', { token: org.apiKey, body: chat })
      expect(refused.status).toBe(403)
      expect(await refused.text()).toContain('GW_EGRESS_ALLOW_HOSTS')
      expect(listener.connections()).toBe(before)
      const { id } = ((await created.json()) as { data: { id: string } }).data
      await strict.request('DELETE', `/v1/api-keys/provider-key/${id}`, { token: org.ownerSession })
      await lenient.close()
    })

    test('with the operator allowing loopback, an organisation’s own server on loopback serves; a redirect is not followed', async () => {
      const allowing = await createHarness({
        database: strict,
        providers: providersAt(fake),
        egress: new EgressPolicy({ enabled: true, allow: parseAllowList('127.0.0.1') }),
      })
      const created = await addKey(allowing, org.ownerSession, { baseUrl: fake.openaiBaseUrl })
      expect(created.status).toBe(201)
      const served = await allowing.request('POST', '/v1/chat/completions', { token: org.apiKey, body: chat })
      expect(served.status).toBe(200)
      expect(fake.calls.at(-1)?.headers.authorization).toBe('Bearer sk-own')
      const { id } = ((await created.json()) as { data: { id: string } }).data
      await allowing.request('DELETE', `/v1/api-keys/provider-key/${id}`, { token: org.ownerSession })

      // An allowed address that answers a redirect to the metadata address: gw does not follow it.
      const redirecting = Bun.serve({
        hostname: '127.0.0.1',
        port: 0,
        fetch: () => new Response(null, { status: 307, headers: { location: 'http://169.254.169.254/latest/meta-data/' } }),
      })
      const moved = await addKey(allowing, org.ownerSession, { baseUrl: `http://127.0.0.1:${redirecting.port}/v1` })
      const answer = await allowing.request('POST', '/v1/chat/completions', { token: org.apiKey, body: chat })
      expect(answer.status).toBe(502)
      expect(await answer.text()).toContain('redirect')
      const movedId = ((await moved.json()) as { data: { id: string } }).data.id
      await allowing.request('DELETE', `/v1/api-keys/provider-key/${movedId}`, { token: org.ownerSession })
      redirecting.stop(true)
      await allowing.close()
    })

    test("the operator's own provider address on loopback stays trusted", async () => {
      await strict.services.organizations.addCredits(org.orgId, 10)
      const calls = fake.calls.length
      const answer = await strict.request('POST', '/v1/chat/completions', { token: org.apiKey, body: chat })
      expect(answer.status).toBe(200)
      expect(fake.calls.length).toBe(calls + 1)
    })

    test('with outgoing calls off, an organisation cannot name its own base URL (409), and a stored one is refused', async () => {
      const off = await createHarness({
        database: strict,
        providers: providersAt(fake),
        egress: new EgressPolicy({ enabled: false }),
      })
      const refused = await addKey(off, org.ownerSession, { baseUrl: 'https://llm.example.test/v1' })
      expect(refused.status).toBe(409)
      const created = await addKey(strict, org.ownerSession, { baseUrl: 'https://llm.example.test/v1' })
      const answer = await off.request('POST', '/v1/chat/completions', { token: org.apiKey, body: chat })
      expect(answer.status).toBe(403)
      expect(await answer.text()).toContain('GW_EGRESS=off')
      const { id } = ((await created.json()) as { data: { id: string } }).data
      await strict.request('DELETE', `/v1/api-keys/provider-key/${id}`, { token: org.ownerSession })
      await off.close()
    })
  })
}
