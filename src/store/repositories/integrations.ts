import { asc, eq } from 'drizzle-orm'
import type { Database } from '../database'
import { orgRows } from '../scope'

export type IntegrationType = 'slack' | 'stripe'

export interface Integration {
  id: string
  orgId: string
  type: IntegrationType
  active: boolean
  settings: Record<string, string>
  sealedSecrets: string
  secretHints: Record<string, string>
  createdAt: Date
  updatedAt: Date
}

/** One organisation's integrations: at most one of each type (a unique index says so). */
export const integrationsRepository = ({ orm, tables: { integrations } }: Database, orgId: string) => {
  const mine = orgRows(integrations, orgId)
  return {
    async add(integration: Omit<Integration, 'orgId'>): Promise<void> {
      await orm.insert(integrations).values(mine.row(integration))
    },
    async list(): Promise<Integration[]> {
      return orm.select().from(integrations).where(mine.where()).orderBy(asc(integrations.type))
    },
    async get(id: string): Promise<Integration | undefined> {
      const [row] = await orm
        .select()
        .from(integrations)
        .where(mine.where(eq(integrations.id, id)))
        .limit(1)
      return row
    },
    async ofType(type: IntegrationType): Promise<Integration | undefined> {
      const [row] = await orm
        .select()
        .from(integrations)
        .where(mine.where(eq(integrations.type, type)))
        .limit(1)
      return row
    },
    async update(id: string, fields: Pick<Integration, 'active' | 'settings' | 'sealedSecrets' | 'secretHints' | 'updatedAt'>) {
      await orm
        .update(integrations)
        .set(fields)
        .where(mine.where(eq(integrations.id, id)))
    },
  }
}

/** Every integration's sealed secrets, across organisations: for re-sealing them under a new server secret. */
export const integrationSealsRepository = ({ orm, tables: { integrations } }: Database) => ({
  async listAll(): Promise<Integration[]> {
    return orm.select().from(integrations)
  },
  async reseal(id: string, sealedSecrets: string): Promise<void> {
    await orm.update(integrations).set({ sealedSecrets }).where(eq(integrations.id, id))
  },
})
