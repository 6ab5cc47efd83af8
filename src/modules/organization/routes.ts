import { Elysia, t } from 'elysia'
import type { Authz } from '../../http/authz'
import type { OrganizationService } from './service'
import type { OrganizationSettingsService } from './settings-service'

const OrgParams = t.Object({ id: t.String() })
const Data = t.Record(t.String(), t.Unknown(), { description: 'free-form onboarding answers' })

/** The organisation itself (spec 4.6): who I am in it (`org.read`), and its settings (`org.settings.write`). */
export const organizationRoutes = (authz: Authz, organizations: OrganizationService, settings: OrganizationSettingsService) =>
  new Elysia({ name: 'organization-routes' })
    .use(authz)
    .get(
      '/v1/organization/:id/permissions/me',
      ({ principal }) => ({ data: organizations.permissionsOf(principal), error: null }),
      {
        catalogued: true,
        params: OrgParams,
        detail: { summary: "The caller's effective permissions in this organization" },
      },
    )
    .get('/v1/organization/settings', async ({ principal }) => ({ data: await settings.get(principal), error: null }), {
      authenticated: true,
      detail: { summary: "The caller's organization: details, onboarding, terms, body retention and PII redaction" },
    })
    .post(
      '/v1/organization/:id/update',
      async ({ principal, body }) => ({ data: await settings.rename(principal, body.name), error: null }),
      {
        catalogued: true,
        params: OrgParams,
        body: t.Object({ name: t.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false }),
        detail: { summary: "Change the organization's details" },
      },
    )
    .post(
      '/v1/organization/onboard',
      async ({ principal, body }) => ({ data: await settings.startOnboarding(principal, body.data), error: null }),
      {
        catalogued: true,
        body: t.Object({ data: t.Optional(Data) }, { additionalProperties: false }),
        detail: { summary: 'Start onboarding' },
      },
    )
    .post(
      '/v1/organization/update_onboarding',
      async ({ principal, body }) => ({ data: await settings.updateOnboarding(principal, body), error: null }),
      {
        catalogued: true,
        body: t.Object(
          { step: t.Optional(t.String({ maxLength: 100 })), completed: t.Optional(t.Boolean()), data: t.Optional(Data) },
          { additionalProperties: false },
        ),
        detail: { summary: 'Record onboarding progress' },
      },
    )
    .post(
      '/v1/organization/user/accept_terms',
      async ({ principal, body }) => ({ data: await settings.acceptTerms(principal, body.version), error: null }),
      {
        catalogued: true,
        body: t.Object({ version: t.String({ minLength: 1, maxLength: 50 }) }, { additionalProperties: false }),
        detail: { summary: 'Accept the terms (a person, with a session)' },
      },
    )
    .post(
      '/v1/organization/body-retention-config',
      async ({ principal, body }) => ({ data: await settings.setBodyRetention(principal, body), error: null }),
      {
        catalogued: true,
        body: t.Object(
          {
            mode: t.Union([t.Literal('none'), t.Literal('days')], { error: 'mode must be none (store no bodies) or days' }),
            days: t.Optional(t.Integer({ minimum: 1, maximum: 3650 })),
          },
          { additionalProperties: false },
        ),
        detail: { summary: 'How long request and response bodies are kept, or none' },
      },
    )
    .post(
      '/v1/organization/pii-config',
      async ({ principal, body }) => ({ data: await settings.setPiiRedaction(principal, body.redact), error: null }),
      {
        catalogued: true,
        body: t.Object({ redact: t.Boolean() }, { additionalProperties: false }),
        detail: { summary: 'Redact emails, phone and card numbers and secrets in stored bodies' },
      },
    )
