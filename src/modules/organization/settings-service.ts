import type { Principal } from '../../auth/principal'
import type { CallSettings } from '../../directory/call-settings'
import { badRequest } from '../../errors'
import { MAX_RETENTION_DAYS, type RecordRetention } from '../../spend/retention'
import type { OrganizationSettings } from '../../store/repositories/organization-settings'
import type { Store } from '../../store/store'
import type { BodyRetentionInput, RequestRetentionInput, UpdateOnboardingInput } from './model'

const view = (s: OrganizationSettings) => ({
  onboarding: s.onboarding,
  terms: s.termsAcceptedAt
    ? { acceptedAt: s.termsAcceptedAt.toISOString(), acceptedBy: s.termsAcceptedBy, version: s.termsVersion }
    : null,
  bodyRetention: s.bodyRetentionDays === null ? { mode: 'none' as const } : { mode: 'days' as const, days: s.bodyRetentionDays },
  piiRedaction: s.piiRedaction,
  streamMetaFrame: s.streamMetaFrame,
})

/** Organisation details, onboarding, terms, the retention of request records, and the policy for stored bodies (retention, PII redaction). */
export class OrganizationSettingsService {
  constructor(
    private readonly store: Store,
    private readonly retention: RecordRetention,
    /** What calls read of the settings, told to forget it when they change. */
    private readonly callSettings: Pick<CallSettings, 'forget'>,
    private readonly now: () => number = Date.now,
  ) {}

  async get(principal: Principal) {
    const mine = this.store.org(principal.orgId)
    const [org, settings, limits] = await Promise.all([
      this.store.organizations.get(principal.orgId),
      mine.settings.get(),
      mine.budgetLimits.list(),
    ])
    return {
      id: principal.orgId,
      name: org?.name,
      tier: org?.tier,
      ...view(settings),
      requestRetention: this.retention.view(settings, limits),
    }
  }

  async rename(principal: Principal, name: string) {
    await this.store.organizations.rename(principal.orgId, name)
    return this.get(principal)
  }

  async startOnboarding(principal: Principal, data: Record<string, unknown> = {}) {
    await this.store.org(principal.orgId).settings.update({
      onboarding: { ...data, status: 'in_progress', startedAt: new Date(this.now()).toISOString() },
    })
    return this.get(principal)
  }

  async updateOnboarding(principal: Principal, input: UpdateOnboardingInput) {
    const current = (await this.store.org(principal.orgId).settings.get()).onboarding ?? {}
    const onboarding = {
      ...current,
      ...(input.data ?? {}),
      ...(input.step !== undefined ? { step: input.step } : {}),
      ...(input.completed ? { status: 'completed', completedAt: new Date(this.now()).toISOString() } : {}),
    }
    await this.store.org(principal.orgId).settings.update({ onboarding })
    return this.get(principal)
  }

  /** Terms are accepted by a person: an API key cannot accept them on anyone's behalf. */
  async acceptTerms(principal: Principal, version: string) {
    if (principal.kind !== 'session' || principal.userId === undefined)
      throw badRequest('terms are accepted by a person, with a session')
    await this.store.org(principal.orgId).settings.update({
      termsAcceptedAt: new Date(this.now()),
      termsAcceptedBy: principal.userId,
      termsVersion: version,
    })
    return this.get(principal)
  }

  async setBodyRetention(principal: Principal, input: BodyRetentionInput) {
    if (input.mode === 'days' && input.days === undefined) throw badRequest('mode "days" needs days (1 to 3650)')
    await this.store.org(principal.orgId).settings.update({
      bodyRetentionDays: input.mode === 'none' ? null : (input.days as number),
    })
    this.callSettings.forget(principal.orgId)
    return this.get(principal)
  }

  /** Records are deleted after the days given, within the operator's bound and no sooner than every budget counts them. */
  async setRequestRetention(principal: Principal, input: RequestRetentionInput) {
    const { mode, days } = input
    if (mode === 'default' && days !== undefined)
      throw badRequest('mode "default" takes the operator\'s retention: leave days out')
    if (mode === 'days') {
      if (days === undefined)
        throw badRequest(`mode "days" needs days (1 to ${this.retention.operatorDays ?? MAX_RETENTION_DAYS})`)
      await this.retention.checkDays(principal.orgId, days)
    }
    await this.store.org(principal.orgId).settings.update({ requestRetentionDays: days ?? null })
    return this.get(principal)
  }

  async setPiiRedaction(principal: Principal, redact: boolean) {
    await this.store.org(principal.orgId).settings.update({ piiRedaction: redact })
    this.callSettings.forget(principal.orgId)
    return this.get(principal)
  }

  async setStreamMetaFrame(principal: Principal, frame: boolean) {
    await this.store.org(principal.orgId).settings.update({ streamMetaFrame: frame })
    this.callSettings.forget(principal.orgId)
    return this.get(principal)
  }
}
