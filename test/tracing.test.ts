import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { loadConfig } from '../src/config'
import { EgressPolicy, parseAllowList } from '../src/egress/policy'
import { createLogger } from '../src/log'
import { OtelTracing } from '../src/observability/otel'
import type { TracingConfig } from '../src/observability/tracing'
import { openRuntime } from '../src/runtime'
import { type FakeA2aAgent, startFakeA2aAgent } from './support/fake-a2a-agent'
import { type FakeMcpServer, startFakeMcpServer } from './support/fake-mcp-server'
import { type FakeProvider, providersAt, startFakeProvider } from './support/fake-provider'
import { createHarness, type Harness, type Org } from './support/harness'
import { type OtlpReceiver, type ReceivedSpan, SPAN_KIND, STATUS_ERROR, startOtlpReceiver } from './support/otlp-receiver'
import { serveHarness } from './support/serve'

/**
 * Traces: each gateway call is a server span following the GenAI semantic conventions, each provider
 * attempt a client span under it, the caller's W3C trace context is continued and passed on to the
 * provider, and the spans reach a collector over OTLP/HTTP. The collector here is a receiver on
 * loopback; the exporter is OpenTelemetry's own.
 */

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736'
const CALLER_SPAN = '00f067aa0ba902b7'
const traceparent = (flags = '01') => `00-${TRACE_ID}-${CALLER_SPAN}-${flags}`
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0([01])$/

const LOOPBACK = parseAllowList('127.0.0.1') as NonNullable<ReturnType<typeof parseAllowList>>

function tracingAt(receiver: OtlpReceiver, extra: Partial<TracingConfig> = {}): TracingConfig {
  return {
    url: `${receiver.endpoint}/v1/traces`,
    serviceName: 'gw-under-test',
    sampler: 'parentbased_always_on',
    ratio: 1,
    captureContent: false,
    // Exported at once, so a test waits milliseconds, not the five seconds of the default.
    batch: { scheduledDelayMillis: 20, exportTimeoutMillis: 5_000, maxQueueSize: 2_048, maxExportBatchSize: 512 },
    ...extra,
  }
}

const quiet = createLogger('error')

let fake: FakeProvider
let receiver: OtlpReceiver
let tracing: OtelTracing
let h: Harness
let org: Org

beforeAll(async () => {
  fake = await startFakeProvider()
  receiver = startOtlpReceiver()
  tracing = new OtelTracing(tracingAt(receiver), quiet)
  h = await createHarness({
    providers: providersAt(fake),
    tracing,
    egress: new EgressPolicy({ enabled: true, allow: LOOPBACK }),
  })
  org = await h.org('growth')
  await h.services.organizations.addCredits(org.orgId, 1_000)
})
afterAll(async () => {
  await h.close()
  await tracing.shutdown()
  await receiver.stop()
  await fake.close()
})

const chat = (content: string, extra: Record<string, unknown> = {}) => ({
  model: 'gpt-4o',
  messages: [{ role: 'user', content }],
  ...extra,
})

async function call(path: string, body: Record<string, unknown>, headers: Record<string, string> = {}, token = org.apiKey) {
  const response = await h.request('POST', path, { token, body, headers })
  await response.text()
  return response
}

/** The server span of the call whose gw id is `requestId`, and the client spans under it. */
async function spansOf(requestId: string, attempts: number): Promise<{ server: ReceivedSpan; clients: ReceivedSpan[] }> {
  const server = await receiver.span((span) => span.attributes['gw.request_id'] === requestId && span.kind === SPAN_KIND.server)
  const under = (span: ReceivedSpan) => span.parentSpanId === server.spanId && span.kind === SPAN_KIND.client
  if (attempts > 0) await receiver.span((span) => under(span) && receiver.spans.filter(under).length >= attempts)
  return { server, clients: receiver.spans.filter(under) }
}

/** An access rule of the organisation's denying one resource, in force at once. */
async function deny(resourceKind: 'mcp_tool' | 'agent', resourceId: string): Promise<void> {
  const now = new Date()
  await h.store.org(org.orgId).accessRules.create({
    id: crypto.randomUUID(),
    subjectKind: 'org',
    subjectId: '',
    resourceKind,
    resourceId,
    effect: 'deny',
    reason: 'not traced',
    createdAt: now,
    updatedAt: now,
  })
  await h.services.accessPolicies.changed(org.orgId)
}

const lastProviderCall = () => {
  const recorded = fake.calls.at(-1)
  if (!recorded) throw new Error('the provider was not called')
  return recorded
}

describe('a gateway call is a span', () => {
  test("continues the caller's trace: a server span under the caller's, a client span under it, its context passed to the provider", async () => {
    const response = await call('/v1/chat/completions', chat('hello', { max_tokens: 64 }), { traceparent: traceparent() })
    expect(response.status).toBe(200)
    const requestId = response.headers.get('gw-id') as string
    const { server, clients } = await spansOf(requestId, 1)

    expect(server.traceId).toBe(TRACE_ID)
    expect(server.parentSpanId).toBe(CALLER_SPAN)
    expect(server.name).toBe('chat gpt-4o')
    expect(server.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.system': 'openai',
      'gen_ai.request.model': 'gpt-4o',
      'gen_ai.request.max_tokens': 64,
      'gen_ai.response.finish_reasons': ['stop'],
      'http.request.method': 'POST',
      'http.response.status_code': 200,
      'url.path': '/v1/chat/completions',
      'gw.org_id': org.orgId,
      'gw.attempts': 1,
      'gw.cache_hit': false,
    })
    expect(String(server.attributes['gen_ai.response.model'])).toStartWith('gpt-4o')
    expect(server.resource['service.name']).toBe('gw-under-test')

    // The usage and cost are the request log's, exactly.
    await h.deps.requestLog.flush()
    const record = await h.store.requests.get(org.orgId, requestId)
    expect(server.attributes['gen_ai.usage.input_tokens']).toBe(record?.promptTokens as number)
    expect(server.attributes['gen_ai.usage.output_tokens']).toBe(record?.completionTokens as number)
    expect(server.attributes['gw.cost_usd']).toBeCloseTo((record?.costNano as number) / 1e9, 12)

    expect(clients).toHaveLength(1)
    const [attempt] = clients as [ReceivedSpan]
    expect(attempt.traceId).toBe(TRACE_ID)
    expect(attempt.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'gpt-4o',
      'gen_ai.provider.name': 'openai',
      'server.address': '127.0.0.1',
      'server.port': Number(new URL(fake.url).port),
      'http.response.status_code': 200,
    })
    // The provider's own spans would join the trace under gw's attempt.
    expect(lastProviderCall().headers.traceparent).toBe(`00-${TRACE_ID}-${attempt.spanId}-01`)
  })

  test('no prompt or completion text on a span unless the operator opts in', async () => {
    const response = await call('/v1/chat/completions', chat('a secret prompt'))
    const { server } = await spansOf(response.headers.get('gw-id') as string, 1)
    expect(JSON.stringify(server.attributes)).not.toContain('a secret prompt')
    expect(server.attributes['gw.request.body']).toBeUndefined()
    expect(server.attributes['gw.response.body']).toBeUndefined()
  })

  test('a caller without a trace context starts a new trace: the server span is its root', async () => {
    const response = await call('/v1/chat/completions', chat('fresh'))
    const { server, clients } = await spansOf(response.headers.get('gw-id') as string, 1)
    expect(server.parentSpanId).toBeUndefined()
    expect(server.traceId).not.toBe(TRACE_ID)
    expect(lastProviderCall().headers.traceparent).toBe(`00-${server.traceId}-${clients[0]?.spanId}-01`)
  })

  test('a malformed traceparent is ignored, never an error: the call is served in a new trace', async () => {
    const response = await call('/v1/chat/completions', chat('bad context'), { traceparent: 'not-a-trace-context' })
    expect(response.status).toBe(200)
    const { server } = await spansOf(response.headers.get('gw-id') as string, 1)
    expect(server.parentSpanId).toBeUndefined()
  })

  test('an Anthropic stream: usage and finish reasons from its events, the attempt span open to its end', async () => {
    const response = await call(
      '/v1/messages',
      { model: 'claude-3-5-haiku', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'stream' }] },
      { traceparent: traceparent() },
    )
    expect(response.status).toBe(200)
    const requestId = response.headers.get('gw-id') as string
    const { server, clients } = await spansOf(requestId, 1)
    await h.deps.requestLog.flush()
    const record = await h.store.requests.get(org.orgId, requestId)
    expect(server.name).toBe('chat claude-3-5-haiku')
    expect(server.attributes).toMatchObject({
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.response.finish_reasons': ['end_turn'],
      'gen_ai.usage.input_tokens': record?.promptTokens as number,
      'gen_ai.usage.output_tokens': record?.completionTokens as number,
    })
    expect(clients[0]?.attributes['gen_ai.usage.output_tokens']).toBe(record?.completionTokens as number)
  })

  test('a fallback: the failed attempt is a client span with an error, the step that served another', async () => {
    const alias = `traced-chain-${crypto.randomUUID().slice(0, 8)}`
    const created = await h.request('POST', '/v1/gateway/fallback-chains', {
      token: org.ownerSession,
      body: { name: alias, match: { model: alias }, steps: [{ model: 'gpt-4o-mini' }, { model: 'gpt-4o' }] },
    })
    expect(created.status).toBe(201)
    fake.steer({ model: 'gpt-4o-mini', directives: 'fake:error:500', times: 1 })
    try {
      const response = await call('/v1/chat/completions', chat('fall back', { model: alias }), { traceparent: traceparent() })
      expect(response.status).toBe(200)
      const { server, clients } = await spansOf(response.headers.get('gw-id') as string, 2)
      expect(server.attributes).toMatchObject({ 'gen_ai.request.model': alias, 'gw.attempts': 2 })
      expect(server.attributes['gw.fallback_chain_id']).toBeString()
      expect(server.status.code).not.toBe(STATUS_ERROR)
      const failed = clients.find((span) => span.attributes['gen_ai.request.model'] === 'gpt-4o-mini')
      const served = clients.find((span) => span.attributes['gen_ai.request.model'] === 'gpt-4o')
      expect(failed?.status.code).toBe(STATUS_ERROR)
      expect(failed?.attributes).toMatchObject({ 'http.response.status_code': 500, 'error.type': '500' })
      expect(served?.status.code).not.toBe(STATUS_ERROR)
      expect(served?.attributes['http.response.status_code']).toBe(200)
    } finally {
      fake.unsteer()
    }
  })

  test("a refused call is a span with the refusal's error type, no attempt, and no error status (the caller's mistake)", async () => {
    const response = await call('/v1/chat/completions', chat('who?', { model: 'no-such-model-anywhere' }))
    expect(response.status).toBe(400)
    const { server, clients } = await spansOf(response.headers.get('gw-id') as string, 0)
    expect(server.attributes).toMatchObject({ 'error.type': 'bad_request', 'http.response.status_code': 400 })
    expect(server.status.code).not.toBe(STATUS_ERROR)
    expect(clients).toHaveLength(0)
  })

  test("a provider's 5xx: the call's span and the attempt's are errors", async () => {
    const response = await call('/v1/chat/completions', chat('fake:error:503'))
    expect(response.status).toBe(503)
    const { server, clients } = await spansOf(response.headers.get('gw-id') as string, 1)
    expect(server.status.code).toBe(STATUS_ERROR)
    expect(clients[0]?.status.code).toBe(STATUS_ERROR)
  })

  test("a caller's trace that is not sampled records nothing, and the provider still gets the trace, not sampled", async () => {
    const before = receiver.spans.length
    const unsampled = await call('/v1/chat/completions', chat('not sampled'), { traceparent: traceparent('00') })
    expect(unsampled.status).toBe(200)
    const passed = lastProviderCall().headers.traceparent?.match(TRACEPARENT)
    expect(passed?.[1]).toBe(TRACE_ID)
    expect(passed?.[3]).toBe('0')
    // Spans are exported in the order they end: once a later call's have come, the unsampled call's would have too.
    const sampled = await call('/v1/chat/completions', chat('sampled'))
    await spansOf(sampled.headers.get('gw-id') as string, 1)
    const unsampledId = unsampled.headers.get('gw-id')
    expect(receiver.spans.slice(before).some((span) => span.attributes['gw.request_id'] === unsampledId)).toBe(false)
  })
})

describe('content, when the operator opts in', () => {
  test("the bodies go on the span as the organisation's policy keeps them: redacted when it redacts, absent when it keeps none", async () => {
    const capturing = new OtelTracing(tracingAt(receiver, { captureContent: true }), quiet)
    const ch = await createHarness({ providers: providersAt(fake), tracing: capturing })
    try {
      const own = await ch.org('growth')
      await ch.services.organizations.addCredits(own.orgId, 1_000)
      const sent = async (content: string) => {
        const response = await ch.request('POST', '/v1/chat/completions', { token: own.apiKey, body: chat(content) })
        await response.text()
        return (await spansOf(response.headers.get('gw-id') as string, 1)).server
      }
      await ch.store.org(own.orgId).settings.update({ bodyRetentionDays: 30, piiRedaction: false })
      const kept = await sent('write to ada@example.com')
      expect(String(kept.attributes['gw.request.body'])).toContain('ada@example.com')
      expect(String(kept.attributes['gw.response.body'])).toContain('choices')

      await ch.store.org(own.orgId).settings.update({ piiRedaction: true })
      await Bun.sleep(1_100) // the gateway reads the policy through a one-second cache
      const redacted = await sent('write to bob@example.com')
      expect(String(redacted.attributes['gw.request.body'])).not.toContain('bob@example.com')
      expect(String(redacted.attributes['gw.request.body'])).toContain('write to')

      await ch.store.org(own.orgId).settings.update({ bodyRetentionDays: null })
      await Bun.sleep(1_100)
      const none = await sent('keep nothing')
      expect(none.attributes['gw.request.body']).toBeUndefined()
    } finally {
      await ch.close()
      await capturing.shutdown()
    }
  })
})

describe("a tool call through gw's MCP server", () => {
  let mcp: FakeMcpServer
  let served: { url: string; stop(): Promise<void> }
  beforeAll(() => {
    mcp = startFakeMcpServer({ name: 'Traced Tools' })
    served = serveHarness(h)
  })
  afterAll(async () => {
    await served.stop()
    await mcp.close()
  })

  test("is a server span in the caller's trace, with a client span for the tool's server, which gets the trace context", async () => {
    const registered = await h.request('POST', '/v1/mcp/servers', {
      token: org.ownerSession,
      body: { name: 'traced', url: mcp.url, transport: 'streamable_http', auth: { kind: 'none' } },
    })
    expect(registered.status).toBe(201)
    const client = new Client({ name: 'test', version: '1.0.0' })
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${served.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${org.apiKey}`, traceparent: traceparent() } },
      }),
    )
    try {
      const result = await client.callTool({ name: 'traced__echo', arguments: { text: 'hi' } })
      expect(result.isError).toBeFalsy()
    } finally {
      await client.close()
    }
    const server = await receiver.span((span) => span.name === 'tools/call traced__echo')
    expect(server.kind).toBe(SPAN_KIND.server)
    expect(server.traceId).toBe(TRACE_ID)
    expect(server.parentSpanId).toBe(CALLER_SPAN)
    expect(server.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'traced__echo',
      'mcp.method.name': 'tools/call',
      'gw.org_id': org.orgId,
      'gw.mcp_server.name': 'traced',
    })
    const upstream = await receiver.span((span) => span.parentSpanId === server.spanId)
    expect(upstream.kind).toBe(SPAN_KIND.client)
    expect(upstream.name).toBe('execute_tool echo')
    expect(upstream.attributes['server.port']).toBe(mcp.port)
    const relayed = mcp.received.filter((request) => request.traceparent !== null)
    expect(relayed.length).toBeGreaterThan(0)
    expect(relayed.every((request) => request.traceparent === `00-${TRACE_ID}-${upstream.spanId}-01`)).toBe(true)
  })

  test('a refused tool call ends its span saying so', async () => {
    const client = new Client({ name: 'test', version: '1.0.0' })
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${served.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${org.apiKey}` } },
      }),
    )
    await deny('mcp_tool', 'traced__add')
    try {
      await expect(client.callTool({ name: 'traced__add', arguments: { a: 1, b: 2 } })).rejects.toThrow()
    } finally {
      await client.close()
    }
    const span = await receiver.span((candidate) => candidate.name === 'tools/call traced__add')
    expect(span.attributes['error.type']).toBe('refused')
    expect(receiver.spans.some((candidate) => candidate.parentSpanId === span.spanId)).toBe(false)
  })
})

describe('a call relayed to an A2A agent', () => {
  let agent: FakeA2aAgent
  beforeAll(async () => {
    agent = await startFakeA2aAgent({ name: 'Traced Agent' })
  })
  afterAll(async () => {
    await agent.close()
  })

  const message = (text: string) => ({
    jsonrpc: '2.0',
    id: 1,
    method: 'message/send',
    params: { message: { kind: 'message', messageId: `m-${text}`, role: 'user', parts: [{ kind: 'text', text }] } },
  })

  test("is a server span in the caller's trace, with a client span for the agent, which gets the trace context", async () => {
    const created = await h.request('POST', '/v1/a2a/agents', {
      token: org.ownerSession,
      body: { name: 'traced-agent', url: agent.url },
    })
    expect(created.status).toBe(201)
    const { id } = ((await created.json()) as { data: { id: string } }).data
    const answer = await h.request('POST', `/a2a/${id}`, {
      token: org.apiKey,
      body: message('hello'),
      headers: { traceparent: traceparent() },
    })
    expect(answer.status).toBe(200)
    await answer.text()
    const server = await receiver.span((span) => span.name === 'invoke_agent traced-agent' && span.kind === SPAN_KIND.server)
    expect(server.traceId).toBe(TRACE_ID)
    expect(server.parentSpanId).toBe(CALLER_SPAN)
    expect(server.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.id': id,
      'gen_ai.agent.name': 'traced-agent',
      'rpc.system': 'jsonrpc',
      'rpc.method': 'message/send',
      'gw.org_id': org.orgId,
    })
    const upstream = await receiver.span((span) => span.parentSpanId === server.spanId)
    expect(upstream.kind).toBe(SPAN_KIND.client)
    expect(agent.calls.at(-1)?.traceparent).toBe(`00-${TRACE_ID}-${upstream.spanId}-01`)

    // Denied by the access rules: refused, and the agent never reached.
    await deny('agent', 'traced-agent')
    const calls = agent.calls.length
    const denied = await h.request('POST', `/a2a/${id}`, { token: org.apiKey, body: message('denied') })
    expect(denied.status).toBe(403)
    const refused = await receiver.span(
      (span) => span.name === 'invoke_agent traced-agent' && span.attributes['error.type'] === 'refused',
    )
    expect(refused.status.code).not.toBe(STATUS_ERROR)
    expect(receiver.spans.some((span) => span.parentSpanId === refused.spanId)).toBe(false)
    expect(agent.calls.length).toBe(calls)
  })
})

describe('tracing off', () => {
  test('the runtime builds a tracer only when a collector is named and gw serves; a disabled SDK is off', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-tracing-'))
    try {
      const base = { GW_DATA_DIR: dir, GW_LOG_LEVEL: 'warn' }
      const off = await openRuntime(loadConfig(base), { migrate: true, serving: true })
      expect(off.config.tracing).toBeUndefined()
      expect(off.deps.tracing).toBeUndefined()
      await off.close()
      const env = { ...base, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint }
      const oneShot = await openRuntime(loadConfig(env), { migrate: false })
      expect(oneShot.deps.tracing).toBeUndefined()
      await oneShot.close()
      const on = await openRuntime(loadConfig(env), { migrate: false, serving: true })
      expect(on.deps.tracing).toBeInstanceOf(OtelTracing)
      await on.close()
      expect(loadConfig({ ...env, OTEL_SDK_DISABLED: 'true' }).tracing).toBeUndefined()
      expect(loadConfig({ ...env, OTEL_TRACES_EXPORTER: 'none' }).tracing).toBeUndefined()
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('no OpenTelemetry module is loaded when tracing is off; they are when it is on', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-tracing-'))
    const script = `
      import { loadConfig } from '${join(import.meta.dir, '../src/config')}'
      import { openRuntime } from '${join(import.meta.dir, '../src/runtime')}'
      const runtime = await openRuntime(loadConfig(process.env), { migrate: true, serving: true })
      const loaded = Object.keys(require.cache).filter((name) => name.includes('@opentelemetry')).length
      await runtime.close()
      console.log(JSON.stringify({ loaded, modules: Object.keys(require.cache).length }))
    `
    const loadedWith = async (extra: Record<string, string>) => {
      const child = Bun.spawn([process.execPath, '-e', script], {
        env: { PATH: process.env.PATH ?? '', GW_DATA_DIR: dir, GW_LOG_LEVEL: 'error', ...extra },
        stdout: 'pipe',
        stderr: 'pipe',
      })
      const [out, err] = [await new Response(child.stdout).text(), await new Response(child.stderr).text()]
      expect(await child.exited, err).toBe(0)
      return JSON.parse(out.trim().split('\n').at(-1) as string) as { loaded: number; modules: number }
    }
    try {
      const off = await loadedWith({})
      expect(off.modules).toBeGreaterThan(100)
      expect(off.loaded).toBe(0)
      expect((await loadedWith({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint })).loaded).toBeGreaterThan(0)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('a harness without tracing passes no trace context to the provider', async () => {
    const plain = await createHarness({ providers: providersAt(fake) })
    try {
      const own = await plain.org('growth')
      await plain.services.organizations.addCredits(own.orgId, 1_000)
      const response = await plain.request('POST', '/v1/chat/completions', {
        token: own.apiKey,
        body: chat('untraced'),
        headers: { traceparent: traceparent() },
      })
      expect(response.status).toBe(200)
      expect(lastProviderCall().headers.traceparent).toBeUndefined()
    } finally {
      await plain.close()
    }
  })
})

describe('configuration', () => {
  test('the standard variables: endpoint, traces endpoint, sampler and its ratio, batch sizes; a bad value stops start-up', () => {
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).tracing?.url).toBe(
      'http://collector:4318/v1/traces',
    )
    const explicit = loadConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example/otlp/v1/traces',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
      OTEL_SERVICE_NAME: 'gw-eu',
      OTEL_BSP_MAX_QUEUE_SIZE: '4096',
    }).tracing
    expect(explicit).toMatchObject({
      url: 'https://traces.example/otlp/v1/traces',
      sampler: 'parentbased_traceidratio',
      ratio: 0.25,
      serviceName: 'gw-eu',
      batch: { maxQueueSize: 4096 },
    })
    expect(() => loadConfig({ OTEL_TRACES_SAMPLER: 'sometimes' })).toThrow('OTEL_TRACES_SAMPLER')
    expect(() => loadConfig({ OTEL_TRACES_SAMPLER_ARG: '1.5' })).toThrow('OTEL_TRACES_SAMPLER_ARG')
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow('OTEL_EXPORTER_OTLP_ENDPOINT')
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow('OTEL_EXPORTER_OTLP_PROTOCOL')
    expect(() => loadConfig({ OTEL_BSP_MAX_QUEUE_SIZE: '0' })).toThrow('OTEL_BSP_MAX_QUEUE_SIZE')
  })
})
