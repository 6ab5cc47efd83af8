import { and, eq, lt } from 'drizzle-orm'
import type { Database } from '../database'

export interface OrganizationSettings {
  orgId: string
  onboarding: Record<string, unknown> | null
  termsAcceptedAt: Date | null
  termsAcceptedBy: string | null
  termsVersion: string | null
  bodyRetentionDays: number | null
  piiRedaction: boolean
  updatedAt: Date
}

/** Until an organisation sets them: bodies kept 30 days, no redaction, no onboarding, no terms. */
export const DEFAULT_BODY_RETENTION_DAYS = 30
export const defaultSettings = (orgId: string): OrganizationSettings => ({
  orgId,
  onboarding: null,
  termsAcceptedAt: null,
  termsAcceptedBy: null,
  termsVersion: null,
  bodyRetentionDays: DEFAULT_BODY_RETENTION_DAYS,
  piiRedaction: false,
  updatedAt: new Date(0),
})

export const organizationSettingsRepository = ({ orm, tables: { organizationSettings, requestBodies } }: Database) => ({
  async get(orgId: string): Promise<OrganizationSettings> {
    const [row] = await orm.select().from(organizationSettings).where(eq(organizationSettings.orgId, orgId)).limit(1)
    return row ?? defaultSettings(orgId)
  },
  async list(): Promise<OrganizationSettings[]> {
    return orm.select().from(organizationSettings)
  },
  /** Changes some settings, creating the row with the defaults for the rest when there is none. */
  async update(orgId: string, change: Partial<Omit<OrganizationSettings, 'orgId'>>): Promise<OrganizationSettings> {
    const next = { ...(await this.get(orgId)), ...change, updatedAt: new Date() }
    await orm
      .insert(organizationSettings)
      .values(next)
      .onConflictDoUpdate({ target: organizationSettings.orgId, set: { ...change, updatedAt: next.updatedAt } })
    return next
  },
  /** The retention job: one organisation's bodies older than the cut-off go. */
  async deleteBodiesBefore(orgId: string, cutoff: Date): Promise<number> {
    const rows = await orm
      .delete(requestBodies)
      .where(and(eq(requestBodies.orgId, orgId), lt(requestBodies.createdAt, cutoff)))
      .returning({ id: requestBodies.requestId })
    return rows.length
  },
})
