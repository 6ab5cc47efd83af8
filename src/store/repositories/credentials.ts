import { desc, eq, isNull } from 'drizzle-orm'
import { rowById } from '../compiled-read'
import type { Database } from '../database'
import { orgRows } from '../scope'

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

/**
 * Credentials by their own id, whatever their organisation: authentication reads them before it
 * knows the organisation (the credential says which), and a session ends itself by its id.
 */
export const credentialsRepository = ({ orm, dialect, tables: { sessions, apiKeys } }: Database) => {
  // Read whenever the authenticator's cache of a credential expires: once a second for each in use.
  const sessionById = rowById<SessionRecord>({ orm, dialect }, sessions)
  const apiKeyById = rowById<ApiKeyRecord>({ orm, dialect }, apiKeys)
  return {
    session(id: string): Promise<SessionRecord | undefined> {
      return sessionById(id)
    },
    async revokeSession(id: string, at: Date): Promise<void> {
      await orm.update(sessions).set({ revokedAt: at }).where(eq(sessions.id, id))
    },
    apiKey(id: string): Promise<ApiKeyRecord | undefined> {
      return apiKeyById(id)
    },
    async touchApiKey(id: string, at: Date): Promise<void> {
      await orm.update(apiKeys).set({ lastUsedAt: at }).where(eq(apiKeys.id, id))
    },
  }
}

/** One organisation's sessions. */
export const sessionsRepository = ({ orm, tables: { sessions } }: Database, orgId: string) => {
  const session = orgRows(sessions, orgId)
  const live = (userId: string) => session.where(eq(sessions.userId, userId), isNull(sessions.revokedAt))
  return {
    async create(fields: Omit<SessionRecord, 'orgId'>): Promise<void> {
      await orm.insert(sessions).values(session.row(fields))
    },
    /** Ends every live session of a person in the organisation; returns their ids, for the caches. */
    async revokeAllOf(userId: string, at: Date): Promise<string[]> {
      const rows = await orm.update(sessions).set({ revokedAt: at }).where(live(userId)).returning({ id: sessions.id })
      return rows.map((r) => r.id)
    },
    async listIds(): Promise<string[]> {
      const rows = await orm.select({ id: sessions.id }).from(sessions).where(session.where())
      return rows.map((r) => r.id)
    },
    async listLiveOf(userId: string): Promise<string[]> {
      const rows = await orm.select({ id: sessions.id }).from(sessions).where(live(userId))
      return rows.map((r) => r.id)
    },
  }
}

/** One organisation's API keys: another organisation's key is not found. */
export const apiKeysRepository = ({ orm, tables: { apiKeys } }: Database, orgId: string) => {
  const key = orgRows(apiKeys, orgId)
  return {
    async create(fields: Omit<ApiKeyRecord, 'orgId'>): Promise<void> {
      await orm.insert(apiKeys).values(key.row(fields))
    },
    async list(): Promise<ApiKeyRecord[]> {
      return orm.select().from(apiKeys).where(key.where()).orderBy(desc(apiKeys.createdAt), desc(apiKeys.id))
    },
    async get(id: string): Promise<ApiKeyRecord | undefined> {
      const [row] = await orm
        .select()
        .from(apiKeys)
        .where(key.where(eq(apiKeys.id, id)))
        .limit(1)
      return row
    },
    async update(
      id: string,
      change: Partial<Pick<ApiKeyRecord, 'name' | 'expiresAt' | 'scopes' | 'revokedAt'>>,
    ): Promise<ApiKeyRecord | undefined> {
      const [row] = await orm
        .update(apiKeys)
        .set(change)
        .where(key.where(eq(apiKeys.id, id)))
        .returning()
      return row
    },
  }
}
