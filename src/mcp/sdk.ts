/**
 * The MCP SDK, loaded on first use. Evaluating it (the protocol's zod schemas) took about 13 ms of
 * every start-up, before the health check could answer, for what only MCP calls and server
 * registrations need (bench/results/2026-11-27-cold-start.md). Types are imported as types only, so
 * nothing here evaluates the SDK until a loader is called.
 */
const once = <T>(load: () => Promise<T>): (() => Promise<T>) => {
  let loaded: Promise<T> | undefined
  return () => {
    loaded ??= load()
    return loaded
  }
}

/** gw as a client of a registered server. */
export const clientSdk = once(async () => {
  const [{ Client }, { SSEClientTransport }, { StreamableHTTPClientTransport }] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/sse.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
  ])
  return { Client, SSEClientTransport, StreamableHTTPClientTransport }
})

/** gw as an MCP server to its callers. */
export const serverSdk = once(async () => {
  const [{ Server }, { WebStandardStreamableHTTPServerTransport }, { CallToolRequestSchema, ListToolsRequestSchema, McpError }] =
    await Promise.all([
      import('@modelcontextprotocol/sdk/server/index.js'),
      import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
      import('@modelcontextprotocol/sdk/types.js'),
    ])
  return { Server, WebStandardStreamableHTTPServerTransport, CallToolRequestSchema, ListToolsRequestSchema, McpError }
})
