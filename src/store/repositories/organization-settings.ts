import { orgRead } from '../compiled-read'
import type { Database } from '../database'
import { orgRows } from '../scope'
import type { Clock } from '../store'

export interface OrganizationSettings {
  orgId: string
  onboarding: Record<string, unknown> | null
  termsAcceptedAt: Date | null
  termsAcceptedBy: string | null
  termsVersion: string | null
  bodyRetentionDays: number | null
  /** Days the organisation keeps its request records, within the operator's bound; null: the operator's default. */
  requestRetentionDays: number | null
  piiRedaction: boolean
  streamMetaFrame: boolean
  budgetTimezone: string
  budgetWeekStart: number
  budgetMonthStartDay: number
  alertThresholds: number[] | null
  alertChannels: string[] | null
  updatedAt: Date
}

/** Until an organisation sets them: bodies kept 30 days, records the operator's default, no redaction, no onboarding, no terms. */
export const DEFAULT_BODY_RETENTION_DAYS = 30
export const defaultSettings = (orgId: string): OrganizationSettings => ({
  orgId,
  onboarding: null,
  termsAcceptedAt: null,
  termsAcceptedBy: null,
  termsVersion: null,
  bodyRetentionDays: DEFAULT_BODY_RETENTION_DAYS,
  requestRetentionDays: null,
  piiRedaction: false,
  streamMetaFrame: false,
  budgetTimezone: 'UTC',
  budgetWeekStart: 1,
  budgetMonthStartDay: 1,
  alertThresholds: null,
  alertChannels: null,
  updatedAt: new Date(0),
})

/** One organisation's settings. */
export const organizationSettingsRepository = (
  { orm, dialect, tables: { organizationSettings } }: Database,
  orgId: string,
  now: Clock,
) => {
  const settings = orgRows(organizationSettings, orgId)
  // Read every second for each organisation in use (the body policy, spend policy): compiled once (compiled-read.ts).
  const row = orgRead<OrganizationSettings>({ orm, dialect }, settings, 'organizationSettings.get', (where) =>
    orm.select().from(organizationSettings).where(where()).limit(1),
  )
  const get = async (): Promise<OrganizationSettings> => (await row())[0] ?? defaultSettings(orgId)
  return {
    get,
    /** Changes some settings, creating the row with the defaults for the rest when there is none. */
    async update(change: Partial<Omit<OrganizationSettings, 'orgId'>>): Promise<OrganizationSettings> {
      const next = { ...(await get()), ...change, updatedAt: new Date(now()) }
      await orm
        .insert(organizationSettings)
        .values(settings.row(next))
        .onConflictDoUpdate({ target: organizationSettings.orgId, set: { ...change, updatedAt: next.updatedAt } })
      return next
    },
  }
}

/** Every organisation's settings: for the retention job, which visits each organisation in turn. */
export const allSettingsRepository = ({ orm, tables: { organizationSettings } }: Database) => ({
  async list(): Promise<OrganizationSettings[]> {
    return orm.select().from(organizationSettings)
  },
})
