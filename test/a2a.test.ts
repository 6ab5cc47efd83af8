import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Message } from '@a2a-js/sdk'
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } from '@a2a-js/sdk/client'
import { A2aRelay } from '../src/a2a/relay'
import { Vault } from '../src/auth/vault'
import { EgressPolicy, parseAllowList } from '../src/egress/policy'
import { RateLimiter } from '../src/limits/limiter'
import { MemoryLimiterStore } from '../src/limits/store'
import { silentLogger } from '../src/log'
import { type FakeA2aAgent, startFakeA2aAgent } from './support/fake-a2a-agent'
import { createHarness, DIALECTS, type Harness, type Org, TEST_SECRET } from './support/harness'
import { serveHarness } from './support/serve'

/**
 * A2A agents: the registry (spec 4.6 `governance.write`; the list `org.read`) with the agent's key
 * sealed, URLs held to the egress policy and a card probe; and the relay at /a2a/{id}, which takes a
 * gw key, asks the access rules and forwards JSON-RPC (streamed or not) with the agent's own key, and
 * leaves each call in the A2A call log. The agent is a fake on loopback built with the official A2A
 * SDK's server side; one test drives gw with the SDK's client, so both ends are the SDK's.
 */

interface AgentView {
  id: string
  name: string
  url: string
  hasKey: boolean
  keyHint?: string
  card: Record<string, unknown> | null
  createdAt: string
  updatedAt: string
}
interface ProbeView {
  ok: boolean
  card: Record<string, unknown> | null
  latencyMs: number
  error: string | null
}
interface Failure {
  code: string
  message: string
}
interface RpcAnswer {
  jsonrpc: string
  id: string | number | null
  result?: { kind: string; parts?: Array<{ text: string }> }
  error?: { code: number; message: string; data: { code: string } }
}

const PATH = '/v1/a2a/agents'
const AGENT_KEY = 'agent-key-0123456789-secret-value'
const LOOPBACK = parseAllowList('127.0.0.1') as NonNullable<ReturnType<typeof parseAllowList>>

const data = async <T>(response: Response, status = 200): Promise<T> => {
  const text = await response.text()
  expect(`${response.status} ${text}`).toStartWith(`${status} `)
  return (JSON.parse(text) as { data: T }).data
}
const failure = async (response: Response, status: number): Promise<Failure> => {
  const text = await response.text()
  expect(`${response.status} ${text}`).toStartWith(`${status} `)
  return (JSON.parse(text) as { error: Failure }).error
}
const rpc = (method: string, text: string, id: string | number = 1) => ({
  jsonrpc: '2.0',
  id,
  method,
  params: { message: { kind: 'message', messageId: `m-${id}`, role: 'user', parts: [{ kind: 'text', text }] } },
})

let agent: FakeA2aAgent
let keyed: FakeA2aAgent
let legacy: FakeA2aAgent
let broken: FakeA2aAgent
beforeAll(async () => {
  agent = await startFakeA2aAgent({ name: 'Echo Agent' })
  keyed = await startFakeA2aAgent({ name: 'Keyed Agent', key: AGENT_KEY })
  legacy = await startFakeA2aAgent({ name: 'Old Agent', legacyCardOnly: true })
  broken = await startFakeA2aAgent({ card: { name: 'half a card', url: 'http://127.0.0.1/', skills: 'none' } })
})
afterAll(async () => {
  for (const fake of [agent, keyed, legacy, broken]) await fake.close()
})

describe.each(DIALECTS)('A2A agents on %s', (dialect) => {
  let h: Harness
  let strict: Harness
  beforeAll(async () => {
    h = await createHarness({ dialect, egress: new EgressPolicy({ enabled: true, allow: LOOPBACK }) })
    // The default policy, over the same database: public https:// only.
    strict = await createHarness({ dialect, database: h, egress: new EgressPolicy({ enabled: true }) })
  })
  afterAll(async () => {
    await h.close()
  })

  const create = (org: Org, body: unknown, token = org.ownerSession, harness = h) =>
    harness.request('POST', PATH, { token, body })
  const made = async (org: Org, name = 'echo', url = agent.url) => data<AgentView>(await create(org, { name, url }), 201)
  const list = async (org: Org, token = org.ownerSession) => data<AgentView[]>(await h.request('GET', PATH, { token }))
  const setKey = (org: Org, id: string, key: unknown, token = org.ownerSession) =>
    h.request('PUT', `${PATH}/${id}/keys`, { token, body: { key } })
  const probe = (org: Org, id: string, token = org.ownerSession) => h.request('POST', `${PATH}/${id}/probe`, { token })
  const relay = (token: string | undefined, id: string, body: unknown, headers: Record<string, string> = {}) =>
    h.request('POST', `/a2a/${id}`, { ...(token ? { token } : {}), body, headers })
  const calls = async (org: Org) =>
    (
      await data<{
        calls: Array<{ agentId: string; agentName: string; skill: string | null; status: string; error: string | null }>
      }>(await h.request('POST', '/v1/a2a/calls', { token: org.ownerSession, body: {} }))
    ).calls

  describe('the registry', () => {
    test('create answers 201 without a key or card, lists it, renames it and deletes it', async () => {
      const org = await h.org()
      const created = await made(org)
      expect(created).toEqual({
        id: expect.any(String),
        name: 'echo',
        url: agent.url,
        hasKey: false,
        card: null,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      })
      expect(await list(org)).toEqual([created])
      const renamed = await data<AgentView>(
        await h.request('PATCH', `${PATH}/${created.id}`, { token: org.ownerSession, body: { name: 'echo-2' } }),
      )
      expect(renamed).toMatchObject({ id: created.id, name: 'echo-2', url: agent.url })
      expect(await data(await h.request('DELETE', `${PATH}/${created.id}`, { token: org.ownerSession }))).toEqual({
        id: created.id,
        deleted: true,
      })
      expect(await list(org)).toEqual([])
      await failure(await h.request('DELETE', `${PATH}/${created.id}`, { token: org.ownerSession }), 404)
    })

    test('bad input is 400 and stores nothing', async () => {
      const org = await h.org()
      for (const body of [
        { name: 'Has Capitals', url: agent.url },
        { name: '', url: agent.url },
        { name: 'x'.repeat(65), url: agent.url },
        { name: 'ok', url: 'ftp://agent.example.test' },
        { name: 'ok', url: `https://agent.example.test/${'a'.repeat(2048)}` },
        { name: 'ok' },
        { name: 'ok', url: agent.url, extra: true },
      ]) {
        const response = await create(org, body)
        expect(`${response.status} ${JSON.stringify(body).slice(0, 80)}`).toStartWith('400 ')
      }
      expect(await h.store.org(org.orgId).a2aAgents.list()).toEqual([])
      const created = await made(org)
      await failure(await h.request('PATCH', `${PATH}/${created.id}`, { token: org.ownerSession, body: {} }), 400)
      for (const key of ['', 'has space', 'x'.repeat(4097)]) await failure(await setKey(org, created.id, key), 400)
      expect(await list(org)).toEqual([created])
    })

    test('a name taken in the organisation is 409, on create and on rename; another organisation may use it', async () => {
      const org = await h.org()
      await made(org, 'taken')
      const other = await made(org, 'other')
      expect((await failure(await create(org, { name: 'taken', url: agent.url }), 409)).message).toContain('taken')
      await failure(await h.request('PATCH', `${PATH}/${other.id}`, { token: org.ownerSession, body: { name: 'taken' } }), 409)
      await made(await h.org(), 'taken')
      expect((await list(org)).map((a) => a.name).sort()).toEqual(['other', 'taken'])
    })

    test('the key is sealed and never answered: hasKey and a hint only', async () => {
      const org = await h.org()
      const created = await made(org, 'keyed', keyed.url)
      const response = await setKey(org, created.id, AGENT_KEY)
      const text = await response.clone().text()
      expect(text).not.toContain(AGENT_KEY)
      const changed = await data<AgentView>(response)
      expect(changed).toMatchObject({ hasKey: true, keyHint: `${AGENT_KEY.slice(0, 4)}…${AGENT_KEY.slice(-4)}` })
      expect(JSON.stringify(await list(org))).not.toContain(AGENT_KEY)
      const [row] = await h.store.org(org.orgId).a2aAgents.list()
      expect(row?.sealedKey).toBeString()
      expect(row?.sealedKey).not.toContain(AGENT_KEY)
      const audit = await h.request('GET', `/v1/organization/${org.orgId}/audit`, { token: org.ownerSession })
      const entries = await audit.text()
      expect(`${audit.status} ${entries}`).toStartWith('200 ')
      expect(entries).toContain(created.id)
      expect(entries).not.toContain(AGENT_KEY)
    })

    test('a URL the default egress policy refuses is 400 naming why, and nothing is stored', async () => {
      const org = await h.org()
      const refused = await failure(await create(org, { name: 'local', url: agent.url }, org.ownerSession, strict), 400)
      expect(refused.message).toContain('url must be https://')
      const loopback = await failure(
        await create(org, { name: 'local', url: 'https://127.0.0.1/a2a' }, org.ownerSession, strict),
        400,
      )
      expect(loopback.message).toContain('loopback')
      expect(await list(org)).toEqual([])
    })

    test('a probe validates a good card and keeps it; the older card name is read too; a bad card is ok: false', async () => {
      const org = await h.org()
      const good = await made(org, 'good')
      const probed = await data<ProbeView>(await probe(org, good.id))
      expect(probed).toMatchObject({ ok: true, error: null, card: { name: 'Echo Agent' } })
      expect(probed.latencyMs).toBeGreaterThanOrEqual(0)
      const [kept] = await list(org)
      expect(kept?.card).toMatchObject({ name: 'Echo Agent', skills: [{ id: 'echo' }] })

      const old = await made(org, 'old', legacy.url)
      expect(await data<ProbeView>(await probe(org, old.id))).toMatchObject({ ok: true, card: { name: 'Old Agent' } })

      const bad = await made(org, 'bad', broken.url)
      const refused = await data<ProbeView>(await probe(org, bad.id))
      expect(refused).toMatchObject({ ok: false, card: null })
      expect(refused.error).toContain('not a valid A2A agent card')
      expect((await list(org)).find((a) => a.id === bad.id)?.card).toBeNull()

      const closed = await made(org, 'closed', 'http://127.0.0.1:9')
      const unreachable = await data<ProbeView>(await probe(org, closed.id))
      expect(unreachable.ok).toBe(false)
      expect(unreachable.error).toBeString()
    })

    test("another organisation's agent is 404 to every write and absent from its list", async () => {
      const org = await h.org()
      const theirs = await made(org, 'theirs')
      const intruder = await h.org()
      const token = intruder.ownerSession
      await failure(await h.request('PATCH', `${PATH}/${theirs.id}`, { token, body: { name: 'mine' } }), 404)
      await failure(await setKey(intruder, theirs.id, 'stolen-key-0123456789'), 404)
      await failure(await probe(intruder, theirs.id), 404)
      await failure(await h.request('DELETE', `${PATH}/${theirs.id}`, { token }), 404)
      expect(await list(intruder)).toEqual([])
      expect(await list(org)).toEqual([theirs])
    })

    test('a role without governance.write is 403 on every write; no credential is 401', async () => {
      const org = await h.org()
      const created = await made(org)
      const member = await h.member(org.orgId, 'member')
      const token = member.sessionToken
      await failure(await create(org, { name: 'nope', url: agent.url }, token), 403)
      await failure(await h.request('PATCH', `${PATH}/${created.id}`, { token, body: { name: 'nope' } }), 403)
      await failure(await setKey(org, created.id, AGENT_KEY, token), 403)
      await failure(await probe(org, created.id, token), 403)
      await failure(await h.request('DELETE', `${PATH}/${created.id}`, { token }), 403)
      expect(await list(org, token)).toEqual([created])
      await failure(await h.request('GET', PATH), 401)
      await failure(await h.request('POST', PATH, { body: { name: 'anon', url: agent.url } }), 401)
    })
  })

  describe('the relay', () => {
    /** An organisation with the keyed agent registered, its key set and its card probed. */
    const registered = async () => {
      const org = await h.org()
      const created = await made(org, 'relayed', keyed.url)
      await data(await setKey(org, created.id, AGENT_KEY))
      expect((await data<ProbeView>(await probe(org, created.id))).ok).toBe(true)
      return { org, id: created.id }
    }

    test("message/send through gw reaches the agent with the agent's key, and the call is in the log", async () => {
      const { org, id } = await registered()
      const before = keyed.calls.length
      const response = await relay(org.apiKey, id, rpc('message/send', 'hello', 'call-1'))
      expect(response.status).toBe(200)
      const answer = (await response.json()) as RpcAnswer
      expect(answer).toMatchObject({
        jsonrpc: '2.0',
        id: 'call-1',
        result: { kind: 'message', parts: [{ text: 'echo: hello' }] },
      })
      const sent = keyed.calls.slice(before)
      expect(sent).toHaveLength(1)
      expect(sent[0]).toMatchObject({ method: 'message/send', authorization: `Bearer ${AGENT_KEY}` })
      // The caller's gw key is not passed on to the agent.
      expect(JSON.stringify(sent)).not.toContain(org.apiKey)

      expect(await calls(org)).toEqual([
        expect.objectContaining({ agentId: id, agentName: 'relayed', skill: 'message/send', status: 'success', error: null }),
      ])
    })

    test('message/stream is relayed as server-sent events, each as the agent sent it', async () => {
      const { org, id } = await registered()
      const response = await relay(org.apiKey, id, rpc('message/stream', 'streamed', 7), { accept: 'text/event-stream' })
      expect(response.status).toBe(200)
      expect(response.headers.get('content-type')).toStartWith('text/event-stream')
      const events = (await response.text())
        .split('\n\n')
        .filter((frame) => frame.startsWith('data: '))
        .map((frame) => JSON.parse(frame.slice('data: '.length)) as { id: number; result: { kind: string; final?: boolean } })
      expect(events.map((e) => e.result.kind)).toEqual(['task', 'status-update', 'artifact-update', 'status-update'])
      expect(events.every((e) => e.id === 7)).toBe(true)
      expect(events.at(-1)?.result.final).toBe(true)
      for (let i = 0; i < 50 && (await calls(org)).length === 0; i++) await Bun.sleep(10)
      expect(await calls(org)).toEqual([expect.objectContaining({ skill: 'message/stream', status: 'success' })])
    })

    test("the SDK's client, pointed at gw, reads the card through gw, gets the echo and reads the stream", async () => {
      const { org, id } = await registered()
      const served = serveHarness(h)
      try {
        const sent: Array<{ url: string; authorization: string | null }> = []
        // The client's fetch adds the caller's gw key, as an A2A client configured for gw's card would.
        const withKey = ((input: string | URL | Request, init?: RequestInit) => {
          const headers = new Headers(init?.headers)
          headers.set('authorization', `Bearer ${org.apiKey}`)
          sent.push({ url: String(input instanceof Request ? input.url : input), authorization: headers.get('authorization') })
          return fetch(input, { ...init, headers })
        }) as typeof fetch
        const factory = new ClientFactory(
          ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
            transports: [new JsonRpcTransportFactory({ fetchImpl: withKey })],
            cardResolver: new DefaultAgentCardResolver({ fetchImpl: withKey }),
          }),
        )
        const relayUrl = `${served.url}/a2a/${id}`
        // The SDK resolves the card's name against the base as a URL does: an agent below the root needs the trailing slash.
        const client = await factory.createFromUrl(`${relayUrl}/`)
        // The card came through gw: its address is gw's relay, its security gw's; the agent's address is nowhere.
        const card = await client.getAgentCard()
        expect(card).toMatchObject({ name: 'Keyed Agent', url: relayUrl, preferredTransport: 'JSONRPC', security: [{ gw: [] }] })
        expect(JSON.stringify(card)).not.toContain(keyed.url)

        const before = keyed.calls.length
        const answer = await client.sendMessage({
          message: {
            kind: 'message',
            messageId: crypto.randomUUID(),
            role: 'user',
            parts: [{ kind: 'text', text: 'from the SDK' }],
          },
        })
        expect(answer.kind).toBe('message')
        expect((answer as Message).parts).toEqual([{ kind: 'text', text: 'echo: from the SDK' }])

        const events: Array<{ kind: string; state?: string; text?: string }> = []
        for await (const event of client.sendMessageStream({
          message: {
            kind: 'message',
            messageId: crypto.randomUUID(),
            role: 'user',
            parts: [{ kind: 'text', text: 'streamed by the SDK' }],
          },
        })) {
          if (event.kind === 'task' || event.kind === 'status-update')
            events.push({ kind: event.kind, state: event.status.state })
          else if (event.kind === 'artifact-update')
            events.push({ kind: event.kind, text: event.artifact.parts.map((p) => (p.kind === 'text' ? p.text : '')).join('') })
          else events.push({ kind: event.kind })
        }
        expect(events).toEqual([
          { kind: 'task', state: 'submitted' },
          { kind: 'status-update', state: 'working' },
          { kind: 'artifact-update', text: 'echo: streamed by the SDK' },
          { kind: 'status-update', state: 'completed' },
        ])

        // Everything the client sent went to gw with the gw key; the agent got its own key, never the gw key.
        expect(sent.length).toBeGreaterThanOrEqual(3)
        expect(sent.every((r) => r.url.startsWith(relayUrl) && r.authorization === `Bearer ${org.apiKey}`)).toBe(true)
        const reached = keyed.calls.slice(before)
        expect(reached.map((c) => [c.method, c.authorization])).toEqual([
          ['message/send', `Bearer ${AGENT_KEY}`],
          ['message/stream', `Bearer ${AGENT_KEY}`],
        ])
        expect(JSON.stringify(reached)).not.toContain(org.apiKey)
        for (let i = 0; i < 50 && (await calls(org)).length < 2; i++) await Bun.sleep(10)
        expect((await calls(org)).map((c) => [c.skill, c.status]).sort()).toEqual([
          ['message/send', 'success'],
          ['message/stream', 'success'],
        ])
      } finally {
        await served.stop()
      }
    })

    test('the card is answered with gw as its address and gw as its security', async () => {
      const { org, id } = await registered()
      const response = await h.request('GET', `/a2a/${id}/.well-known/agent-card.json`, { token: org.apiKey })
      expect(response.status).toBe(200)
      const card = (await response.json()) as Record<string, unknown>
      expect(card).toMatchObject({ name: 'Keyed Agent', url: `http://localhost/a2a/${id}`, security: [{ gw: [] }] })
      expect(JSON.stringify(card)).not.toContain(keyed.url)
      expect((await h.request('GET', `/a2a/${id}/.well-known/agent-card.json`)).status).toBe(401)
    })

    test('a deny rule on the agent refuses with 403 access_denied in JSON-RPC, and the agent is not called', async () => {
      const { org, id } = await registered()
      const at = new Date()
      await h.store.org(org.orgId).accessRules.create({
        id: crypto.randomUUID(),
        subjectKind: 'org',
        subjectId: '',
        resourceKind: 'agent',
        resourceId: 'relay*',
        effect: 'deny',
        reason: 'no agents here',
        createdAt: at,
        updatedAt: at,
      })
      await h.services.accessPolicies.changed(org.orgId)
      const before = keyed.calls.length
      const response = await relay(org.apiKey, id, rpc('message/send', 'denied', 3))
      expect(response.status).toBe(403)
      const answer = (await response.json()) as RpcAnswer
      expect(answer).toMatchObject({ jsonrpc: '2.0', id: 3, error: { data: { code: 'access_denied' } } })
      expect(answer.error?.message).toContain('agent relayed is denied')
      expect(keyed.calls.length).toBe(before)
      expect((await h.request('GET', `/a2a/${id}/.well-known/agent-card.json`, { token: org.apiKey })).status).toBe(403)
      expect(await calls(org)).toEqual([expect.objectContaining({ status: 'error', skill: 'message/send' })])
    })

    test("another organisation's key cannot call the agent: 404, and the agent is not called", async () => {
      const { id } = await registered()
      const intruder = await h.org()
      const before = keyed.calls.length
      const response = await relay(intruder.apiKey, id, rpc('message/send', 'intruding'))
      expect(response.status).toBe(404)
      expect(((await response.json()) as RpcAnswer).error?.data.code).toBe('not_found')
      expect(keyed.calls.length).toBe(before)
      expect(await calls(intruder)).toEqual([])
    })

    test('no credential is 401, and a body that is not JSON-RPC is 400, both in JSON-RPC', async () => {
      const { org, id } = await registered()
      const before = keyed.calls.length
      const anonymous = await relay(undefined, id, rpc('message/send', 'anon'))
      expect(anonymous.status).toBe(401)
      expect(((await anonymous.json()) as RpcAnswer).error?.data.code).toBe('unauthorized')
      const notJson = await relay(org.apiKey, id, 'not json', { 'content-type': 'application/json' })
      expect(notJson.status).toBe(400)
      expect(((await notJson.json()) as RpcAnswer).error?.code).toBe(-32700)
      const notRpc = await relay(org.apiKey, id, { method: 'message/send' })
      expect(notRpc.status).toBe(400)
      expect(((await notRpc.json()) as RpcAnswer).error?.code).toBe(-32600)
      expect(keyed.calls.length).toBe(before)
    })

    test('a JSON-RPC error in a stream is passed on, and the call is recorded as an error', async () => {
      const { org, id } = await registered()
      const response = await relay(org.apiKey, id, rpc('message/stream', 'fail', 9), { accept: 'text/event-stream' })
      expect(response.status).toBe(200)
      expect(await response.text()).toContain('the agent gave up')
      for (let i = 0; i < 50 && (await calls(org)).length === 0; i++) await Bun.sleep(10)
      expect(await calls(org)).toEqual([expect.objectContaining({ status: 'error', error: 'the agent gave up' })])
    })

    test('the global rate limit applies to relayed calls: 429 in JSON-RPC with Retry-After, the agent not called', async () => {
      const { org, id } = await registered()
      const limited = await createHarness({
        dialect,
        database: h,
        egress: new EgressPolicy({ enabled: true, allow: LOOPBACK }),
        globalRateLimit: { requests: 2, windowSeconds: 60 },
      })
      const before = keyed.calls.length
      const statuses: number[] = []
      for (let i = 0; i < 3; i++) {
        const response = await limited.request('POST', `/a2a/${id}`, { token: org.apiKey, body: rpc('message/send', `n${i}`, i) })
        statuses.push(response.status)
        if (response.status === 429) {
          expect(response.headers.get('retry-after')).toMatch(/^[0-9]+$/)
          expect(((await response.json()) as RpcAnswer).error?.data.code).toBe('rate_limited')
        } else await response.arrayBuffer()
      }
      expect(statuses).toEqual([200, 200, 429])
      expect(keyed.calls.length).toBe(before + 2)
      await limited.close()
    })

    test('the egress policy is asked again when the call is made: an address no longer allowed is refused', async () => {
      const { org, id } = await registered()
      const before = keyed.calls.length
      const response = await strict.request('POST', `/a2a/${id}`, { token: org.apiKey, body: rpc('message/send', 'refused') })
      expect(response.status).toBe(502)
      expect(((await response.json()) as RpcAnswer).error?.message).toContain('egress policy')
      expect(keyed.calls.length).toBe(before)
      const off = await createHarness({ dialect, database: h, egress: new EgressPolicy({ enabled: false }) })
      const disabled = await off.request('POST', `/a2a/${id}`, { token: org.apiKey, body: rpc('message/send', 'off') })
      expect(disabled.status).toBe(409)
      expect(((await disabled.json()) as RpcAnswer).error?.data.code).toBe('egress_disabled')
      expect(keyed.calls.length).toBe(before)
      await off.close()
    })

    test('an agent that does not answer in time is a 504 in JSON-RPC, recorded as an error', async () => {
      const silent = await startFakeA2aAgent({ hang: true })
      try {
        const org = await h.org()
        const created = await made(org, 'silent', silent.url)
        // The relay as the app builds it, with a time limit a test can wait for.
        const relay = new A2aRelay({
          store: h.store,
          authenticator: h.services.authenticator,
          vault: new Vault(TEST_SECRET),
          egress: new EgressPolicy({ enabled: true, allow: LOOPBACK }),
          access: h.services.accessPolicies,
          limiter: new RateLimiter(new MemoryLimiterStore(), { requests: 100, windowSeconds: 60 }, { rulesFor: async () => [] }),
          log: silentLogger,
          maxBodyBytes: 1024 * 1024,
          timeoutMs: 200,
        })
        const response = await relay.call(
          new Request(`http://localhost/a2a/${created.id}`, {
            method: 'POST',
            headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/json' },
            body: JSON.stringify(rpc('message/send', 'anyone there?')),
          }),
          created.id,
        )
        expect(response.status).toBe(504)
        expect(((await response.json()) as RpcAnswer).error?.data.code).toBe('upstream_timeout')
        expect(silent.calls).toHaveLength(1)
        expect(await calls(org)).toEqual([
          expect.objectContaining({ status: 'error', error: 'the agent did not answer within 0.2 s' }),
        ])
      } finally {
        await silent.close()
      }
    })

    test('an agent answering 401 to its key is a 502 in JSON-RPC, recorded as an error', async () => {
      const org = await h.org()
      const created = await made(org, 'unkeyed', keyed.url)
      const response = await relay(org.apiKey, created.id, rpc('message/send', 'no key'))
      expect(response.status).toBe(502)
      expect(((await response.json()) as RpcAnswer).error?.message).toContain('HTTP 401')
      expect(await calls(org)).toEqual([expect.objectContaining({ status: 'error', error: 'the agent answered HTTP 401' })])
    })
  })
})
