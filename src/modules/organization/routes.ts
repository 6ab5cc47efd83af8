import { Elysia } from 'elysia'
import { answer } from '../../http/answer'
import type { Authz } from '../../http/authz'
import { Ok } from '../../http/schema'
import {
  AcceptTermsBody,
  BodyRetentionBody,
  MyPermissions,
  OrganizationSettings,
  OrgParams,
  PiiRedactionBody,
  RenameBody,
  RequestRetentionBody,
  StartOnboardingBody,
  StreamMetaBody,
  UpdateOnboardingBody,
} from './model'
import type { OrganizationService } from './service'
import type { OrganizationSettingsService } from './settings-service'

/** The organisation itself (spec 4.6): who I am in it (`org.read`), and its settings (`org.settings.write`). */
export const organizationRoutes = (authz: Authz, organizations: OrganizationService, settings: OrganizationSettingsService) =>
  new Elysia({ name: 'organization-routes' })
    .use(authz)
    .get('/v1/organization/:id/permissions/me', ({ principal }) => answer(organizations.permissionsOf(principal)), {
      catalogued: true,
      params: OrgParams,
      response: Ok(MyPermissions),
      detail: { summary: "The caller's effective permissions in this organization" },
    })
    .get('/v1/organization/settings', ({ principal }) => answer(settings.get(principal)), {
      authenticated: true,
      response: Ok(OrganizationSettings),
      detail: {
        summary: "The caller's organization: details, onboarding, terms, record and body retention and PII redaction",
      },
    })
    .post('/v1/organization/:id/update', ({ principal, body }) => answer(settings.rename(principal, body.name)), {
      catalogued: true,
      params: OrgParams,
      body: RenameBody,
      response: Ok(OrganizationSettings),
      detail: { summary: "Change the organization's details" },
    })
    .post('/v1/organization/onboard', ({ principal, body }) => answer(settings.startOnboarding(principal, body.data)), {
      catalogued: true,
      body: StartOnboardingBody,
      response: Ok(OrganizationSettings),
      detail: { summary: 'Start onboarding' },
    })
    .post('/v1/organization/update_onboarding', ({ principal, body }) => answer(settings.updateOnboarding(principal, body)), {
      catalogued: true,
      body: UpdateOnboardingBody,
      response: Ok(OrganizationSettings),
      detail: { summary: 'Record onboarding progress' },
    })
    .post('/v1/organization/user/accept_terms', ({ principal, body }) => answer(settings.acceptTerms(principal, body.version)), {
      catalogued: true,
      body: AcceptTermsBody,
      response: Ok(OrganizationSettings),
      detail: { summary: 'Accept the terms (a person, with a session)' },
    })
    .post('/v1/organization/body-retention-config', ({ principal, body }) => answer(settings.setBodyRetention(principal, body)), {
      catalogued: true,
      body: BodyRetentionBody,
      response: Ok(OrganizationSettings),
      detail: { summary: 'How long request and response bodies are kept, or none' },
    })
    .post(
      '/v1/organization/request-retention-config',
      ({ principal, body }) => answer(settings.setRequestRetention(principal, body)),
      {
        catalogued: { auditTarget: 'organization' },
        body: RequestRetentionBody,
        response: Ok(OrganizationSettings),
        detail: {
          summary:
            "How long request records are kept: the operator's default, or fewer days (never fewer than the longest budget window)",
        },
      },
    )
    .post('/v1/organization/pii-config', ({ principal, body }) => answer(settings.setPiiRedaction(principal, body.redact)), {
      catalogued: true,
      body: PiiRedactionBody,
      response: Ok(OrganizationSettings),
      detail: { summary: 'Redact emails, phone and card numbers and secrets in stored bodies' },
    })
    .post(
      '/v1/organization/stream-meta-config',
      ({ principal, body }) => answer(settings.setStreamMetaFrame(principal, body.frame)),
      {
        catalogued: true,
        body: StreamMetaBody,
        response: Ok(OrganizationSettings),
        detail: {
          summary: "End every stream with the gw metadata frame, or only a call's that sends Gw-Stream-Meta: frame",
        },
      },
    )
