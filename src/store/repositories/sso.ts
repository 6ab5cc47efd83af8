import type { Database } from '../database'
import { orgRows } from '../scope'

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

/** One organisation's SSO configuration (one row at most). */
export const ssoRepository = ({ orm, tables: { ssoConfigs } }: Database, orgId: string) => {
  const config = orgRows(ssoConfigs, orgId)
  return {
    async get(): Promise<SsoConfig | undefined> {
      const [row] = await orm.select().from(ssoConfigs).where(config.where()).limit(1)
      return row
    },
    async put(fields: Omit<SsoConfig, 'orgId'>): Promise<void> {
      const row = config.row(fields)
      await orm.insert(ssoConfigs).values(row).onConflictDoUpdate({ target: ssoConfigs.orgId, set: row })
    },
    async delete(): Promise<boolean> {
      const rows = await orm.delete(ssoConfigs).where(config.where()).returning({ orgId: ssoConfigs.orgId })
      return rows.length > 0
    },
  }
}

/** Every organisation's sealed SSO client secrets: for re-sealing them when the server secret is rotated. */
export const ssoSealsRepository = ({ orm, tables: { ssoConfigs } }: Database) => ({
  async listAll(): Promise<SsoConfig[]> {
    return orm.select().from(ssoConfigs)
  },
  async reseal(orgId: string, sealedClientSecret: string): Promise<void> {
    await orm.update(ssoConfigs).set({ sealedClientSecret }).where(orgRows(ssoConfigs, orgId).where())
  },
})
