import { Elysia, status } from 'elysia'
import type { GatewayInfo } from '../../gateway/info'
import { answer } from '../../http/answer'
import type { Authz } from '../../http/authz'
import { Ok } from '../../http/schema'
import { Feedback, FeedbackBody, GatewayMeta, MetaParams, Model, ModelList, ModelParams, Pending } from './model'

/**
 * The gateway's routes besides dispatch, for gateway-scoped keys. The model list and the metadata are
 * answered in the shapes their callers read (OpenAI's list, spec 4.2's metadata), not in the envelope.
 */
export const gatewayInfoRoutes = (authz: Authz, info: GatewayInfo) =>
  new Elysia({ name: 'gateway-info-routes' })
    .use(authz)
    .get('/v1/models', ({ principal }) => info.models(principal), {
      gateway: true,
      response: { 200: ModelList },
      detail: { summary: 'Models the caller can reach (OpenAI list shape)' },
    })
    .get('/v1/models/*', ({ principal, params }) => info.model(principal, params['*']), {
      gateway: true,
      params: ModelParams,
      response: { 200: Model },
      detail: { summary: 'One model the caller can reach, by id (OpenAI model shape)' },
    })
    .post('/v1/feedback', ({ principal, body }) => answer(info.feedback(principal, body.requestId, body.rating)), {
      gateway: true,
      body: FeedbackBody,
      response: Ok(Feedback),
      detail: { summary: "Rate one of the caller's own requests" },
    })
    .get(
      '/gateway/v1/meta/:requestId',
      async ({ principal, params }) => {
        const meta = await info.meta(principal, params.requestId)
        return meta === 'pending' ? status(202, { status: 'pending' as const }) : meta
      },
      {
        gateway: true,
        params: MetaParams,
        response: { 200: GatewayMeta, 202: Pending },
        detail: { summary: 'Metadata of a finished request (spec 4.2); 202 while it is not known yet' },
      },
    )
