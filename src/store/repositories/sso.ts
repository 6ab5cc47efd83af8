import { eq } from 'drizzle-orm'
import type { Database } from '../database'

export interface SsoConfig {
  orgId: string
  issuer: string
  clientId: string
  sealedClientSecret: string
  clientSecretHint: string
  domain: string | null
  domainChallenge: string | null
  domainVerifiedAt: Date | null
  enforced: boolean
  updatedAt: Date
}

export const ssoRepository = ({ orm, tables: { ssoConfigs } }: Database) => ({
  async get(orgId: string): Promise<SsoConfig | undefined> {
    const [row] = await orm.select().from(ssoConfigs).where(eq(ssoConfigs.orgId, orgId)).limit(1)
    return row
  },
  async put(config: SsoConfig): Promise<void> {
    const { orgId, ...rest } = config
    await orm.insert(ssoConfigs).values(config).onConflictDoUpdate({ target: ssoConfigs.orgId, set: rest })
  },
  async listAll(): Promise<SsoConfig[]> {
    return orm.select().from(ssoConfigs)
  },
  async reseal(orgId: string, sealedClientSecret: string): Promise<void> {
    await orm.update(ssoConfigs).set({ sealedClientSecret }).where(eq(ssoConfigs.orgId, orgId))
  },
  async delete(orgId: string): Promise<boolean> {
    const rows = await orm.delete(ssoConfigs).where(eq(ssoConfigs.orgId, orgId)).returning({ orgId: ssoConfigs.orgId })
    return rows.length > 0
  },
})
