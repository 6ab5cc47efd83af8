import { and, desc, eq } from 'drizzle-orm'
import type { Database } from '../database'

export interface ProviderKeyRecord {
  id: string
  orgId: string
  provider: 'openai' | 'anthropic'
  name: string
  baseUrl: string | null
  sealedSecret: string
  hint: string
  createdAt: Date
  updatedAt: Date
}

/** Scoped by organisation throughout: another organisation's provider key is not found. */
export const providerKeysRepository = ({ orm, tables: { providerKeys, apiKeys } }: Database) => ({
  async create(key: ProviderKeyRecord): Promise<void> {
    await orm.insert(providerKeys).values(key)
  },
  async list(orgId: string): Promise<ProviderKeyRecord[]> {
    return orm
      .select()
      .from(providerKeys)
      .where(eq(providerKeys.orgId, orgId))
      .orderBy(desc(providerKeys.createdAt), desc(providerKeys.id))
  },
  async get(orgId: string, id: string): Promise<ProviderKeyRecord | undefined> {
    const [row] = await orm
      .select()
      .from(providerKeys)
      .where(and(eq(providerKeys.orgId, orgId), eq(providerKeys.id, id)))
      .limit(1)
    return row
  },
  /** The key the gateway uses for a provider: the organisation's newest one. */
  async newestFor(orgId: string, provider: ProviderKeyRecord['provider']): Promise<ProviderKeyRecord | undefined> {
    const [row] = await orm
      .select()
      .from(providerKeys)
      .where(and(eq(providerKeys.orgId, orgId), eq(providerKeys.provider, provider)))
      .orderBy(desc(providerKeys.createdAt), desc(providerKeys.id))
      .limit(1)
    return row
  },
  async update(
    orgId: string,
    id: string,
    change: Partial<Pick<ProviderKeyRecord, 'name' | 'baseUrl' | 'sealedSecret' | 'hint' | 'updatedAt'>>,
  ) {
    const [row] = await orm
      .update(providerKeys)
      .set(change)
      .where(and(eq(providerKeys.orgId, orgId), eq(providerKeys.id, id)))
      .returning()
    return row as ProviderKeyRecord | undefined
  },
  /** Every organisation's keys: for re-sealing them when the server secret is rotated, nothing else. */
  async listAll(): Promise<ProviderKeyRecord[]> {
    return orm.select().from(providerKeys)
  },
  async reseal(orgId: string, id: string, sealedSecret: string): Promise<void> {
    await orm
      .update(providerKeys)
      .set({ sealedSecret })
      .where(and(eq(providerKeys.orgId, orgId), eq(providerKeys.id, id)))
  },
  /** Deletes the key and the proxy keys bound to it, which would otherwise reach nothing. */
  async delete(orgId: string, id: string): Promise<boolean> {
    await orm.delete(apiKeys).where(and(eq(apiKeys.orgId, orgId), eq(apiKeys.providerKeyId, id)))
    const rows = await orm
      .delete(providerKeys)
      .where(and(eq(providerKeys.orgId, orgId), eq(providerKeys.id, id)))
      .returning({ id: providerKeys.id })
    return rows.length > 0
  },
})
