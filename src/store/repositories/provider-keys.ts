import { count, desc, eq, sql } from 'drizzle-orm'
import type { ProviderName } from '../../directory/providers'
import { orgRead } from '../compiled-read'
import type { Database } from '../database'
import type { ConnectionSettings } from '../json-columns'
import { orgRows } from '../scope'

export interface ProviderKeyRecord {
  id: string
  orgId: string
  provider: ProviderName
  name: string
  baseUrl: string | null
  sealedSecret: string
  hint: string
  /** The key's share of its provider's calls among the organisation's keys; 0: a standby key. */
  weight: number
  settings: ConnectionSettings | null
  createdAt: Date
  updatedAt: Date
}

/** One organisation's provider keys: another organisation's key is not found. */
export const providerKeysRepository = ({ orm, dialect, tables: { providerKeys, apiKeys } }: Database, orgId: string) => {
  const key = orgRows(providerKeys, orgId)
  // Read every second for each organisation and provider in use (directory/connections.ts): compiled once (compiled-read.ts).
  const listOfProvider = orgRead<ProviderKeyRecord>({ orm, dialect }, key, 'providerKeys.listFor', (where) =>
    orm
      .select()
      .from(providerKeys)
      .where(where(eq(providerKeys.provider, sql.placeholder('provider'))))
      .orderBy(desc(providerKeys.createdAt), desc(providerKeys.id)),
  )
  const apiKey = orgRows(apiKeys, orgId)
  return {
    async create(fields: Omit<ProviderKeyRecord, 'orgId'>): Promise<void> {
      await orm.insert(providerKeys).values(key.row(fields))
    },
    async list(): Promise<ProviderKeyRecord[]> {
      return orm.select().from(providerKeys).where(key.where()).orderBy(desc(providerKeys.createdAt), desc(providerKeys.id))
    },
    async get(id: string): Promise<ProviderKeyRecord | undefined> {
      const [row] = await orm
        .select()
        .from(providerKeys)
        .where(key.where(eq(providerKeys.id, id)))
        .limit(1)
      return row
    },
    /** The key the gateway uses for a provider: the organisation's newest one. */
    async newestFor(provider: ProviderKeyRecord['provider']): Promise<ProviderKeyRecord | undefined> {
      const [row] = await orm
        .select()
        .from(providerKeys)
        .where(key.where(eq(providerKeys.provider, provider)))
        .orderBy(desc(providerKeys.createdAt), desc(providerKeys.id))
        .limit(1)
      return row
    },
    /** Every key of a provider, newest first: the keys the gateway balances a provider's calls over. */
    listFor(provider: ProviderKeyRecord['provider']): Promise<ProviderKeyRecord[]> {
      return listOfProvider({ provider })
    },
    /** How many keys the organisation has of each provider it has any of; the keys themselves stay unread. */
    async countsByProvider(): Promise<Array<{ provider: ProviderKeyRecord['provider']; keys: number }>> {
      return orm
        .select({ provider: providerKeys.provider, keys: count() })
        .from(providerKeys)
        .where(key.where())
        .groupBy(providerKeys.provider)
    },
    async update(
      id: string,
      change: Partial<Pick<ProviderKeyRecord, 'name' | 'baseUrl' | 'sealedSecret' | 'hint' | 'weight' | 'updatedAt'>>,
    ): Promise<ProviderKeyRecord | undefined> {
      const [row] = await orm
        .update(providerKeys)
        .set(change)
        .where(key.where(eq(providerKeys.id, id)))
        .returning()
      return row
    },
    /** Deletes the key and the proxy keys bound to it, which would otherwise reach nothing. */
    async delete(id: string): Promise<boolean> {
      await orm.delete(apiKeys).where(apiKey.where(eq(apiKeys.providerKeyId, id)))
      const rows = await orm
        .delete(providerKeys)
        .where(key.where(eq(providerKeys.id, id)))
        .returning({ id: providerKeys.id })
      return rows.length > 0
    },
  }
}

/** Every organisation's sealed provider keys: for re-sealing them when the server secret is rotated, nothing else. */
export const providerKeySealsRepository = ({ orm, tables: { providerKeys } }: Database) => ({
  async listAll(): Promise<ProviderKeyRecord[]> {
    return orm.select().from(providerKeys)
  },
  async reseal(orgId: string, id: string, sealedSecret: string): Promise<void> {
    await orm
      .update(providerKeys)
      .set({ sealedSecret })
      .where(orgRows(providerKeys, orgId).where(eq(providerKeys.id, id)))
  },
})
