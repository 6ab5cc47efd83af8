import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { EgressPolicy, EgressRefused, parseAllowList } from '../src/egress/policy'
import { derivedName, discover, probe } from '../src/mcp/client'
import { type FakeMcpServer, startFakeMcpServer, startFakeSseMcpServer } from './support/fake-mcp-server'

/** gw's MCP client (src/mcp/client.ts) on its own: time limits, what discovery reads, the names it makes. */

const loopback = new EgressPolicy({ enabled: true, allow: parseAllowList('127.0.0.1') })
const fetch = loopback.guardedFetch

let published: FakeMcpServer
let sse: FakeMcpServer
let silent: ReturnType<typeof Bun.serve>
let huge: ReturnType<typeof Bun.serve>
beforeAll(async () => {
  sse = await startFakeSseMcpServer()
  published = startFakeMcpServer({ name: 'Docs & Search: v2!', protectedResource: { resource: 'https://docs.example.test' } })
  // Takes the connection and never answers.
  silent = Bun.serve({ hostname: '127.0.0.1', port: 0, development: false, fetch: () => new Promise<Response>(() => {}) })
  // A protected-resource document far past what gw reads.
  huge = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    development: false,
    fetch: (request) =>
      new URL(request.url).pathname.startsWith('/.well-known/')
        ? new Response(`{"padding":"${'x'.repeat(200_000)}"}`, { headers: { 'content-type': 'application/json' } })
        : new Response('unauthorized', { status: 401 }),
  })
})
afterAll(async () => {
  await sse.close()
  await published.close()
  await silent.stop(true)
  await huge.stop(true)
})

describe('the MCP client', () => {
  test('a server that never answers is ok: false once the time is up', async () => {
    const started = performance.now()
    const result = await probe({ url: `http://127.0.0.1:${silent.port}/mcp`, transport: 'streamable_http' }, fetch, {
      timeoutMs: 300,
    })
    expect(performance.now() - started).toBeLessThan(2_000)
    expect(result).toMatchObject({ ok: false, tools: [], error: 'the server did not answer within 0.3 s' })
  })

  test('a server on the older SSE transport is probed over it', async () => {
    const result = await probe({ url: sse.url, transport: 'sse' }, fetch, { timeoutMs: 5_000 })
    expect(result).toMatchObject({
      ok: true,
      serverInfo: { name: 'Fake SSE Tools', version: '1.2.3' },
      tools: [{ name: 'echo' }, { name: 'add' }],
      error: null,
    })
    expect(sse.rpcMethods()).toEqual(expect.arrayContaining(['initialize', 'tools/list']))
  })

  test('discover finds a server that speaks only SSE', async () => {
    const found = await discover(sse.url, fetch, { timeoutMs: 5_000 })
    expect(found).toMatchObject({ transport: 'sse', needsAuth: false, serverInfo: { name: 'Fake SSE Tools' }, error: null })
  })

  test('the SSE transport reaches nothing the policy forbids either', async () => {
    const strict = new EgressPolicy({ enabled: true })
    published.reset()
    const result = await probe({ url: published.url, transport: 'sse' }, strict.guardedFetch, { timeoutMs: 2_000 })
    expect(result.ok).toBe(false)
    expect(published.received).toEqual([])
  })

  test('discover of a closed port drafts with the reason, and asks for nothing', async () => {
    const found = await discover('http://127.0.0.1:9/mcp', fetch, { timeoutMs: 2_000 })
    expect(found).toMatchObject({ needsAuth: false, serverInfo: null, protectedResource: null, transport: 'streamable_http' })
    expect(found.error).toEqual(expect.any(String))
  })

  test('a server that publishes a protected-resource document needs auth, even when it answered without', async () => {
    const found = await discover(published.url, fetch)
    expect(found).toMatchObject({
      needsAuth: true,
      serverInfo: { name: 'Docs & Search: v2!', version: '1.2.3' },
      protectedResource: { resource: 'https://docs.example.test' },
      error: null,
    })
  })

  test('a protected-resource document past 64 KiB is not read', async () => {
    const found = await discover(`http://127.0.0.1:${huge.port}/mcp`, fetch, { timeoutMs: 2_000 })
    expect(found).toMatchObject({ needsAuth: true, protectedResource: null })
  })

  test('names are made valid tool prefixes', () => {
    const valid = /^(?!.*__)(?!.*_$)[a-z0-9_-]{1,64}$/
    const cases: Array<[string | undefined, string, string]> = [
      ['Docs & Search: v2!', 'https://x.example.test', 'docs-search-v2'],
      ['my__server__', 'https://x.example.test', 'my_server'],
      ['🙂', 'https://mcp.linear.app/mcp', 'linear-app'],
      [undefined, 'https://127.0.0.1:8080/mcp', '127-0-0-1'],
      ['x'.repeat(100), 'https://x.example.test', 'x'.repeat(64)],
      ['___', 'not a url', 'mcp-server'],
    ]
    for (const [name, url, expected] of cases) {
      const made = derivedName(name, url)
      expect(made).toBe(expected)
      expect(made).toMatch(valid)
    }
  })

  test('the guarded fetch checks every request it is handed', async () => {
    const strict = new EgressPolicy({ enabled: true })
    await expect(strict.guardedFetch(published.url)).rejects.toBeInstanceOf(EgressRefused)
    await expect(strict.guardedFetch('https://10.1.2.3/mcp')).rejects.toBeInstanceOf(EgressRefused)
    published.reset()
    const response = await fetch(new URL(published.url), { method: 'GET', headers: { 'x-probe': '1' } })
    await response.body?.cancel()
    expect(published.received.map((request) => request.method)).toEqual(['GET'])
  })
})
