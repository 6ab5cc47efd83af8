import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { McpError } from '@modelcontextprotocol/sdk/types.js'
import { EgressPolicy, parseAllowList } from '../src/egress/policy'
import { MAX_MCP_BODY_BYTES, MCP_ERRORS } from '../src/mcp/gateway'
import { type FakeMcpServer, startFakeMcpServer } from './support/fake-mcp-server'
import { createHarness, DIALECTS, type Harness, type Org } from './support/harness'
import { serveHarness } from './support/serve'

/**
 * gw as an MCP server: the SDK's own client at `/mcp` lists the organisation's servers' tools under
 * `<server>__<tool>` and calls them through gw, which holds each call to the server's globs, the access
 * rules, the budgets and the tool rates, and writes it to the tool-call log. The fake server records
 * what reached it, so a refusal is seen never to leave gw.
 */

const TOKEN = 'upstream-token-0123456789-secret'
const LOOPBACK = parseAllowList('127.0.0.1') as NonNullable<ReturnType<typeof parseAllowList>>

interface ToolCallView {
  serverId: string
  serverName: string
  toolName: string
  status: string
  cost: number | null
  latencyMs: number | null
  apiKeyId: string | null
  error: string | null
}

const data = async <T>(response: Response, status = 200): Promise<T> => {
  const text = await response.text()
  expect(`${response.status} ${text}`).toStartWith(`${status} `)
  return (JSON.parse(text) as { data: T }).data
}

let fake: FakeMcpServer
beforeAll(() => {
  fake = startFakeMcpServer({ name: 'Fake Tools', token: TOKEN })
})
afterAll(async () => {
  await fake.close()
})

describe.each(DIALECTS)('gw as an MCP server on %s', (dialect) => {
  let h: Harness
  let served: { url: string; stop(): Promise<void> }
  const clients: Client[] = []
  beforeAll(async () => {
    h = await createHarness({ dialect, egress: new EgressPolicy({ enabled: true, allow: LOOPBACK }) })
    served = serveHarness(h)
  })
  afterAll(async () => {
    for (const client of clients) await client.close().catch(() => undefined)
    await served.stop()
    await h.close()
  })

  const connect = async (key: string) => {
    const client = new Client({ name: 'test', version: '1.0.0' })
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${served.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
      }),
    )
    clients.push(client)
    return client
  }

  const register = async (org: Org, name: string, extra: Record<string, unknown> = {}) =>
    data<{ id: string; name: string }>(
      await h.request('POST', '/v1/mcp/servers', {
        token: org.ownerSession,
        body: { name, url: fake.url, transport: 'streamable_http', auth: { kind: 'bearer', token: TOKEN }, ...extra },
      }),
      201,
    )

  const deny = async (org: Org, resourceKind: 'mcp_tool' | 'mcp_server', resourceId: string) => {
    const now = new Date()
    await h.store.org(org.orgId).accessRules.create({
      id: crypto.randomUUID(),
      subjectKind: 'org',
      subjectId: '',
      resourceKind,
      resourceId,
      effect: 'deny',
      reason: 'not for us',
      createdAt: now,
      updatedAt: now,
    })
    await h.services.accessPolicies.changed(org.orgId)
  }

  /** An organisation with `tools` (its `add` denied by toolDeny) and `more` (its `echo` denied by an access rule). */
  const world = async () => {
    const org = await h.org('growth')
    const tools = await register(org, 'tools', { toolDeny: ['ad*'] })
    const more = await register(org, 'more')
    await deny(org, 'mcp_tool', 'more__echo')
    return { org, tools, more }
  }

  const toolCalls = async (org: Org) =>
    (await data<{ calls: ToolCallView[] }>(await h.request('POST', '/v1/mcp/tool-calls', { token: org.ownerSession, body: {} })))
      .calls

  const refusal = async (work: Promise<unknown>) => {
    const error = await work.then(
      () => undefined,
      (thrown: unknown) => thrown,
    )
    expect(error).toBeInstanceOf(McpError)
    return error as McpError
  }

  test("lists the organization's tools as <server>__<tool>, less those its globs and access rules deny", async () => {
    const { org } = await world()
    const client = await connect(org.apiKey)
    expect(client.getServerVersion()?.name).toBe('gw')
    const { tools } = await client.listTools()
    expect(tools.map((tool) => tool.name).sort()).toEqual(['more__add', 'tools__echo'])
    const echo = tools.find((tool) => tool.name === 'tools__echo')
    expect(echo?.description).toBe('Answers the text it was given')
    expect(echo?.inputSchema).toMatchObject({ type: 'object', required: ['text'] })
    // The upstream was asked with the registration's own token.
    expect(fake.received.some((request) => request.authorization === `Bearer ${TOKEN}`)).toBe(true)
  })

  test('a disabled server, or one that cannot be reached, is left out; the rest is listed', async () => {
    const org = await h.org('growth')
    await register(org, 'tools')
    const off = await register(org, 'off')
    await data(await h.request('PATCH', `/v1/mcp/servers/${off.id}`, { token: org.ownerSession, body: { enabled: false } }))
    await register(org, 'gone', { url: 'http://127.0.0.1:9/mcp' })
    const { tools } = await (await connect(org.apiKey)).listTools()
    expect(tools.map((tool) => tool.name).sort()).toEqual(['tools__add', 'tools__echo'])
  })

  test('a tool denied by the globs or an access rule, or unknown, is refused without reaching the upstream', async () => {
    const { org } = await world()
    const client = await connect(org.apiKey)
    fake.reset()
    const byGlob = await refusal(client.callTool({ name: 'tools__add', arguments: { a: 1, b: 2 } }))
    expect(byGlob.code).toBe(MCP_ERRORS.refused)
    expect(byGlob.message).toContain('not offered')
    const byRule = await refusal(client.callTool({ name: 'more__echo', arguments: { text: 'hi' } }))
    expect(byRule.code).toBe(MCP_ERRORS.refused)
    expect(byRule.message).toContain('denied by access rule')
    expect(byRule.message).toContain('not for us')
    for (const name of [
      'nope__echo',
      'echo',
      '__echo',
      'tools__',
      'tools__ec\u0000ho',
      `tools__${'e'.repeat(300)}`,
      'tools__\ud800',
    ]) {
      const unknown = await refusal(client.callTool({ name, arguments: {} }))
      expect(unknown.message).toContain('unknown tool')
    }
    expect(fake.rpcMethods()).not.toContain('tools/call')
    expect(await toolCalls(org)).toEqual([])
  })

  test('a call is relayed with the credential, priced by its tool rate, and written to the tool-call log', async () => {
    const { org, tools } = await world()
    await data(
      await h.request('PUT', '/v1/tool-rates', {
        token: org.ownerSession,
        body: { serverId: tools.id, tool: 'echo', usdPerCall: 0.01 },
      }),
    )
    const client = await connect(org.apiKey)
    fake.reset()
    const result = await client.callTool({ name: 'tools__echo', arguments: { text: 'hello through gw' } })
    expect(result.content).toEqual([{ type: 'text', text: 'hello through gw' }])
    expect(fake.rpcMethods()).toContain('tools/call')
    expect(fake.received.every((request) => request.authorization === `Bearer ${TOKEN}`)).toBe(true)
    // A tool with no rate is free.
    await client.callTool({ name: 'more__add', arguments: { a: 2, b: 3 } })

    const calls = await toolCalls(org)
    expect(calls).toHaveLength(2)
    expect(calls.find((call) => call.toolName === 'echo')).toMatchObject({
      serverId: tools.id,
      serverName: 'tools',
      status: 'success',
      cost: 0.01,
      error: null,
      apiKeyId: expect.any(String),
    })
    expect(calls.find((call) => call.toolName === 'add')).toMatchObject({ serverName: 'more', status: 'success', cost: 0 })
    const summary = await data<{ calls: number; cost: number }>(
      await h.request('POST', '/v1/mcp/summary', { token: org.ownerSession, body: {} }),
    )
    expect(summary).toMatchObject({ calls: 2, cost: 0.01 })
  })

  test('a priced call counts against a usd budget: past it the call is refused before the upstream', async () => {
    const { org, tools } = await world()
    await data(
      await h.request('PUT', '/v1/tool-rates', {
        token: org.ownerSession,
        body: { serverId: tools.id, tool: '*', usdPerCall: 0.01 },
      }),
    )
    await data(
      await h.request('PUT', '/v1/budget/window-limit', {
        token: org.ownerSession,
        body: { scope: { kind: 'org' }, metric: 'usd', limit: 0.015, window: 'day' },
      }),
    )
    const client = await connect(org.apiKey)
    await client.callTool({ name: 'tools__echo', arguments: { text: 'first' } })
    fake.reset()
    const over = await refusal(client.callTool({ name: 'tools__echo', arguments: { text: 'second' } }))
    expect(over.code).toBe(MCP_ERRORS.limited)
    expect(over.message).toContain('budget exceeded')
    expect(fake.rpcMethods()).not.toContain('tools/call')
    expect((await toolCalls(org)).map((call) => call.cost)).toEqual([0.01])
  })

  test("a budget's counter is counted in from the tool-call log: spend made before it existed still counts", async () => {
    const { org, tools } = await world()
    // A call logged before the limit existed (another instance's, or before a restart).
    await h.store.mcpToolCalls.add({
      id: crypto.randomUUID(),
      orgId: org.orgId,
      serverId: tools.id,
      serverName: 'tools',
      toolName: 'echo',
      userId: null,
      apiKeyId: null,
      status: 'success',
      latencyMs: 1,
      costNano: 10_000_000,
      error: null,
      createdAt: new Date(),
    })
    await data(
      await h.request('PUT', '/v1/tool-rates', { token: org.ownerSession, body: { serverId: '*', tool: '*', usdPerCall: 0.01 } }),
    )
    await data(
      await h.request('PUT', '/v1/budget/window-limit', {
        token: org.ownerSession,
        body: { scope: { kind: 'org' }, metric: 'usd', limit: 0.015, window: 'day' },
      }),
    )
    const client = await connect(org.apiKey)
    fake.reset()
    const over = await refusal(client.callTool({ name: 'tools__echo', arguments: { text: 'x' } }))
    expect(over.message).toContain('budget exceeded')
    expect(fake.rpcMethods()).not.toContain('tools/call')
  })

  test('the global window limit refuses a call past it before the upstream, as it does a model call', async () => {
    const limited = await createHarness({
      database: h,
      egress: new EgressPolicy({ enabled: true, allow: LOOPBACK }),
      globalRateLimit: { requests: 2, windowSeconds: 60 },
    })
    const server = serveHarness(limited)
    try {
      const org = await limited.org('growth')
      await data(
        await limited.request('POST', '/v1/mcp/servers', {
          token: org.ownerSession,
          body: { name: 'tools', url: fake.url, transport: 'streamable_http', auth: { kind: 'bearer', token: TOKEN } },
        }),
        201,
      )
      const client = new Client({ name: 'test', version: '1.0.0' })
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${org.apiKey}` } },
        }),
      )
      clients.push(client)
      for (let i = 0; i < 2; i++) await client.callTool({ name: 'tools__echo', arguments: { text: `${i}` } })
      fake.reset()
      const over = await refusal(client.callTool({ name: 'tools__echo', arguments: { text: 'third' } }))
      expect(over.code).toBe(MCP_ERRORS.limited)
      expect(over.message).toContain('rate limit exceeded')
      expect((over.data as { retryAfterSeconds?: number }).retryAfterSeconds).toBeGreaterThan(0)
      expect(fake.rpcMethods()).not.toContain('tools/call')
    } finally {
      await server.stop()
      await limited.close()
    }
  })

  test('a call the upstream fails is logged as an error and charged nothing', async () => {
    const org = await h.org('growth')
    const server = await register(org, 'tools')
    await data(
      await h.request('PUT', '/v1/tool-rates', { token: org.ownerSession, body: { serverId: '*', tool: '*', usdPerCall: 0.5 } }),
    )
    const client = await connect(org.apiKey)
    await client.listTools()
    // The registration's URL moves to where nothing answers; its tool list is asked again, the call fails.
    await data(
      await h.request('PATCH', `/v1/mcp/servers/${server.id}`, {
        token: org.ownerSession,
        body: { url: 'http://127.0.0.1:9/mcp' },
      }),
    )
    const result = await client.callTool({ name: 'tools__echo', arguments: { text: 'x' } })
    expect(result.isError).toBe(true)
    const [call] = await toolCalls(org)
    expect(call).toMatchObject({ status: 'error', cost: 0, error: expect.any(String) })
  })

  test('no key is 401 and a key without the gateway scope 403, in JSON-RPC; GET and DELETE are 405', async () => {
    const org = await h.org('growth')
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    }
    const post = (headers: Record<string, string>) =>
      fetch(`${served.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body: JSON.stringify(initialize),
      })
    const none = await post({})
    expect(none.status).toBe(401)
    expect(((await none.json()) as { error: { code: number } }).error.code).toBe(MCP_ERRORS.unauthorized)
    expect((await post({ authorization: 'Bearer gw-sk-not-a-key' })).status).toBe(401)

    const narrow = await data<{ key: string }>(
      await h.request('POST', '/v1/api-keys', { token: org.ownerSession, body: { name: 'reader', scopes: ['traffic.read'] } }),
      201,
    )
    const refused = await post({ authorization: `Bearer ${narrow.key}` })
    expect(refused.status).toBe(403)
    const body = (await refused.json()) as { jsonrpc: string; error: { message: string } }
    expect(body.jsonrpc).toBe('2.0')
    expect(body.error.message).toContain('gateway')

    expect((await post({ authorization: `Bearer ${org.apiKey}` })).status).toBe(200)
    for (const method of ['GET', 'DELETE']) {
      const answer = await fetch(`${served.url}/mcp`, {
        method,
        headers: { authorization: `Bearer ${org.apiKey}`, accept: 'text/event-stream' },
      })
      expect(answer.status).toBe(405)
      expect(answer.headers.get('allow')).toBe('POST')
    }
  })

  test('a body that is not JSON is a 400 parse error, one over 4 MiB a 413, each in JSON-RPC', async () => {
    const org = await h.org('growth')
    const post = (body: string) =>
      fetch(`${served.url}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${org.apiKey}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body,
      })
    const garbled = await post('{"jsonrpc": "2.0",')
    expect(garbled.status).toBe(400)
    expect(((await garbled.json()) as { error: { code: number } }).error.code).toBe(-32700)
    const huge = await post(
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(MAX_MCP_BODY_BYTES) } }),
    )
    expect(huge.status).toBe(413)
    expect(((await huge.json()) as { jsonrpc: string }).jsonrpc).toBe('2.0')
  })

  test("another organization's servers are never listed and cannot be called", async () => {
    const { org } = await world()
    const other = await h.org('growth')
    await register(other, 'theirs')
    const client = await connect(org.apiKey)
    const { tools } = await client.listTools()
    expect(tools.some((tool) => tool.name.startsWith('theirs__'))).toBe(false)
    fake.reset()
    const refused = await refusal(client.callTool({ name: 'theirs__echo', arguments: { text: 'x' } }))
    expect(refused.message).toContain('unknown tool')
    expect(fake.rpcMethods()).not.toContain('tools/call')
    expect(await toolCalls(other)).toEqual([])
    // Their own key sees their own server.
    const theirs = await (await connect(other.apiKey)).listTools()
    expect(theirs.tools.map((tool) => tool.name).sort()).toEqual(['theirs__add', 'theirs__echo'])
  })
})
