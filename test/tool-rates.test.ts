import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mostSpecific, type ToolRateRow } from '../src/store/repositories/tool-rates'
import { createHarness, DIALECTS, type Harness, type Org } from './support/harness'

/**
 * Tool rates (spec 4.6 `spend_controls.write`; the list `org.read`): what a call of an MCP tool through
 * gw costs, per server and tool or either as `*`, the most specific one applying.
 */

interface RateView {
  id: string
  serverId: string
  tool: string
  usdPerCall: number
  createdAt: string
  updatedAt: string
}

const PATH = '/v1/tool-rates'

const data = async <T>(response: Response, status = 200): Promise<T> => {
  const text = await response.text()
  expect(`${response.status} ${text}`).toStartWith(`${status} `)
  return (JSON.parse(text) as { data: T }).data
}

describe.each(DIALECTS)('tool rates on %s', (dialect) => {
  let h: Harness
  let clock = Date.parse('2026-06-01T12:00:00.000Z')
  beforeAll(async () => {
    h = await createHarness({ dialect, now: () => clock })
  })
  afterAll(async () => {
    await h.close()
  })

  const put = (org: Org, body: unknown, token = org.ownerSession) => h.request('PUT', PATH, { token, body })
  const list = async (org: Org, token = org.ownerSession) => data<RateView[]>(await h.request('GET', PATH, { token }))
  const remove = (org: Org, id: string, token = org.ownerSession) => h.request('DELETE', `${PATH}/${id}`, { token })
  /** A server registered straight in the store: the rates need its id, not a connection. */
  const server = async (org: Org, name = 'tools') => {
    const id = crypto.randomUUID()
    const at = new Date(clock)
    await h.store.org(org.orgId).mcpServers.create({
      id,
      name,
      url: 'https://mcp.example.test/mcp',
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
    return id
  }

  test('a rate is set, listed, repriced in place (same id) and deleted', async () => {
    const org = await h.org()
    const serverId = await server(org)
    const created = await data<RateView>(await put(org, { serverId, tool: 'echo', usdPerCall: 0.01 }))
    expect(created).toEqual({
      id: expect.any(String),
      serverId,
      tool: 'echo',
      usdPerCall: 0.01,
      createdAt: new Date(clock).toISOString(),
      updatedAt: new Date(clock).toISOString(),
    })
    const wildcard = await data<RateView>(await put(org, { serverId: '*', tool: '*', usdPerCall: 0.000000001 }))
    expect(wildcard.usdPerCall).toBe(0.000000001)
    expect(await list(org, org.apiKey)).toHaveLength(2)

    clock += 60_000
    const repriced = await data<RateView>(await put(org, { serverId, tool: 'echo', usdPerCall: 1000 }))
    expect(repriced).toEqual({ ...created, usdPerCall: 1000, updatedAt: new Date(clock).toISOString() })
    expect((await list(org)).find((rate) => rate.id === created.id)?.usdPerCall).toBe(1000)

    expect(await data(await remove(org, created.id))).toEqual({ id: created.id, deleted: true })
    expect((await list(org)).map((rate) => rate.id)).toEqual([wildcard.id])
    expect((await remove(org, created.id)).status).toBe(404)
  })

  test('the most specific rate prices a call: server and tool, server and *, * and tool, * and *; none: free', async () => {
    const org = await h.org()
    const a = await server(org, 'a')
    const b = await server(org, 'b')
    const rateOf = async (serverId: string, tool: string) =>
      (await h.store.org(org.orgId).toolRates.rateFor(serverId, tool))?.usdNanoPerCall
    expect(await rateOf(a, 'echo')).toBeUndefined()
    await data(await put(org, { serverId: '*', tool: '*', usdPerCall: 0.004 }))
    expect(await rateOf(a, 'echo')).toBe(4_000_000)
    await data(await put(org, { serverId: '*', tool: 'echo', usdPerCall: 0.003 }))
    expect(await rateOf(a, 'echo')).toBe(3_000_000)
    expect(await rateOf(a, 'add')).toBe(4_000_000)
    await data(await put(org, { serverId: a, tool: '*', usdPerCall: 0.002 }))
    expect(await rateOf(a, 'echo')).toBe(2_000_000)
    expect(await rateOf(b, 'echo')).toBe(3_000_000)
    await data(await put(org, { serverId: a, tool: 'echo', usdPerCall: 0.001 }))
    expect(await rateOf(a, 'echo')).toBe(1_000_000)
    expect(await rateOf(a, 'add')).toBe(2_000_000)
    expect(await rateOf(b, 'add')).toBe(4_000_000)
  })

  test('mostSpecific is independent of the order it is given the rates in', () => {
    const rate = (serverId: string, tool: string): ToolRateRow => ({
      id: `${serverId}/${tool}`,
      orgId: 'o',
      serverId,
      tool,
      usdNanoPerCall: 1,
      createdAt: new Date(0),
      updatedAt: new Date(0),
    })
    const all = [rate('*', '*'), rate('*', 't'), rate('s', '*'), rate('s', 't')]
    for (const order of [all, [...all].reverse()]) {
      expect(mostSpecific(order, 's', 't')?.id).toBe('s/t')
      expect(mostSpecific(order, 's', 'u')?.id).toBe('s/*')
      expect(mostSpecific(order, 'r', 't')?.id).toBe('*/t')
      expect(mostSpecific(order, 'r', 'u')?.id).toBe('*/*')
    }
    expect(mostSpecific([], 's', 't')).toBeUndefined()
  })

  describe('bad input is 400 and stores nothing', () => {
    const cases: Array<[string, (serverId: string) => unknown]> = [
      ['a server that is not the organization’s', () => ({ serverId: crypto.randomUUID(), tool: 'echo', usdPerCall: 1 })],
      ['an empty tool', (serverId) => ({ serverId, tool: '', usdPerCall: 1 })],
      ['a tool of 201 characters', (serverId) => ({ serverId, tool: 't'.repeat(201), usdPerCall: 1 })],
      ['a negative price', (serverId) => ({ serverId, tool: 'echo', usdPerCall: -0.01 })],
      ['a price above 1000', (serverId) => ({ serverId, tool: 'echo', usdPerCall: 1000.01 })],
      ['a price with 10 decimal places', (serverId) => ({ serverId, tool: 'echo', usdPerCall: 0.0000000001 })],
      ['a price that is text', (serverId) => ({ serverId, tool: 'echo', usdPerCall: '0.01' })],
      ['no price', (serverId) => ({ serverId, tool: 'echo' })],
      ['an unknown field', (serverId) => ({ serverId, tool: 'echo', usdPerCall: 1, extra: true })],
      ['no body', () => undefined],
    ]
    for (const [what, body] of cases) {
      test(what, async () => {
        const org = await h.org()
        const serverId = await server(org)
        expect((await put(org, body(serverId))).status).toBe(400)
        expect(await h.store.org(org.orgId).toolRates.list()).toEqual([])
      })
    }
  })

  test("another organization's rate is 404 and stays; its server cannot be priced", async () => {
    const org = await h.org()
    const other = await h.org()
    const otherServer = await server(other)
    const theirs = await data<RateView>(await put(other, { serverId: otherServer, tool: 'echo', usdPerCall: 0.5 }))
    expect((await remove(org, theirs.id)).status).toBe(404)
    expect((await put(org, { serverId: otherServer, tool: 'echo', usdPerCall: 0.1 })).status).toBe(400)
    expect(await list(org)).toEqual([])
    expect(await list(other)).toEqual([theirs])
  })

  test('a role without spend_controls.write is 403 and changes nothing; no key is 401', async () => {
    const org = await h.org()
    const serverId = await server(org)
    const kept = await data<RateView>(await put(org, { serverId, tool: 'echo', usdPerCall: 0.5 }))
    const member = await h.member(org.orgId, 'member')
    expect((await put(org, { serverId, tool: 'echo', usdPerCall: 0 }, member.sessionToken)).status).toBe(403)
    expect((await put(org, { serverId, tool: 'echo', usdPerCall: 0 }, org.apiKey)).status).toBe(403)
    expect((await remove(org, kept.id, member.sessionToken)).status).toBe(403)
    expect(await list(org, member.sessionToken)).toEqual([kept])
    expect((await h.request('PUT', PATH, { body: { serverId, tool: 'echo', usdPerCall: 0 } })).status).toBe(401)
    expect((await h.request('GET', PATH)).status).toBe(401)
    expect((await h.request('DELETE', `${PATH}/${kept.id}`)).status).toBe(401)
    expect(await list(org)).toEqual([kept])
  })
})
