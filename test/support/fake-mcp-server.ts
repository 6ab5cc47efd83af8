import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js'
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'

/**
 * An MCP server on loopback, built with the official SDK's server side (Streamable HTTP, stateless,
 * JSON answers): tools `echo` and `add`, an optional bearer token it insists on (401 without it), and
 * an optional protected-resource document at `/.well-known/oauth-protected-resource`. It records every
 * request it received, so a test can say what gw sent.
 */

export interface ReceivedRequest {
  method: string
  path: string
  authorization: string | null
  /** The W3C trace context gw passed on, when it traces. */
  traceparent: string | null
  /** The JSON-RPC methods of a POST's body (`initialize`, `tools/list`, ...). */
  rpc: string[]
}

export interface FakeMcpServerOptions {
  /** When set, every MCP request must carry `Authorization: Bearer <token>`. */
  token?: string
  /** Served at `/.well-known/oauth-protected-resource` (and under the endpoint's path) when set. */
  protectedResource?: Record<string, unknown>
  /** The name the server gives itself in initialize. */
  name?: string
  /** The endpoint's path; `/mcp` by default. */
  path?: string
}

export interface FakeMcpServer {
  /** The MCP endpoint: `http://127.0.0.1:<port>/mcp`. */
  url: string
  port: number
  received: ReceivedRequest[]
  /** The JSON-RPC methods received, in order. */
  rpcMethods(): string[]
  reset(): void
  close(): Promise<void>
}

export const FAKE_TOOLS = [
  {
    name: 'echo',
    description: 'Answers the text it was given',
    inputSchema: { type: 'object' as const, properties: { text: { type: 'string' } }, required: ['text'] },
  },
  {
    name: 'add',
    description: 'Adds two numbers',
    inputSchema: {
      type: 'object' as const,
      properties: { a: { type: 'number' }, b: { type: 'number' } },
      required: ['a', 'b'],
    },
  },
]

function mcpServer(name: string): Server {
  const server = new Server({ name, version: '1.2.3' }, { capabilities: { tools: {} } })
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: FAKE_TOOLS }))
  server.setRequestHandler(CallToolRequestSchema, (request) => {
    const args = (request.params.arguments ?? {}) as Record<string, unknown>
    if (request.params.name === 'echo') return { content: [{ type: 'text', text: String(args.text ?? '') }] }
    if (request.params.name === 'add') return { content: [{ type: 'text', text: String(Number(args.a) + Number(args.b)) }] }
    return { isError: true, content: [{ type: 'text', text: `unknown tool ${request.params.name}` }] }
  })
  return server
}

const rpcOf = (body: unknown): string[] =>
  (Array.isArray(body) ? body : [body]).flatMap((message) =>
    typeof message === 'object' && message !== null && typeof (message as { method?: unknown }).method === 'string'
      ? [(message as { method: string }).method]
      : [],
  )

export function startFakeMcpServer(options: FakeMcpServerOptions = {}): FakeMcpServer {
  const path = options.path ?? '/mcp'
  const received: ReceivedRequest[] = []
  const http: Bun.Server<undefined> = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    development: false,
    async fetch(request): Promise<Response> {
      const url = new URL(request.url)
      const text = request.method === 'POST' ? await request.text() : ''
      let body: unknown
      try {
        body = text ? JSON.parse(text) : undefined
      } catch {
        body = undefined
      }
      received.push({
        method: request.method,
        path: url.pathname,
        authorization: request.headers.get('authorization'),
        traceparent: request.headers.get('traceparent'),
        rpc: rpcOf(body),
      })
      if (url.pathname.startsWith('/.well-known/oauth-protected-resource')) {
        return options.protectedResource ? Response.json(options.protectedResource) : new Response('not found', { status: 404 })
      }
      if (url.pathname !== path) return new Response('not found', { status: 404 })
      if (options.token !== undefined && request.headers.get('authorization') !== `Bearer ${options.token}`) {
        const metadata = `http://127.0.0.1:${http.port}/.well-known/oauth-protected-resource${path}`
        return new Response('unauthorized', {
          status: 401,
          headers: { 'www-authenticate': `Bearer resource_metadata="${metadata}"` },
        })
      }
      // Stateless: a server and transport per request, as the SDK's stateless example does.
      const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
      const server = mcpServer(options.name ?? 'Fake Tools')
      await server.connect(transport)
      const replay = new Request(request.url, { method: request.method, headers: request.headers, body: text || undefined })
      const response = await transport.handleRequest(replay, body === undefined ? undefined : { parsedBody: body })
      return response
    },
  })
  const port = http.port as number
  return {
    url: `http://127.0.0.1:${port}${path}`,
    port,
    received,
    rpcMethods: () => received.flatMap((request) => request.rpc),
    reset: () => {
      received.length = 0
    },
    close: () => http.stop(true),
  }
}

/**
 * The same tools over the older HTTP+SSE transport (a GET opens the event stream at `/sse`, messages are
 * POSTed to `/messages`), which the SDK serves on node:http only. A POST to `/sse` is 405, as such a
 * server answers a Streamable HTTP client.
 */
export async function startFakeSseMcpServer(options: { name?: string } = {}): Promise<FakeMcpServer> {
  const received: ReceivedRequest[] = []
  const sessions = new Map<string, SSEServerTransport>()
  const http = createServer(async (request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1')
    received.push({
      method: request.method ?? '',
      path: url.pathname,
      authorization: request.headers.authorization ?? null,
      traceparent: (request.headers.traceparent as string | undefined) ?? null,
      rpc: [],
    })
    if (request.method === 'GET' && url.pathname === '/sse') {
      const transport = new SSEServerTransport('/messages', response)
      sessions.set(transport.sessionId, transport)
      response.on('close', () => sessions.delete(transport.sessionId))
      await mcpServer(options.name ?? 'Fake SSE Tools').connect(transport)
      return
    }
    if (request.method === 'POST' && url.pathname === '/messages') {
      const transport = sessions.get(url.searchParams.get('sessionId') ?? '')
      if (!transport) {
        response.writeHead(404).end('no such session')
        return
      }
      const chunks: Buffer[] = []
      for await (const chunk of request) chunks.push(chunk as Buffer)
      const body: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'))
      const last = received.at(-1)
      if (last) last.rpc = rpcOf(body)
      await transport.handlePostMessage(request, response, body)
      return
    }
    response.writeHead(url.pathname === '/sse' ? 405 : 404).end()
  })
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  const port = (http.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}/sse`,
    port,
    received,
    rpcMethods: () => received.flatMap((request) => request.rpc),
    reset: () => {
      received.length = 0
    },
    close: async () => {
      for (const transport of sessions.values()) await transport.close()
      http.closeAllConnections()
      await new Promise<void>((resolve) => http.close(() => resolve()))
    },
  }
}
