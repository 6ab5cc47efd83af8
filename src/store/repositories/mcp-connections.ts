import { desc, eq } from 'drizzle-orm'
import type { Database } from '../database'

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

/** Both MCP connection tables, read organisation-wide; what writes them comes with the MCP work. */
export const mcpConnectionsRepository = ({ orm, tables: { mcpConnections, mcpUpstreamConnections } }: Database) => ({
  async listForOrg(orgId: string): Promise<McpConnection[]> {
    return orm.select().from(mcpConnections).where(eq(mcpConnections.orgId, orgId)).orderBy(desc(mcpConnections.createdAt))
  },
  async listUpstreamForOrg(orgId: string): Promise<McpUpstreamConnection[]> {
    return orm
      .select()
      .from(mcpUpstreamConnections)
      .where(eq(mcpUpstreamConnections.orgId, orgId))
      .orderBy(desc(mcpUpstreamConnections.createdAt))
  },
  async add(connection: McpConnection): Promise<void> {
    await orm.insert(mcpConnections).values(connection)
  },
})
