import { desc } from 'drizzle-orm'
import type { Database } from '../database'
import { orgRows } from '../scope'

export interface McpConnection {
  id: string
  orgId: string
  userId: string | null
  client: string
  scopes: string[]
  createdAt: Date
  revokedAt: Date | null
}

export interface McpUpstreamConnection {
  id: string
  orgId: string
  userId: string | null
  serverUrl: string
  status: string
  createdAt: Date
}

/** One organisation's MCP connections, both tables, read organisation-wide; what writes them comes with the MCP work. */
export const mcpConnectionsRepository = (
  { orm, tables: { mcpConnections, mcpUpstreamConnections } }: Database,
  orgId: string,
) => {
  const connections = orgRows(mcpConnections, orgId)
  const upstream = orgRows(mcpUpstreamConnections, orgId)
  return {
    async list(): Promise<McpConnection[]> {
      return orm.select().from(mcpConnections).where(connections.where()).orderBy(desc(mcpConnections.createdAt))
    },
    async listUpstream(): Promise<McpUpstreamConnection[]> {
      return orm.select().from(mcpUpstreamConnections).where(upstream.where()).orderBy(desc(mcpUpstreamConnections.createdAt))
    },
    async add(fields: Omit<McpConnection, 'orgId'>): Promise<void> {
      await orm.insert(mcpConnections).values(connections.row(fields))
    },
  }
}
