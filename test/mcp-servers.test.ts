import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { EgressPolicy, parseAllowList } from '../src/egress/policy'
import { PLATFORM_SERVERS } from '../src/mcp/catalogue'
import { snapshot } from './support/db-snapshot'
import { type FakeMcpServer, startFakeMcpServer, startFakeSseMcpServer } from './support/fake-mcp-server'
import { createHarness, DIALECTS, type Harness, type Org } from './support/harness'

/**
 * The MCP server registry (spec 4.6 `governance.write`; the lists `org.read`): registrations stored with
 * their token sealed, URLs held to the egress policy, a probe and a discovery through the MCP SDK against
 * a fake server built with the SDK's server side, and the platform catalogue switched on and off.
 */

interface ServerView {
  id: string
  name: string
  url: string
  transport: string
  auth: { kind: string; hint?: string }
  toolAllow: string[]
  toolDeny: string[]
  enabled: boolean
  platformServerId: string | null
  createdAt: string
  updatedAt: string
}
interface ProbeView {
  ok: boolean
  protocolVersion: string | null
  serverInfo: { name: string; version: string } | null
  tools: Array<{ name: string; description: string | null }>
  latencyMs: number
  error: string | null
}
interface Failure {
  code: string
  message: string
}

const PATH = '/v1/mcp/servers'
const TOKEN = 'mcp-token-0123456789-secret-value'
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

let open: FakeMcpServer
let guarded: FakeMcpServer
let sse: FakeMcpServer
beforeAll(async () => {
  sse = await startFakeSseMcpServer()
  open = startFakeMcpServer({ name: 'Fake Tools' })
  guarded = startFakeMcpServer({
    name: 'Guarded Tools',
    token: TOKEN,
    protectedResource: { resource: 'http://127.0.0.1/mcp', authorization_servers: ['https://auth.example.test'] },
  })
})
afterAll(async () => {
  await sse.close()
  await open.close()
  await guarded.close()
})

describe.each(DIALECTS)('the MCP server registry on %s', (dialect) => {
  let h: Harness
  let strict: Harness
  const clock = Date.parse('2026-06-01T12:00:00.000Z')
  beforeAll(async () => {
    h = await createHarness({ dialect, now: () => clock, egress: new EgressPolicy({ enabled: true, allow: LOOPBACK }) })
    // The default policy, over the same database: public https:// only.
    strict = await createHarness({ dialect, database: h, egress: new EgressPolicy({ enabled: true }) })
  })
  afterAll(async () => {
    await h.close()
  })

  const create = (org: Org, body: unknown, token = org.ownerSession, harness = h) =>
    harness.request('POST', PATH, { token, body })
  const patch = (org: Org, id: string, body: unknown, token = org.ownerSession) =>
    h.request('PATCH', `${PATH}/${id}`, { token, body })
  const remove = (org: Org, id: string, token = org.ownerSession) => h.request('DELETE', `${PATH}/${id}`, { token })
  const probe = (org: Org, id: string, token = org.ownerSession) => h.request('POST', `${PATH}/${id}/probe`, { token })
  const list = async (org: Org, token = org.ownerSession) => data<ServerView[]>(await h.request('GET', PATH, { token }))
  const rows = (org: Org) => h.store.org(org.orgId).mcpServers.list()
  const body = (name = 'tools', extra: Record<string, unknown> = {}) => ({
    name,
    url: open.url,
    transport: 'streamable_http',
    auth: { kind: 'none' },
    ...extra,
  })
  const bearer = (name = 'guarded') => body(name, { url: guarded.url, auth: { kind: 'bearer', token: TOKEN } })

  describe('the happy path', () => {
    test('create answers 201, lists it, changes it in place and deletes it', async () => {
      const org = await h.org()
      const created = await data<ServerView>(await create(org, body('tools', { toolAllow: ['echo', 'a*'] })), 201)
      expect(created).toEqual({
        id: expect.any(String),
        name: 'tools',
        url: open.url,
        transport: 'streamable_http',
        auth: { kind: 'none' },
        toolAllow: ['echo', 'a*'],
        toolDeny: [],
        enabled: true,
        platformServerId: null,
        createdAt: new Date(clock).toISOString(),
        updatedAt: new Date(clock).toISOString(),
      })
      expect(await list(org)).toEqual([created])

      const changed = await data<ServerView>(await patch(org, created.id, { enabled: false, toolDeny: ['add'], name: 'tools-2' }))
      expect(changed).toMatchObject({
        id: created.id,
        name: 'tools-2',
        enabled: false,
        toolAllow: ['echo', 'a*'],
        toolDeny: ['add'],
      })
      expect(await list(org)).toEqual([changed])

      expect(await data(await remove(org, created.id))).toEqual({ id: created.id, deleted: true })
      expect(await list(org)).toEqual([])
      await failure(await remove(org, created.id), 404)
    })

    test('a bearer token is stored sealed, answered only as a hint, and replaced or dropped by auth', async () => {
      const org = await h.org()
      const created = await data<ServerView>(await create(org, bearer()), 201)
      expect(created.auth).toEqual({ kind: 'bearer', hint: `${TOKEN.slice(0, 4)}…${TOKEN.slice(-4)}` })
      const [row] = await rows(org)
      expect(row?.sealedToken).toStartWith('v1.')
      expect(row?.sealedToken).not.toContain(TOKEN)

      const none = await data<ServerView>(await patch(org, created.id, { auth: { kind: 'none' } }))
      expect(none.auth).toEqual({ kind: 'none' })
      expect((await rows(org))[0]?.sealedToken).toBeNull()
    })

    test('a server registered without auth takes no credentials: stored and answered as none', async () => {
      const org = await h.org()
      const { auth: _, ...withoutAuth } = body('open-tools')
      const created = await data<ServerView>(await create(org, withoutAuth), 201)
      expect(created.auth).toEqual({ kind: 'none' })
      const [row] = await rows(org)
      expect([row?.authKind, row?.sealedToken, row?.tokenHint]).toEqual(['none', null, null])
      expect(await list(org)).toEqual([created])
      // And it is reached without one.
      expect((await data<ProbeView>(await probe(org, created.id))).ok).toBe(true)
    })
  })

  describe('bad input', () => {
    const cases: Array<[string, Record<string, unknown>]> = [
      ['a name with __', { name: 'my__tools' }],
      ['a name ending in _', { name: 'tools_' }],
      ['a name with capitals', { name: 'Tools' }],
      ['a name of 65 characters', { name: 'a'.repeat(65) }],
      ['a url that is not http(s)', { url: 'ftp://127.0.0.1/mcp' }],
      ['a url that is no URL', { url: 'http://' }],
      ['a url of 2049 characters', { url: `http://127.0.0.1/${'a'.repeat(2049 - 17)}` }],
      ['an unknown transport', { transport: 'websocket' }],
      ['a bearer without a token', { auth: { kind: 'bearer' } }],
      ['an unknown auth kind', { auth: { kind: 'oauth' } }],
      ['a token with a newline', { auth: { kind: 'bearer', token: 'abc\ndef' } }],
      ['101 allow globs', { toolAllow: Array.from({ length: 101 }, (_, i) => `tool-${i}`) }],
      ['a glob of 201 characters', { toolDeny: ['a'.repeat(201)] }],
      ['an unknown field', { extra: true }],
    ]
    for (const [what, change] of cases) {
      test(`${what} is 400 and stores nothing`, async () => {
        const org = await h.org()
        await failure(await create(org, body('tools', change)), 400)
        expect(await rows(org)).toEqual([])
      })
    }

    test('an empty change, or a bad one, is 400 and changes nothing', async () => {
      const org = await h.org()
      const created = await data<ServerView>(await create(org, body()), 201)
      const before = await rows(org)
      await failure(await patch(org, created.id, {}), 400)
      await failure(await patch(org, created.id, { name: 'a__b' }), 400)
      await failure(await patch(org, created.id, { url: 'http://10.1.2.3/mcp' }), 400)
      expect(await rows(org)).toEqual(before)
    })

    test('a second server of the same name is 409, by create or by rename', async () => {
      const org = await h.org()
      await data(await create(org, body('tools')), 201)
      const other = await data<ServerView>(await create(org, body('other')), 201)
      expect((await failure(await create(org, body('tools')), 409)).message).toContain('"tools"')
      await failure(await patch(org, other.id, { name: 'tools' }), 409)
      expect((await rows(org)).map((row) => row.name).sort()).toEqual(['other', 'tools'])
      // Another organisation may use the name.
      await data(await create(await h.org(), body('tools')), 201)
    })
  })

  describe('egress', () => {
    test('a URL the policy forbids is 400 naming why, and nothing is stored', async () => {
      const org = await h.org()
      const privateNet = await failure(await create(org, body('tools', { url: 'https://10.0.0.7/mcp' })), 400)
      expect(privateNet.message).toContain('private, loopback or link-local')
      const userinfo = await failure(await create(org, body('tools', { url: 'https://user:pw@mcp.example.test/mcp' })), 400)
      expect(userinfo.message).toContain('user name or password')
      expect(await rows(org)).toEqual([])
    })

    test('with the default policy a loopback URL is refused, and plain http too', async () => {
      const org = await strict.org()
      const loopback = await failure(await create(org, body(), org.ownerSession, strict), 400)
      expect(loopback.message).toMatch(/https:\/\/|loopback/)
      await failure(await create(org, body('tools', { url: 'https://127.0.0.1/mcp' }), org.ownerSession, strict), 400)
      expect(await rows(org)).toEqual([])
    })

    test('with outgoing calls switched off, a registration is 409', async () => {
      const off = await createHarness({ dialect, database: h, egress: new EgressPolicy({ enabled: false }) })
      const org = await off.org()
      expect(
        (await failure(await create(org, body('tools', { url: 'https://mcp.example.test/mcp' }), org.ownerSession, off), 409))
          .code,
      ).toBe('egress_disabled')
    })
  })

  describe('probe and discover', () => {
    test('a probe runs initialize and tools/list on the server and lists its tools', async () => {
      const org = await h.org()
      const created = await data<ServerView>(await create(org, bearer()), 201)
      guarded.reset()
      const result = await data<ProbeView>(await probe(org, created.id))
      expect(result).toEqual({
        ok: true,
        protocolVersion: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
        serverInfo: { name: 'Guarded Tools', version: '1.2.3' },
        tools: [
          { name: 'echo', description: 'Answers the text it was given' },
          { name: 'add', description: 'Adds two numbers' },
        ],
        latencyMs: expect.any(Number),
        error: null,
      })
      expect(guarded.rpcMethods()).toEqual(expect.arrayContaining(['initialize', 'tools/list']))
      // Every request it made carried the token.
      expect(guarded.received.every((request) => request.authorization === `Bearer ${TOKEN}`)).toBe(true)
    })

    test('a server on the older SSE transport is registered and probed over it', async () => {
      const org = await h.org()
      const created = await data<ServerView>(await create(org, body('legacy', { url: sse.url, transport: 'sse' })), 201)
      const result = await data<ProbeView>(await probe(org, created.id))
      expect(result).toMatchObject({ ok: true, serverInfo: { name: 'Fake SSE Tools' }, error: null })
      expect(result.tools.map((tool) => tool.name)).toEqual(['echo', 'add'])
    })

    test('a probe with a wrong token is ok: false with 200, saying the server refused it', async () => {
      const org = await h.org()
      const created = await data<ServerView>(
        await create(org, body('guarded', { url: guarded.url, auth: { kind: 'bearer', token: 'wrong-token-0123456789' } })),
        201,
      )
      const result = await data<ProbeView>(await probe(org, created.id))
      expect(result).toMatchObject({ ok: false, tools: [], protocolVersion: null })
      expect(result.error).toContain('401')
      expect(result.error).not.toContain('wrong-token')
    })

    test('a probe of a closed port is ok: false, quickly', async () => {
      const org = await h.org()
      const created = await data<ServerView>(await create(org, body('closed', { url: 'http://127.0.0.1:9/mcp' })), 201)
      const started = performance.now()
      const result = await data<ProbeView>(await probe(org, created.id))
      expect(performance.now() - started).toBeLessThan(3_000)
      expect(result.ok).toBe(false)
      expect(result.error).toEqual(expect.any(String))
    })

    test('a probe of a server whose address the policy now forbids is ok: false and reaches nothing', async () => {
      // Saved while the operator allowed loopback, as a row: the policy has narrowed since.
      const org = await strict.org()
      const at = new Date(clock)
      const created = { id: crypto.randomUUID() }
      await strict.store.org(org.orgId).mcpServers.create({
        ...created,
        name: 'tools',
        url: open.url,
        transport: 'streamable_http',
        authKind: 'none',
        sealedToken: null,
        tokenHint: null,
        toolAllow: [],
        toolDeny: [],
        enabled: true,
        platformServerId: null,
        createdAt: at,
        updatedAt: at,
      })
      open.reset()
      const probed = await strict.request('POST', `${PATH}/${created.id}/probe`, { token: org.ownerSession })
      const result = await data<ProbeView>(probed)
      expect(result.ok).toBe(false)
      expect(result.error).toContain('https://')
      expect(open.received).toEqual([])
    })

    test('discover answers a draft from the initialize answer, and stores nothing', async () => {
      const org = await h.org()
      const before = await snapshot(h.db)
      const draft = await data<Record<string, unknown>>(
        await h.request('POST', `${PATH}/discover`, { token: org.ownerSession, body: { url: open.url } }),
      )
      expect(draft).toEqual({
        name: 'fake-tools',
        url: open.url,
        transport: 'streamable_http',
        auth: { kind: 'none' },
        serverInfo: { name: 'Fake Tools', version: '1.2.3' },
        protocolVersion: expect.any(String),
        capabilities: { tools: {} },
        protectedResource: null,
        error: null,
      })
      const after = await snapshot(h.db)
      expect([...(after.get('mcp_servers') ?? [])]).toEqual([...(before.get('mcp_servers') ?? [])])
      // The draft can be saved as it is; a second draft then takes a free name.
      await data(await create(org, { name: draft.name, url: draft.url, transport: draft.transport, auth: draft.auth }), 201)
      const second = await data<{ name: string }>(
        await h.request('POST', `${PATH}/discover`, { token: org.ownerSession, body: { url: open.url } }),
      )
      expect(second.name).toBe('fake-tools-2')
    })

    test('discover of a server that answers 401 and publishes a protected resource drafts a bearer registration', async () => {
      const org = await h.org()
      const draft = await data<Record<string, unknown>>(
        await h.request('POST', `${PATH}/discover`, { token: org.ownerSession, body: { url: guarded.url } }),
      )
      expect(draft).toMatchObject({
        url: guarded.url,
        transport: 'streamable_http',
        auth: { kind: 'bearer' },
        serverInfo: null,
        protectedResource: { authorization_servers: ['https://auth.example.test'] },
        error: null,
      })
      expect(draft.name).toMatch(/^(?!.*__)[a-z0-9_-]{1,64}$/)
    })

    test('discover of a URL the policy forbids is 400', async () => {
      const org = await strict.org()
      await failure(await strict.request('POST', `${PATH}/discover`, { token: org.ownerSession, body: { url: open.url } }), 400)
    })
  })

  describe('the platform catalogue', () => {
    const put = (org: Org, id: string, body: unknown, token = org.ownerSession) =>
      h.request('PUT', `/v1/mcp/platform-servers/${id}`, { token, body })
    const noAuth = PLATFORM_SERVERS.find((entry) => entry.auth === 'none') as (typeof PLATFORM_SERVERS)[number]
    const withAuth = PLATFORM_SERVERS.find((entry) => entry.auth === 'bearer') as (typeof PLATFORM_SERVERS)[number]

    test('is listed, with no registration until one is enabled', async () => {
      const org = await h.org()
      const catalogue = await data<Array<{ id: string; registration: unknown }>>(
        await h.request('GET', '/v1/mcp/platform-servers', { token: org.ownerSession }),
      )
      expect(catalogue.map((entry) => entry.id)).toEqual(PLATFORM_SERVERS.map((entry) => entry.id))
      expect(catalogue.every((entry) => entry.registration === null)).toBe(true)
    })

    test('enable makes a registration from the entry; disable keeps it, disabled; enable again turns it back on', async () => {
      const org = await h.org()
      const enabled = await data<{ registration: ServerView }>(await put(org, noAuth.id, { enabled: true }))
      expect(enabled.registration).toMatchObject({
        name: noAuth.id,
        url: noAuth.url,
        transport: noAuth.transport,
        auth: { kind: 'none' },
        enabled: true,
        platformServerId: noAuth.id,
      })
      expect((await list(org)).map((server) => server.platformServerId)).toEqual([noAuth.id])
      const disabled = await data<{ registration: ServerView }>(await put(org, noAuth.id, { enabled: false }))
      expect(disabled.registration).toMatchObject({ id: enabled.registration.id, enabled: false })
      const again = await data<{ registration: ServerView }>(await put(org, noAuth.id, { enabled: true }))
      expect(again.registration).toMatchObject({ id: enabled.registration.id, enabled: true })
      expect(await rows(org)).toHaveLength(1)
    })

    test('an entry that needs a token is 400 without one; its token is sealed and shown as a hint', async () => {
      const org = await h.org()
      await failure(await put(org, withAuth.id, { enabled: true }), 400)
      expect(await rows(org)).toEqual([])
      const enabled = await data<{ registration: ServerView }>(
        await put(org, withAuth.id, { enabled: true, auth: { kind: 'bearer', token: TOKEN } }),
      )
      expect(enabled.registration.auth).toEqual({ kind: 'bearer', hint: `${TOKEN.slice(0, 4)}…${TOKEN.slice(-4)}` })
    })

    test('an entry whose name the organisation uses already is 409, and the other server is kept', async () => {
      const org = await h.org()
      const mine = await data<ServerView>(await create(org, body(noAuth.id)), 201)
      await failure(await put(org, noAuth.id, { enabled: true }), 409)
      expect(await list(org)).toEqual([mine])
    })

    test('disabling an entry never enabled stores nothing; an unknown entry is 404', async () => {
      const org = await h.org()
      expect(await data<{ registration: unknown }>(await put(org, noAuth.id, { enabled: false }))).toMatchObject({
        registration: null,
      })
      expect(await rows(org)).toEqual([])
      await failure(await put(org, 'no-such-server', { enabled: true }), 404)
      await failure(await put(org, noAuth.id, { enabled: 'yes' }), 400)
    })
  })

  describe('security', () => {
    test('the token never appears in an answer or in the audit log', async () => {
      const org = await h.org()
      const answers: string[] = []
      const keep = async (response: Response) => {
        const text = await response.text()
        answers.push(text)
        return JSON.parse(text) as { data: ServerView }
      }
      const { data: created } = await keep(await create(org, bearer()))
      await keep(await h.request('GET', PATH, { token: org.ownerSession }))
      await keep(await patch(org, created.id, { auth: { kind: 'bearer', token: TOKEN }, enabled: true }))
      await keep(await probe(org, created.id))
      await keep(await h.request('GET', '/v1/mcp/platform-servers', { token: org.ownerSession }))
      await keep(await create(org, bearer()))
      const withAuth = PLATFORM_SERVERS.find((entry) => entry.auth === 'bearer') as (typeof PLATFORM_SERVERS)[number]
      await keep(
        await h.request('PUT', `/v1/mcp/platform-servers/${withAuth.id}`, {
          token: org.ownerSession,
          body: { enabled: true, auth: { kind: 'bearer', token: TOKEN } },
        }),
      )
      for (const text of answers) expect(text).not.toContain(TOKEN)
      const audit = await h.store.org(org.orgId).audit.list(1000)
      expect(audit.length).toBeGreaterThanOrEqual(4)
      expect(JSON.stringify(audit)).not.toContain(TOKEN)
      expect(audit.map((entry) => entry.action)).toEqual(
        expect.arrayContaining([
          'POST /v1/mcp/servers',
          'PATCH /v1/mcp/servers/:id',
          'POST /v1/mcp/servers/:id/probe',
          'PUT /v1/mcp/platform-servers/:serverId',
        ]),
      )
    })

    test("another organisation's server is 404 on PATCH, DELETE and probe, changes nothing, and is absent from its list", async () => {
      const mine = await h.org()
      const theirs = await h.org()
      const created = await data<ServerView>(await create(theirs, bearer()), 201)
      const before = await rows(theirs)
      guarded.reset()
      await failure(await patch(mine, created.id, { enabled: false }), 404)
      await failure(await patch(mine, created.id, { name: 'taken-over' }), 404)
      await failure(await probe(mine, created.id), 404)
      await failure(await remove(mine, created.id), 404)
      expect(guarded.received).toEqual([])
      expect(await list(mine)).toEqual([])
      expect(await rows(theirs)).toEqual(before)
    })

    test('a role without governance.write is 403 on every write and can list', async () => {
      const org = await h.org()
      const created = await data<ServerView>(await create(org, body()), 201)
      const member = await h.member(org.orgId, 'member')
      const token = member.sessionToken
      await failure(await create(org, body('mine'), token), 403)
      await failure(await patch(org, created.id, { enabled: false }, token), 403)
      await failure(await remove(org, created.id, token), 403)
      await failure(await probe(org, created.id, token), 403)
      await failure(await h.request('POST', `${PATH}/discover`, { token, body: { url: open.url } }), 403)
      await failure(await h.request('PUT', '/v1/mcp/platform-servers/deepwiki', { token, body: { enabled: true } }), 403)
      expect((await list(org, token)).map((server) => server.id)).toEqual([created.id])
      // An API key holds Member's permissions at most: it lists, and writes nothing.
      expect((await list(org, org.apiKey)).map((server) => server.id)).toEqual([created.id])
      await failure(await create(org, body('by-key'), org.apiKey), 403)
      expect(await rows(org)).toHaveLength(1)
    })

    test('no key is 401', async () => {
      await failure(await h.request('GET', PATH), 401)
      await failure(await h.request('POST', PATH, { body: body() }), 401)
      await failure(await h.request('POST', `${PATH}/some-id/probe`), 401)
      await failure(await h.request('PUT', '/v1/mcp/platform-servers/deepwiki', { body: { enabled: true } }), 401)
    })
  })
})
