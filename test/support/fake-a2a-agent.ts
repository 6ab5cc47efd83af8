/**
 * A small A2A agent on loopback: its card at the well-known names, and JSON-RPC `message/send` (a
 * message echoed back) and `message/stream` (a task's events over SSE). It keeps every call it was
 * sent, with the Authorization header it came with, so tests can see what gw forwarded.
 */

export interface FakeAgentCall {
  method: string
  authorization: string | null
  body: Record<string, unknown>
}

export interface FakeA2aAgent {
  url: string
  calls: FakeAgentCall[]
  card: Record<string, unknown>
  close(): Promise<void>
}

export interface FakeAgentOptions {
  name?: string
  /** The key the agent expects as a bearer token; calls without it are 401. */
  key?: string
  /** What the card answers, in place of a valid one. */
  card?: unknown
  /** Only the name A2A used before 0.3 answers (agent.json). */
  legacyCardOnly?: boolean
  /** Calls are taken and never answered (until the agent is closed). */
  hang?: boolean
}

export const validCard = (name: string, url: string) => ({
  protocolVersion: '0.3.0',
  name,
  description: `${name}, an agent for tests`,
  url,
  version: '1.0.0',
  capabilities: { streaming: true },
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [{ id: 'echo', name: 'Echo', description: 'says back what it was told', tags: ['test'] }],
  securitySchemes: { agentKey: { type: 'http', scheme: 'bearer' } },
  security: [{ agentKey: [] }],
})

const textOf = (body: Record<string, unknown>): string => {
  const params = body.params as { message?: { parts?: Array<{ text?: string }> } } | undefined
  return params?.message?.parts?.map((part) => part.text ?? '').join('') ?? ''
}

const sse = (events: unknown[]): Response => {
  const encoder = new TextEncoder()
  const stream = new ReadableStream<Uint8Array>({
    async start(controller) {
      for (const event of events) {
        controller.enqueue(encoder.encode(`data: ${JSON.stringify(event)}\n\n`))
        await Bun.sleep(5)
      }
      controller.close()
    },
  })
  return new Response(stream, { headers: { 'content-type': 'text/event-stream' } })
}

export function startFakeA2aAgent(options: FakeAgentOptions = {}): FakeA2aAgent {
  const calls: FakeAgentCall[] = []
  const name = options.name ?? 'Fake Agent'
  let card: Record<string, unknown> = {}
  const { promise: closed, resolve: close } = Promise.withResolvers<void>()
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    development: false,
    async fetch(request) {
      const path = new URL(request.url).pathname
      if (request.method === 'GET') {
        const current = path === '/.well-known/agent-card.json' && !options.legacyCardOnly
        const legacy = path === '/.well-known/agent.json'
        if (!current && !legacy) return new Response('not found', { status: 404 })
        return Response.json(options.card ?? card)
      }
      const authorization = request.headers.get('authorization')
      const body = (await request.json()) as Record<string, unknown>
      const method = String(body.method)
      calls.push({ method, authorization, body })
      if (options.key !== undefined && authorization !== `Bearer ${options.key}`)
        return Response.json({ error: 'unauthorized' }, { status: 401 })
      if (options.hang) {
        await closed
        return new Response('closed', { status: 503 })
      }
      const id = body.id ?? null
      const text = textOf(body)
      if (method === 'message/send')
        return Response.json({
          jsonrpc: '2.0',
          id,
          result: { kind: 'message', messageId: 'answer-1', role: 'agent', parts: [{ kind: 'text', text: `echo: ${text}` }] },
        })
      if (method === 'message/stream') {
        const task = { taskId: 'task-1', contextId: 'context-1' }
        if (text === 'fail')
          return sse([
            { jsonrpc: '2.0', id, result: { kind: 'status-update', ...task, status: { state: 'working' }, final: false } },
            { jsonrpc: '2.0', id, error: { code: -32603, message: 'the agent gave up' } },
          ])
        return sse([
          { jsonrpc: '2.0', id, result: { kind: 'task', id: 'task-1', contextId: 'context-1', status: { state: 'submitted' } } },
          { jsonrpc: '2.0', id, result: { kind: 'status-update', ...task, status: { state: 'working' }, final: false } },
          {
            jsonrpc: '2.0',
            id,
            result: {
              kind: 'artifact-update',
              ...task,
              artifact: { artifactId: 'a-1', parts: [{ kind: 'text', text: `echo: ${text}` }] },
            },
          },
          { jsonrpc: '2.0', id, result: { kind: 'status-update', ...task, status: { state: 'completed' }, final: true } },
        ])
      }
      return Response.json({ jsonrpc: '2.0', id, error: { code: -32601, message: `method not found: ${method}` } })
    },
  })
  const url = `http://127.0.0.1:${server.port}`
  card = validCard(name, url)
  return {
    url,
    calls,
    card,
    async close() {
      close()
      await server.stop(true)
    },
  }
}
