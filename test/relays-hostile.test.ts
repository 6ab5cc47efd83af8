import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { EgressPolicy, parseAllowList } from '../src/egress/policy'
import { type FakeA2aAgent, startFakeA2aAgent } from './support/fake-a2a-agent'
import { type FakeMcpServer, startFakeMcpServer } from './support/fake-mcp-server'
import { createHarness, type Harness, type Org } from './support/harness'
import { expandRaw, HOSTILE_STRINGS, hostileJson, toJsonText } from './support/hostile-values'

/**
 * The two relays outside /v1, under hostile bodies: gw's MCP endpoint and the A2A relay answer every
 * malformed, oversized, deep or wrongly typed JSON-RPC message with a 4xx (or a JSON-RPC error in a
 * 200, as that protocol answers a method's failure), never a 5xx, and keep serving afterwards.
 */

const LOOPBACK = parseAllowList('127.0.0.1') as NonNullable<ReturnType<typeof parseAllowList>>
const seed = process.env.GW_FUZZ_SEED === undefined ? undefined : Number(process.env.GW_FUZZ_SEED)

let h: Harness
let org: Org
let mcp: FakeMcpServer
let agent: FakeA2aAgent
let agentId: string

beforeAll(async () => {
  mcp = startFakeMcpServer({ name: 'Fake Tools' })
  agent = await startFakeA2aAgent({ name: 'Echo Agent' })
  h = await createHarness({ egress: new EgressPolicy({ enabled: true, allow: LOOPBACK }) })
  org = await h.org('growth')
  const server = await h.request('POST', '/v1/mcp/servers', {
    token: org.ownerSession,
    body: { name: 'tools', url: mcp.url, transport: 'streamable_http', auth: { kind: 'none' } },
  })
  expect(server.status).toBe(201)
  const registered = await h.request('POST', '/v1/a2a/agents', {
    token: org.ownerSession,
    body: { name: 'echo', url: agent.url },
  })
  expect(registered.status).toBe(201)
  agentId = ((await registered.json()) as { data: { id: string } }).data.id
})
afterAll(async () => {
  await h.close()
  await mcp.close()
  await agent.close()
})

const headers = { accept: 'application/json, text/event-stream' }
const send = (path: string, body: string) => h.request('POST', path, { token: org.apiKey, body, headers })

/** Bodies that have broken JSON-RPC servers: not JSON, the wrong shapes, batches, huge and deep values. */
const RAW_BODIES: readonly string[] = [
  '',
  'not json',
  '{',
  'null',
  '[]',
  '[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]',
  '{"jsonrpc":"2.0"}',
  '{"jsonrpc":"1.0","id":1,"method":"tools/list"}',
  '{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}',
  '{"jsonrpc":"2.0","id":1,"method":42}',
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"x"}',
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":42}}',
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tools__echo","arguments":[1,2]}}',
  '{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":null}}',
  '«gw:deepArray»',
  '«gw:deepestObject»',
  '{"jsonrpc":"2.0","id":1,"method":"«gw:huge»"}',
  ...HOSTILE_STRINGS.map((text) => JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: text } })),
]

async function expectNo5xx(path: string, body: string): Promise<void> {
  const response = await send(path, expandRaw(body))
  const text = await response.text()
  // Thrown rather than expected, so the failure names the body that broke it.
  if (response.status >= 500)
    throw new Error(`${path} answered ${response.status} to ${body.slice(0, 80)}: ${text.slice(0, 200)}`)
  expect(response.status).toBeGreaterThanOrEqual(200)
}

describe('the relays under hostile bodies', () => {
  test('gw /mcp: the known hostile bodies', async () => {
    for (const body of RAW_BODIES) await expectNo5xx('/mcp', body)
  })

  test('the A2A relay: the known hostile bodies', async () => {
    for (const body of RAW_BODIES) await expectNo5xx(`/a2a/${agentId}`, body)
  })

  test('random JSON-RPC messages with hostile params, on both', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('/mcp', 'a2a'),
        fc.constantFrom('tools/list', 'tools/call', 'initialize', 'message/send', 'message/stream', 'tasks/get'),
        hostileJson,
        async (target, method, params) => {
          const path = target === 'a2a' ? `/a2a/${agentId}` : target
          await expectNo5xx(path, toJsonText({ jsonrpc: '2.0', id: 1, method, params }))
        },
      ),
      { numRuns: 60, ...(seed === undefined ? {} : { seed }) },
    )
  })

  test('both still serve afterwards', async () => {
    const listed = await send('/mcp', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }))
    expect(listed.status).toBe(200)
    expect(await listed.text()).toContain('tools__echo')
    const sent = await send(
      `/a2a/${agentId}`,
      JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'message/send',
        params: { message: { kind: 'message', messageId: 'm-1', role: 'user', parts: [{ kind: 'text', text: 'still here' }] } },
      }),
    )
    expect(sent.status).toBe(200)
    expect(await sent.text()).toContain('still here')
  })
})
