import { Elysia, t } from 'elysia'
import { answer, answerCreated } from '../../http/answer'
import type { Authz } from '../../http/authz'
import { Created, Deleted, Ok } from '../../http/schema'
import { CreatedWebhook, CreateWebhookBody, DeliveryView, TestResult, WebhookParams, WebhookView } from './model'
import type { WebhooksService } from './service'

/** Webhooks (spec 4.6 `egress.write`; the delivery list is gw's own, for the console and for operators). */
export const webhookRoutes = (authz: Authz, webhooks: WebhooksService) =>
  new Elysia({ name: 'webhook-routes' })
    .use(authz)
    .get('/v1/webhooks', ({ principal }) => answer(webhooks.list(principal)), {
      catalogued: true,
      response: Ok(t.Array(WebhookView)),
      detail: { summary: "The organization's webhooks, each with its last delivery" },
    })
    .post('/v1/webhooks', ({ principal, body }) => answerCreated(webhooks.create(principal, body)), {
      catalogued: true,
      body: CreateWebhookBody,
      response: Created(CreatedWebhook),
      detail: { summary: 'Create a webhook; its signing secret is in this answer only' },
    })
    .delete('/v1/webhooks/:webhookId', ({ principal, params }) => answer(webhooks.remove(principal, params.webhookId)), {
      catalogued: true,
      params: WebhookParams,
      response: Ok(Deleted),
      detail: { summary: 'Delete a webhook and what waits to be sent to it' },
    })
    .post('/v1/webhooks/:webhookId/test', ({ principal, params }) => answer(webhooks.test(principal, params.webhookId)), {
      catalogued: true,
      params: WebhookParams,
      response: Ok(TestResult),
      detail: { summary: 'Send a webhook.test event now and say how the destination answered' },
    })
    .get(
      '/v1/webhooks/:webhookId/deliveries',
      ({ principal, params }) => answer(webhooks.deliveries(principal, params.webhookId)),
      {
        catalogued: true,
        params: WebhookParams,
        response: Ok(t.Array(DeliveryView)),
        detail: { summary: "A webhook's latest deliveries (100), newest first, with their attempts and next attempt" },
      },
    )
