import { t } from '../../util/typebox'
import { UUID_V4 } from '../../util/uuid'

export const FeedbackBody = t.Object({
  requestId: t.String({ pattern: UUID_V4, error: 'requestId must be a UUID v4 (the Gw-Id header of a response)' }),
  rating: t.Union([t.Boolean(), t.Number({ minimum: -1, maximum: 1 })], {
    error: 'rating must be true/false or a number from -1 to 1',
  }),
})

export const Feedback = t.Object({ requestId: t.String(), rating: t.Number() })

export const MetaParams = t.Object({ requestId: t.String({ pattern: UUID_V4, error: 'requestId must be a UUID v4' }) })

/** OpenAI's model object, so the SDKs' `models.retrieve()` reads it. */
export const Model = t.Object({ id: t.String(), object: t.Literal('model'), created: t.Integer(), owned_by: t.String() })

/** OpenAI's model list, so the SDKs' `models.list()` reads it. */
export const ModelList = t.Object({ object: t.Literal('list'), data: t.Array(Model) })

/** A model id may hold slashes (`openai/llama3.1:8b`), so it is the rest of the path. */
export const ModelParams = t.Object({ '*': t.String({ minLength: 1, maxLength: 256 }) })

/** Spec 2.1's metadata of a finished call. */
export const GatewayMeta = t.Object({
  requestId: t.String(),
  provider: t.String(),
  model: t.String(),
  status: t.Union([t.Literal('success'), t.Literal('error')]),
  requestCost: t.Optional(t.Number({ description: 'USD' })),
  estimatedCost: t.Optional(t.Number({ description: 'USD, the worst case known before the call' })),
  creditsRemaining: t.Optional(t.Number({ description: 'USD, for calls billed to the credits' })),
  gatewayMode: t.Optional(t.Union([t.Literal('passthrough'), t.Literal('translated')])),
  translationWarning: t.Optional(t.String()),
  downgradedFrom: t.Optional(
    t.String({ description: "The model the caller asked for, when a budget's downgrade served another" }),
  ),
  attempts: t.Optional(
    t.Array(
      t.Object({
        provider: t.String(),
        model: t.String(),
        httpStatus: t.Optional(t.Integer({ description: "The provider's status; absent when no answer came" })),
        error: t.Optional(t.String({ description: 'Why the attempt failed; absent for the one that served' })),
        latencyMs: t.Number(),
      }),
      { description: 'Every provider call the request made, in order: retries, other keys, fallback steps' },
    ),
  ),
  cached: t.Optional(t.Boolean({ description: "Answered from gw's response cache: nothing was charged" })),
  cacheSavings: t.Optional(t.Number({ description: 'USD: what the cached answer cost when it was first made' })),
})

export const Pending = t.Object({ status: t.Literal('pending') })
