import { Value } from '@sinclair/typebox/value'
import type { Principal } from '../../auth/principal'
import { maskSecret, sealContexts, type Vault } from '../../auth/vault'
import { DEFAULT_METER_EVENT } from '../../egress/events'
import type { EgressPolicy } from '../../egress/policy'
import { ServiceFailure, type ServiceUrls, slackChannels, stripeMeterEvent } from '../../egress/services'
import { ApiError, badRequest, conflict, egressDisabled, notFound } from '../../errors'
import type { Integration, IntegrationType } from '../../store/repositories/integrations'
import type { Store } from '../../store/store'
import { type CreateIntegrationInput, INTEGRATION_KINDS, type TestMeterEventInput, type UpdateIntegrationInput } from './model'

const view = (integration: Integration) => ({
  id: integration.id,
  type: integration.type,
  active: integration.active,
  settings: { ...integration.settings, ...integration.secretHints },
  secrets: Object.keys(integration.secretHints).sort(),
  createdAt: integration.createdAt.toISOString(),
  updatedAt: integration.updatedAt.toISOString(),
})

/** Another service's refusal, or its absence: the caller's request was fine, the other side was not. */
const upstream = (failure: ServiceFailure) => new ApiError('upstream_error', failure.message)

/** Integrations (spec 4.6 `egress.write`): Slack and Stripe, one of each per organisation. */
export class IntegrationsService {
  constructor(
    private readonly store: Store,
    private readonly vault: Vault,
    private readonly egress: EgressPolicy,
    private readonly urls: ServiceUrls,
    private readonly now: () => number = Date.now,
  ) {}

  async list(principal: Principal) {
    return (await this.store.org(principal.orgId).integrations.list()).map(view)
  }

  async get(principal: Principal, id: string) {
    return view(await this.own(principal, id))
  }

  async ofType(principal: Principal, type: IntegrationType) {
    const integration = await this.store.org(principal.orgId).integrations.ofType(type)
    if (!integration) throw notFound(`${type} integration`)
    return view(integration)
  }

  async create(principal: Principal, input: CreateIntegrationInput) {
    if (!this.egress.enabled) throw egressDisabled()
    const org = this.store.org(principal.orgId).integrations
    const existing = await org.ofType(input.type)
    if (existing)
      throw conflict(
        `this organization has a ${input.type} integration already: change it with POST /v1/integration/${existing.id}`,
      )
    const id = crypto.randomUUID()
    const at = new Date(this.now())
    const fields = await this.fieldsOf(input.type, { orgId: principal.orgId, id }, {}, input.settings)
    await org.add({ id, type: input.type, active: input.active ?? true, ...fields, createdAt: at, updatedAt: at })
    return this.get(principal, id)
  }

  /** Changes some settings (an empty string clears one, secrets included) or switches it on or off. */
  async update(principal: Principal, id: string, input: UpdateIntegrationInput) {
    const integration = await this.own(principal, id)
    if (input.settings === undefined && input.active === undefined) throw badRequest('nothing to change: send settings or active')
    if (input.settings !== undefined && !this.egress.enabled) throw egressDisabled()
    const current = { ...integration.settings, ...(await this.openSecrets(integration)) }
    const fields =
      input.settings === undefined ? integration : await this.fieldsOf(integration.type, integration, current, input.settings)
    await this.store.org(principal.orgId).integrations.update(id, {
      active: input.active ?? integration.active,
      settings: fields.settings,
      sealedSecrets: fields.sealedSecrets,
      secretHints: fields.secretHints,
      updatedAt: new Date(this.now()),
    })
    return this.get(principal, id)
  }

  async slackChannels(principal: Principal) {
    const slack = await this.store.org(principal.orgId).integrations.ofType('slack')
    if (!slack) throw notFound('slack integration')
    const token = (await this.openSecrets(slack)).botToken
    if (!token) throw badRequest('the Slack integration has no botToken: listing channels needs one')
    if (!this.egress.enabled) throw egressDisabled()
    try {
      return await slackChannels(this.urls.slackApiUrl, token)
    } catch (error) {
      throw error instanceof ServiceFailure ? upstream(error) : error
    }
  }

  /** Sends one meter event for a customer now, as the metering would, under an identifier of its own. */
  async testMeterEvent(principal: Principal, id: string, input: TestMeterEventInput) {
    const integration = await this.own(principal, id)
    if (integration.type !== 'stripe') throw badRequest(`integration ${id} is ${integration.type}, not stripe`)
    if (!this.egress.enabled) throw egressDisabled()
    const eventName = integration.settings.meterEventName ?? DEFAULT_METER_EVENT
    try {
      const sent = await stripeMeterEvent(this.urls.stripeApiUrl, (await this.openSecrets(integration)).secretKey ?? '', {
        eventName,
        customerId: input.customerId,
        value: input.value ?? 1,
        identifier: `gw-test-${crypto.randomUUID()}`,
        at: new Date(this.now()),
      })
      return { ok: true as const, identifier: sent.identifier, eventName }
    } catch (error) {
      throw error instanceof ServiceFailure ? upstream(error) : error
    }
  }

  private async own(principal: Principal, id: string): Promise<Integration> {
    const integration = await this.store.org(principal.orgId).integrations.get(id)
    if (!integration) throw notFound('integration')
    return integration
  }

  private async openSecrets(integration: Integration): Promise<Record<string, string>> {
    const opened = await this.vault.open(integration.sealedSecrets, sealContexts.integrationSecrets(integration))
    return JSON.parse(opened) as Record<string, string>
  }

  /**
   * The stored form of settings: `changes` over `current` (an empty string removes a setting), checked
   * against the type's schema, secrets sealed together and kept masked for reads.
   */
  private async fieldsOf(
    type: IntegrationType,
    row: { orgId: string; id: string },
    current: Record<string, string>,
    changes: Record<string, string>,
  ) {
    const kind = INTEGRATION_KINDS[type]
    const merged = Object.fromEntries(Object.entries({ ...current, ...changes }).filter(([, value]) => value !== ''))
    const invalid = Value.Errors(kind.settings, merged).First()
    if (invalid) {
      const field = invalid.path.replace(/^\//, '')
      const own = typeof invalid.schema.error === 'string' ? invalid.schema.error : undefined
      throw badRequest(
        field === '' || !(field in kind.settings.properties)
          ? `${type} settings take only ${Object.keys(kind.settings.properties).join(', ')}`
          : `invalid settings at "${field}": ${own ?? invalid.message}`,
      )
    }
    if (!kind.needsOneOf.some((field) => merged[field] !== undefined))
      throw badRequest(`a ${type} integration needs ${kind.needsOneOf.join(' or ')}`)
    if (merged.webhookUrl !== undefined) this.egress.requireSavable(merged.webhookUrl, 'webhookUrl')
    const secrets = Object.fromEntries(Object.entries(merged).filter(([field]) => kind.secrets.includes(field)))
    return {
      settings: Object.fromEntries(Object.entries(merged).filter(([field]) => !kind.secrets.includes(field))),
      sealedSecrets: await this.vault.seal(JSON.stringify(secrets), sealContexts.integrationSecrets(row)),
      secretHints: Object.fromEntries(Object.entries(secrets).map(([field, value]) => [field, maskSecret(value)])),
    }
  }
}
