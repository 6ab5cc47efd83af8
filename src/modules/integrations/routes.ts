import { Elysia, t } from 'elysia'
import { answer, answerCreated } from '../../http/answer'
import type { Authz } from '../../http/authz'
import { Created, Ok } from '../../http/schema'
import {
  CreateIntegrationBody,
  IntegrationParams,
  IntegrationView,
  MeterEventResult,
  SlackChannel,
  TestMeterEventBody,
  TypeParams,
  UpdateIntegrationBody,
} from './model'
import type { IntegrationsService } from './service'

/** Integrations with other services (spec 4.6 `egress.write`): Slack and Stripe. */
export const integrationRoutes = (authz: Authz, integrations: IntegrationsService) =>
  new Elysia({ name: 'integration-routes' })
    .use(authz)
    .get('/v1/integration', ({ principal }) => answer(integrations.list(principal)), {
      catalogued: true,
      response: Ok(t.Array(IntegrationView)),
      detail: { summary: "The organization's integrations, secrets masked" },
    })
    .post('/v1/integration', ({ principal, body }) => answerCreated(integrations.create(principal, body)), {
      catalogued: true,
      body: CreateIntegrationBody,
      response: Created(IntegrationView),
      detail: { summary: 'Add an integration (one of each type); its secrets are never shown again' },
    })
    .get('/v1/integration/slack/settings', ({ principal }) => answer(integrations.ofType(principal, 'slack')), {
      catalogued: true,
      response: Ok(IntegrationView),
      detail: { summary: 'The Slack integration' },
    })
    .get('/v1/integration/slack/channels', ({ principal }) => answer(integrations.slackChannels(principal)), {
      catalogued: true,
      response: Ok(t.Array(SlackChannel)),
      detail: { summary: "The channels the Slack integration's bot token sees" },
    })
    .get('/v1/integration/type/:type', ({ principal, params }) => answer(integrations.ofType(principal, params.type)), {
      catalogued: true,
      params: TypeParams,
      response: Ok(IntegrationView),
      detail: { summary: 'The integration of one type' },
    })
    .get('/v1/integration/:integrationId', ({ principal, params }) => answer(integrations.get(principal, params.integrationId)), {
      catalogued: true,
      params: IntegrationParams,
      response: Ok(IntegrationView),
      detail: { summary: 'One integration' },
    })
    .post(
      '/v1/integration/:integrationId',
      ({ principal, params, body }) => answer(integrations.update(principal, params.integrationId, body)),
      {
        catalogued: true,
        params: IntegrationParams,
        body: UpdateIntegrationBody,
        response: Ok(IntegrationView),
        detail: { summary: 'Change settings (an empty string clears one) or switch it on or off' },
      },
    )
    .post(
      '/v1/integration/:integrationId/stripe/test-meter-event',
      ({ principal, params, body }) => answer(integrations.testMeterEvent(principal, params.integrationId, body)),
      {
        catalogued: true,
        params: IntegrationParams,
        body: TestMeterEventBody,
        response: Ok(MeterEventResult),
        detail: { summary: 'Send one Stripe meter event for a customer now' },
      },
    )
