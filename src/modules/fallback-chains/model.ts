import { PROVIDER_NAMES } from '../../directory/providers'
import { oneOf, t } from '../../util/typebox'

export const MAX_STEPS = 10
export const MAX_STATUS_CODES = 50
export const STEP_TIMEOUT_MS = { minimum: 100, maximum: 600_000 } as const
export const MAX_RETRY_ATTEMPTS = 5
export const MAX_MIN_DELAY_MS = 10_000
export const MAX_DELAY_MS = 30_000

// No control characters (C0, DEL, C1): a model name goes into headers, logs and CSV exports.
const MODEL_NAME = '^[^\\u0000-\\u001f\\u007f-\\u009f]+$'

const modelName = (field: string, description: string) =>
  t.String({
    minLength: 1,
    maxLength: 200,
    pattern: MODEL_NAME,
    description,
    error: `${field} must be a model name of 1 to 200 characters without control characters`,
  })

export const Step = t.Object(
  {
    model: modelName(
      'steps[].model',
      'the model this step calls, as a call would name it (gpt-4o, claude-sonnet-4-5, openai/my-model); never another chain',
    ),
    provider: t.Optional(
      oneOf(PROVIDER_NAMES, {
        description: 'the provider that serves the model; absent: the one gw routes the model name to',
        error: `steps[].provider must be one of ${PROVIDER_NAMES.join(', ')}`,
      }),
    ),
    providerKeyId: t.Optional(
      t.String({
        minLength: 1,
        maxLength: 64,
        description: "one of the organization's provider keys, of the step's provider; absent: the usual choice of key",
        error: 'steps[].providerKeyId must be the id of a provider key',
      }),
    ),
    timeoutMs: t.Optional(
      t.Integer({
        ...STEP_TIMEOUT_MS,
        description: 'how long the step may take to answer (its headers) before the next step is tried',
        error: `steps[].timeoutMs must be a whole number of milliseconds from ${STEP_TIMEOUT_MS.minimum} to ${STEP_TIMEOUT_MS.maximum}`,
      }),
    ),
  },
  { additionalProperties: false },
)

export const Triggers = t.Object(
  {
    statusCodes: t.Optional(
      t.Array(t.Integer({ minimum: 400, maximum: 599, error: 'on.statusCodes must hold HTTP error statuses from 400 to 599' }), {
        minItems: 1,
        maxItems: MAX_STATUS_CODES,
        uniqueItems: true,
        description:
          'the provider statuses on which the next step is tried; absent: the defaults the answer shows, and any other 5xx. Never 400, 401, 403 or 422',
        error: `on.statusCodes must be 1 to ${MAX_STATUS_CODES} different HTTP statuses from 400 to 599`,
      }),
    ),
    timeout: t.Optional(
      t.Boolean({
        description: 'whether a step that times out moves on (default true)',
        error: 'on.timeout must be true or false',
      }),
    ),
    networkError: t.Optional(
      t.Boolean({
        description: 'whether a step that gets no answer (a refused or broken connection) moves on (default true)',
        error: 'on.networkError must be true or false',
      }),
    ),
  },
  { additionalProperties: false, description: 'when the chain moves on to its next step' },
)

export const Retry = t.Object(
  {
    attempts: t.Integer({
      minimum: 0,
      maximum: MAX_RETRY_ATTEMPTS,
      description: 'retries of a step before the next is tried',
      error: `retry.attempts must be a whole number from 0 to ${MAX_RETRY_ATTEMPTS}`,
    }),
    minDelayMs: t.Integer({
      minimum: 0,
      maximum: MAX_MIN_DELAY_MS,
      error: `retry.minDelayMs must be a whole number of milliseconds from 0 to ${MAX_MIN_DELAY_MS}`,
    }),
    maxDelayMs: t.Integer({
      minimum: 0,
      maximum: MAX_DELAY_MS,
      description: 'at least minDelayMs',
      error: `retry.maxDelayMs must be a whole number of milliseconds from minDelayMs to ${MAX_DELAY_MS}`,
    }),
  },
  { additionalProperties: false, description: 'retries of each step, with a backoff between the delays; absent: none' },
)

/** The body of POST, and of PUT, which replaces the whole chain. */
export const ChainBody = t.Object(
  {
    name: t.String({ minLength: 1, maxLength: 200, error: 'name must be 1 to 200 characters, not all white space' }),
    match: t.Object(
      {
        model: modelName(
          'match.model',
          "the model name a call gives to be served by this chain's steps; may be a real model's name, which the chain then takes over",
        ),
      },
      { additionalProperties: false, error: 'match must be {"model": ...}' },
    ),
    steps: t.Array(Step, {
      minItems: 1,
      maxItems: MAX_STEPS,
      description: 'the models tried in turn',
      error: `steps must be 1 to ${MAX_STEPS} steps, each {"model", "provider"?, "providerKeyId"?, "timeoutMs"?}`,
    }),
    on: t.Optional(Triggers),
    retry: t.Optional(Retry),
  },
  { additionalProperties: false },
)
export type ChainInput = typeof ChainBody.static

export const ChainParams = t.Object({ chainId: t.String({ minLength: 1, maxLength: 64 }) })

export const Chain = t.Object({
  id: t.String(),
  name: t.String(),
  match: t.Object({ model: t.String() }),
  steps: t.Array(
    t.Object({
      model: t.String(),
      provider: t.Optional(t.String()),
      providerKeyId: t.Optional(t.String()),
      timeoutMs: t.Optional(t.Integer()),
    }),
  ),
  on: t.Object(
    {
      statusCodes: t.Array(t.Integer(), {
        description: 'as given; when none were, the defaults (any other 5xx moves on too)',
      }),
      defaultStatusCodes: t.Boolean({
        description: 'true when the chain names no statuses and follows the defaults, which may change with gw',
      }),
      timeout: t.Boolean(),
      networkError: t.Boolean(),
    },
    { description: 'when the chain moves on, with the defaults filled in' },
  ),
  retry: t.Nullable(t.Object({ attempts: t.Integer(), minDelayMs: t.Integer(), maxDelayMs: t.Integer() })),
  createdAt: t.String({ format: 'date-time' }),
  updatedAt: t.String({ format: 'date-time' }),
})

/** A call a chain served, or that failed on every step, as the chain's page shows it. */
export const ChainCall = t.Object({
  requestId: t.String(),
  createdAt: t.String({ format: 'date-time' }),
  status: t.Union([t.Literal('success'), t.Literal('error')]),
  httpStatus: t.Integer(),
  provider: t.String(),
  model: t.String(),
  servedBy: t.Nullable(
    t.Integer({
      description: "The step (from 0) whose model served the call; null when none did, or the step's model was changed since",
    }),
  ),
  attempts: t.Integer({ description: 'Provider calls the request made' }),
  cached: t.Boolean(),
  latencyMs: t.Nullable(t.Integer()),
})
