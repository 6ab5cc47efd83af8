import { and, desc, eq, isNull } from 'drizzle-orm'
import type { Database } from '../database'

export interface SessionRecord {
  id: string
  userId: string
  orgId: string
  secretHash: string
  createdAt: Date
  expiresAt: Date
  revokedAt: Date | null
}

export interface ApiKeyRecord {
  id: string
  orgId: string
  name: string
  prefix: string
  secretHash: string
  scopes: string[]
  /** Set for a proxy key: the one provider key it may use. */
  providerKeyId: string | null
  createdByUserId: string | null
  createdAt: Date
  expiresAt: Date | null
  revokedAt: Date | null
  lastUsedAt: Date | null
}

export const sessionsRepository = ({ orm, tables: { sessions } }: Database) => ({
  async create(session: SessionRecord): Promise<void> {
    await orm.insert(sessions).values(session)
  },
  async get(id: string): Promise<SessionRecord | undefined> {
    const [row] = await orm.select().from(sessions).where(eq(sessions.id, id)).limit(1)
    return row
  },
  async revoke(id: string, at: Date): Promise<void> {
    await orm.update(sessions).set({ revokedAt: at }).where(eq(sessions.id, id))
  },
  /** Ends every live session of a person in an organisation; returns their ids, for the caches. */
  async revokeAllInOrg(orgId: string, userId: string, at: Date): Promise<string[]> {
    const rows = await orm
      .update(sessions)
      .set({ revokedAt: at })
      .where(and(eq(sessions.orgId, orgId), eq(sessions.userId, userId), isNull(sessions.revokedAt)))
      .returning({ id: sessions.id })
    return rows.map((r) => r.id)
  },
  async listIdsForOrg(orgId: string): Promise<string[]> {
    const rows = await orm.select({ id: sessions.id }).from(sessions).where(eq(sessions.orgId, orgId))
    return rows.map((r) => r.id)
  },
  async listLiveInOrg(orgId: string, userId: string): Promise<string[]> {
    const rows = await orm
      .select({ id: sessions.id })
      .from(sessions)
      .where(and(eq(sessions.orgId, orgId), eq(sessions.userId, userId), isNull(sessions.revokedAt)))
    return rows.map((r) => r.id)
  },
})

export const apiKeysRepository = ({ orm, tables: { apiKeys } }: Database) => ({
  async create(key: ApiKeyRecord): Promise<void> {
    await orm.insert(apiKeys).values(key)
  },
  async get(id: string): Promise<ApiKeyRecord | undefined> {
    const [row] = await orm.select().from(apiKeys).where(eq(apiKeys.id, id)).limit(1)
    return row
  },
  async revoke(id: string, at: Date): Promise<void> {
    await orm.update(apiKeys).set({ revokedAt: at }).where(eq(apiKeys.id, id))
  },
  async touch(id: string, at: Date): Promise<void> {
    await orm.update(apiKeys).set({ lastUsedAt: at }).where(eq(apiKeys.id, id))
  },
  // The management API's reads and writes: scoped by organisation, another organisation's key is not found.
  async listForOrg(orgId: string): Promise<ApiKeyRecord[]> {
    return orm.select().from(apiKeys).where(eq(apiKeys.orgId, orgId)).orderBy(desc(apiKeys.createdAt), desc(apiKeys.id))
  },
  async getInOrg(orgId: string, id: string): Promise<ApiKeyRecord | undefined> {
    const [row] = await orm
      .select()
      .from(apiKeys)
      .where(and(eq(apiKeys.orgId, orgId), eq(apiKeys.id, id)))
      .limit(1)
    return row
  },
  async updateInOrg(
    orgId: string,
    id: string,
    change: Partial<Pick<ApiKeyRecord, 'name' | 'expiresAt' | 'scopes' | 'revokedAt'>>,
  ): Promise<ApiKeyRecord | undefined> {
    const [row] = await orm
      .update(apiKeys)
      .set(change)
      .where(and(eq(apiKeys.orgId, orgId), eq(apiKeys.id, id)))
      .returning()
    return row
  },
})
